package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// rawHeaderServer is rawLineServer with Content-Length framing: it
// reads requests so framed (its answers are framed by reply).
func rawHeaderServer(t *testing.T, l net.Listener, gate <-chan struct{}, reply func(id json.RawMessage, method string) []string) {
	t.Helper()
	rawServer(l, gate, func(br *bufio.Reader) ([]byte, error) {
		msg, err := readHeaderFramed(br) // refresh_test.go
		return []byte(msg), err
	}, reply)
}

// headerFramed frames body with a Content-Length of its length plus lie.
func headerFramed(body string, lie int) string {
	return "Content-Length: " + strconv.Itoa(len(body)+lie) + "\r\n\r\n" + body
}

// With Content-Length framing (LSP), CallIter reads the response's body as
// it arrives: the server sends the rest of the array only once the loop
// has had the first element (a client that read the body whole would wait
// forever), and the connection serves the next call after it.
func TestCallIterHeaderIncremental(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, url := listenLoopback(t, "tcp")
	gate := make(chan struct{})
	rawHeaderServer(t, l, gate, func(id json.RawMessage, method string) []string {
		if method == "items" {
			b := headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":[1,2,3]}`, 0)
			cut := strings.Index(b, "2,")
			return []string{b[:cut], b[cut:]}
		}
		return []string{headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":"after"}`, 0), ""}
	})
	c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithFraming(jsonrpc.FramingHeader))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkIncremental(t, ctx, c, gate)
}

// With Content-Length framing, CallIter meets the hostile responses of
// TestCallIterConnHostile as newline framing does (an element over the
// limit, the result before the id, a loop broken off, an error response,
// a result many times the limit read whole) and the connection serves the
// next call after each; a Call whose response is over the limit fails it.
func TestCallIterHeaderHostile(t *testing.T) {
	const limit = 64 << 10
	bodies := hostileBodies(limit)
	l, url := listenLoopback(t, "tcp")
	rawHeaderServer(t, l, nil, func(id json.RawMessage, method string) []string {
		b := headerFramed(strings.Replace(bodies[method], "ID", string(id), 1), 0)
		return []string{b[:len(b)/2], b[len(b)/2:]}
	})
	checkCallIterHostile(t, url, limit, jsonrpc.WithFraming(jsonrpc.FramingHeader))
}

// A Content-Length that lies: a length longer than the body (the
// connection then ends) fails the call with ErrInvalidResponse after the
// body's elements; a length shorter than the body cuts the result short
// (ErrInvalidResponse) and, the rest of the body read as the next header
// section, ends the connection; a body the connection ends in the middle
// of fails the call the same way. No case yields a wrong element: a
// prefix of the elements, then the error, and the connection is not used
// again.
func TestCallIterHeaderLies(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  func(id json.RawMessage) []string
	}{
		{"length too long, then the end", func(id json.RawMessage) []string {
			return []string{headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":[1,2,3]}`, 1000), "<close>"}
		}},
		{"length too short", func(id json.RawMessage) []string {
			return []string{headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":[1,2,3]}`, -4), "\r\n\r\n"}
		}},
		{"ends mid-element", func(id json.RawMessage) []string {
			b := headerFramed(`{"jsonrpc":"2.0","id":`+string(id)+`,"result":[1,2,"abcdef"]}`, 0)
			return []string{b[:len(b)-8], "<close>"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			l, url := listenLoopback(t, "tcp")
			rawHeaderServer(t, l, nil, func(id json.RawMessage, method string) []string {
				if method != "items" {
					return nil
				}
				return tc.msg(id)
			})
			c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithFraming(jsonrpc.FramingHeader), jsonrpc.WithMaxMessageSize(16))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var got []int
			var last error
			for v, err := range jsonrpc.CallIter[int](ctx, c, "items", nil) {
				if err != nil {
					last = err
					break
				}
				got = append(got, v)
			}
			if !errors.Is(last, jsonrpc.ErrInvalidResponse) || !slices.Equal(got, []int{1, 2, 3}[:len(got)]) {
				t.Fatalf("got %v, then %v; want a prefix of [1 2 3], then ErrInvalidResponse", got, last)
			}
			if err := c.Call(ctx, "next", nil, nil); err == nil {
				t.Fatal("the connection went on after a lie in the framing")
			}
		})
	}
}
