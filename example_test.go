package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/seedhq/jsonrpc"
)

type SubParams struct {
	Minuend    float64 `json:"minuend"`
	Subtrahend float64 `json:"subtrahend"`
}

// A server and a client over TCP on loopback.
func Example() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p SubParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	ctx := context.Background()
	c, err := jsonrpc.Dial(ctx, l.URL)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	var byPosition, byName float64
	c.Call(ctx, "subtract", []int{42, 23}, &byPosition)
	c.Call(ctx, "subtract", map[string]int{"subtrahend": 23, "minuend": 42}, &byName)
	fmt.Println(byPosition, byName)

	err = c.Call(ctx, "divide", []int{1, 0}, nil)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code, rpcErr.Message)
	}
	// Output:
	// 19 19
	// -32601 method not found: divide
}

// Typed params: a struct takes an object by field name or an array by field
// order; mistakes are -32602 errors that name the field.
func ExampleRegister() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "greet", func(ctx context.Context, p struct {
		Name  string `json:"name"`
		Times *int   `json:"times"` // a pointer: optional
	}) (string, error) {
		n := 1
		if p.Times != nil {
			n = *p.Times
		}
		return strings.TrimSpace(strings.Repeat("hello "+p.Name+"! ", n)), nil
	})
	c := pipe(&jsonrpc.Server{Handler: mux})
	defer c.Close()
	ctx := context.Background()

	var s string
	c.Call(ctx, "greet", []any{"ada", 2}, &s)
	fmt.Println(s)
	err := c.Call(ctx, "greet", map[string]any{"name": 7}, &s)
	fmt.Println(err)
	// Output:
	// hello ada! hello ada!
	// jsonrpc: code -32602: invalid params: /name: expected string, got number (data: [{"path":"/name","problem":"expected string, got number"}])
}

// A handler can call back the peer that called it, on the same connection.
func ExampleConnFromContext() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "hello", func(ctx context.Context, _ []any) (string, error) {
		var name string
		if err := jsonrpc.ConnFromContext(ctx).Call(ctx, "whoami", nil, &name); err != nil {
			return "", err
		}
		return "hello " + name, nil
	})
	clientMux := jsonrpc.NewMux()
	jsonrpc.Register(clientMux, "whoami", func(ctx context.Context, _ []any) (string, error) {
		return "client", nil
	})

	a, b := net.Pipe()
	server := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: mux, MaxConcurrency: 1})
	defer server.Close()
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: clientMux})
	defer client.Close()

	var greeting string
	if err := client.Call(context.Background(), "hello", nil, &greeting); err != nil {
		panic(err)
	}
	fmt.Println(greeting)
	// Output: hello client
}

// Several calls and a notification in one message.
func ExampleBatch() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "sum", func(ctx context.Context, xs []float64) (float64, error) {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t, nil
	})
	jsonrpc.Register(mux, "log", func(ctx context.Context, _ []any) (any, error) { return nil, nil })
	c := pipe(&jsonrpc.Server{Handler: mux})
	defer c.Close()

	var b jsonrpc.Batch
	var s1, s2 float64
	b.Call("sum", []int{1, 2, 4}, &s1)
	b.Call("sum", []int{10, 20}, &s2)
	bad := b.Call("nope", nil, nil)
	b.Notify("log", []string{"batch sent"})
	if err := c.Batch(context.Background(), &b); err != nil {
		panic(err)
	}
	fmt.Println(s1, s2, bad.Err)
	// Output: 7 30 jsonrpc: code -32601: method not found: nope
}

// pipe serves srv on one end of an in-memory pipe and returns a client Conn
// on the other.
func pipe(srv *jsonrpc.Server) *jsonrpc.Conn {
	a, b := net.Pipe()
	jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	return jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
}
