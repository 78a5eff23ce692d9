package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A CallIter whose context ends while the server stalls in the middle of
// its response returns the context's error at once, after the elements
// read, on every client that decodes as the response arrives. On a
// stream (newline or Content-Length framing) the connection's reader
// reads the rest of the response off once it comes, and the connection
// serves the next call; a WebSocket is closed (a message cannot be
// skipped unread); over Streamable HTTP the request is abandoned.
func TestCallIterContextEndsMidResponse(t *testing.T) {
	head := func(id json.RawMessage) string { return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":[1,` }
	const rest = `2,3]}`
	for _, tc := range []struct {
		name   string
		goesOn bool
		serve  func(t *testing.T, gate chan struct{}) (string, []jsonrpc.DialOption)
	}{
		{"tcp lines", true, func(t *testing.T, gate chan struct{}) (string, []jsonrpc.DialOption) {
			l, url := listenLoopback(t, "tcp")
			rawLineServer(t, l, gate, func(id json.RawMessage, method string) []string {
				if method == "items" {
					return []string{head(id), rest + "\n"}
				}
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":[7]}` + "\n"}
			})
			return url, nil
		}},
		{"tcp Content-Length", true, func(t *testing.T, gate chan struct{}) (string, []jsonrpc.DialOption) {
			l, url := listenLoopback(t, "tcp")
			rawHeaderServer(t, l, gate, func(id json.RawMessage, method string) []string {
				if method == "items" {
					b := headerFramed(head(id)+rest, 0)
					return []string{b[:len(b)-len(rest)], rest}
				}
				return []string{headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":[7]}`, 0)}
			})
			return url, []jsonrpc.DialOption{jsonrpc.WithFraming(jsonrpc.FramingHeader)}
		}},
		{"ws", false, func(t *testing.T, gate chan struct{}) (string, []jsonrpc.DialOption) {
			return rawWSServerGated(t, gate, func(id json.RawMessage, method string) []string {
				// White space fills the socket's write buffer: the head
				// goes out as a frame before the wait.
				return []string{head(id) + strings.Repeat(" ", 16<<10), rest}
			}), nil
		}},
		{"streamable", true, func(t *testing.T, gate chan struct{}) (string, []jsonrpc.DialOption) {
			return rawStreamableServer(t, false, gate, func(id json.RawMessage, method string) []string {
				if method == "items" {
					return []string{head(id), rest}
				}
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":[7]}`}
			}), []jsonrpc.DialOption{jsonrpc.WithStreamableHTTP()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := make(chan struct{})
			url, opts := tc.serve(t, gate)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := jsonrpc.Dial(ctx, url, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			callCtx, cancelCall := context.WithCancel(ctx)
			var got []int
			var last error
			start := time.Now()
			for v, err := range jsonrpc.CallIter[int](callCtx, c, "items", nil) {
				if err != nil {
					last = err
					break
				}
				if got = append(got, v); len(got) == 1 {
					time.AfterFunc(50*time.Millisecond, cancelCall) // while the next read waits
				}
			}
			cancelCall()
			if !errors.Is(last, context.Canceled) || len(got) != 1 {
				t.Fatalf("got %v, then %v; want [1], then context.Canceled", got, last)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Fatalf("the call returned after %v", d)
			}
			close(gate)
			if !tc.goesOn {
				return
			}
			var after []int
			if err := c.Call(ctx, "next", nil, &after); err != nil || len(after) != 1 || after[0] != 7 {
				t.Fatalf("the call after: %v %v", after, err)
			}
		})
	}
}
