package jsonrpc_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// Every transport tells the handler who called: the transport, the remote
// address, and on HTTP and WebSocket the request's (handshake's) headers.
func TestPeerTransportAndHeader(t *testing.T) {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("peer", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p, ok := jsonrpc.PeerFromContext(ctx)
		if !ok {
			return nil, jsonrpc.Errorf(1, "no peer")
		}
		// A WebSocket keeps the handshake's headers but those that served
		// only the upgrade.
		upgrade := p.Header.Get("Sec-WebSocket-Key") + p.Header.Get("Upgrade") + p.Header.Get("Connection")
		return []string{p.Transport, strings.Split(p.RemoteAddr, ":")[0], p.Header.Get("X-Test"), upgrade}, nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	defer srv.Shutdown(context.Background())
	for _, tc := range []struct{ scheme, header string }{{"tcp", ""}, {"http", "h1"}, {"ws", "w1"}} {
		l, err := srv.Listen(tc.scheme + "://127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c, err := jsonrpc.Dial(context.Background(), l.URL, jsonrpc.WithHeader("X-Test", tc.header))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := c.Call(context.Background(), "peer", nil, &got); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if want := []string{tc.scheme, "127.0.0.1", tc.header, ""}; strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: peer %q, want %q", tc.scheme, got, want)
		}
	}
	if _, ok := jsonrpc.PeerFromContext(context.Background()); ok {
		t.Error("a peer outside a handler")
	}
}

// Server.Middleware sees requests for methods the Mux does not have; Mux.Use
// middleware does not.
func TestServerMiddlewareSeesUnknownMethods(t *testing.T) {
	var seen []string
	record := func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			v, err := next.ServeRPC(ctx, req)
			seen = append(seen, req.Method+":"+strconv.FormatInt(jsonrpc.CodeOf(err), 10))
			return v, err
		})
	}
	mux := jsonrpc.NewMux()
	mux.HandleFunc("known", func(ctx context.Context, req *jsonrpc.Request) (any, error) { return 1, nil })
	srv := &jsonrpc.Server{Handler: mux, Middleware: []jsonrpc.Middleware{record}}
	a, b := net.Pipe()
	sc := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	defer sc.Close()
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	defer c.Close()
	c.Call(context.Background(), "known", nil, nil)
	c.Call(context.Background(), "unknown", nil, nil)
	if got := strings.Join(seen, " "); got != "known:0 unknown:-32601" {
		t.Errorf("middleware saw %q", got)
	}
}

// LogCalls logs one record per call; put it in Server.Middleware.
func ExampleLogCalls() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == "time" || a.Key == "duration" || a.Key == "remote" {
				return slog.Attr{} // vary from run to run
			}
			return a
		},
	}))
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p SubParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	srv := &jsonrpc.Server{Handler: mux, Middleware: []jsonrpc.Middleware{jsonrpc.LogCalls(logger, nil)}}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	c, err := jsonrpc.Dial(context.Background(), l.URL)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	c.Call(context.Background(), "subtract", []int{42, 23}, nil)
	c.Call(context.Background(), "divide", []int{42, 23}, nil)
	// Output:
	// level=INFO msg=call method=subtract id=1 outcome=ok transport=tcp
	// level=WARN msg=call method=divide id=2 outcome=error code=-32601 error="method not found: divide" transport=tcp
}

// ContextWithHeader sends headers with one call over HTTP; the handler
// finds them in its Peer.
func ExampleContextWithHeader() {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("whoami", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p, _ := jsonrpc.PeerFromContext(ctx)
		return p.Transport + " " + p.Header.Get("X-Request-Id"), nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("http://127.0.0.1:0/")
	if err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	c, err := jsonrpc.Dial(context.Background(), l.URL)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx := jsonrpc.ContextWithHeader(context.Background(), http.Header{"X-Request-Id": {"req-42"}})
	var got string
	c.Call(ctx, "whoami", nil, &got)
	fmt.Println(got)
	// Output: http req-42
}
