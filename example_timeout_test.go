package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A handler that runs past Server.HandlerTimeout is answered at the
// deadline with CodeRequestTimeout, and its context is cancelled.
func ExampleServer_handlerTimeout() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-time.After(time.Minute):
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	srv := &jsonrpc.Server{Handler: mux, HandlerTimeout: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	l, err := srv.Listen("tcp://127.0.0.1:0") // a set timeout holds on every transport
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	c, err := jsonrpc.Dial(context.Background(), l.URL)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var rpcErr *jsonrpc.Error
	if err := c.Call(context.Background(), "slow", nil, nil); errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code, rpcErr.Message)
	}
	// Output: -32002 request timed out
}

// A response larger than the client's limit fails its call at once.
func ExampleWithMaxMessageSize() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "big", func(_ context.Context, n int) ([]byte, error) { return make([]byte, n), nil })
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	c, err := jsonrpc.Dial(context.Background(), l.URL, jsonrpc.WithMaxMessageSize(1000))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	err = c.Call(context.Background(), "big", []int{2000}, nil)
	fmt.Println(errors.Is(err, jsonrpc.ErrMessageTooLarge))
	// Output: true
}
