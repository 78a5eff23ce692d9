package jsonrpc_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/seedhq/jsonrpc"
)

// A handler keeps the session's connection and notifies the client later,
// outside any request: over Streamable HTTP the message goes on the
// session's GET stream, which the client keeps open.
func ExampleSessionConn() {
	mux := jsonrpc.NewMux()
	later := make(chan *jsonrpc.Conn, 1)
	jsonrpc.Register(mux, "initialize", func(ctx context.Context, _ map[string]any) (string, error) {
		later <- jsonrpc.SessionConn(ctx) // outlives this request
		return "ready", nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	defer hs.Close()

	ctx := context.Background()
	got := make(chan string, 1)
	client := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		got <- req.Method + " " + string(req.Params)
		return nil, nil
	})
	c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL, jsonrpc.WithHandler(client))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close() // DELETE: the session and its connection end
	if err := c.Call(ctx, "initialize", nil, nil); err != nil {
		fmt.Println(err)
		return
	}

	// Later, outside any request.
	session := <-later
	if err := session.Notify(ctx, "news", []string{"hello"}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-got)
	// Output: news ["hello"]
}
