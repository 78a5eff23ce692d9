package jsonrpc_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// Calling back from a handler on plain HTTP used to be a nil *Conn and a
// panic (the caller saw -32603): now the call fails with ErrNoConnection.
func TestConnFromContextOnPlainHTTPFailsWithErrNoConnection(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "callback", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		callErr := c.Call(ctx, "x", nil, nil)
		notifyErr := c.Notify(ctx, "x", nil)
		var b jsonrpc.Batch
		b.Notify("x", nil)
		batchErr := c.Batch(ctx, &b)
		for _, err := range []error{callErr, notifyErr, batchErr, c.Err()} {
			if !errors.Is(err, jsonrpc.ErrNoConnection) {
				return "", err
			}
		}
		select {
		case <-c.Done():
		default:
			return "", errors.New("Done is open")
		}
		return "no connection", nil
	})
	hs := httptest.NewServer(&jsonrpc.Server{Handler: mux, ExposeInternalErrors: true})
	defer hs.Close()
	c, err := jsonrpc.Dial(context.Background(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	if err := c.Call(context.Background(), "callback", nil, &got); err != nil || got != "no connection" {
		t.Fatalf("got %q, %v", got, err)
	}
	if err := jsonrpc.ConnFromContext(context.Background()).Notify(context.Background(), "x", nil); !errors.Is(err, jsonrpc.ErrNoConnection) {
		t.Fatalf("outside a handler: %v", err)
	}
}

// DialConn gives the *Conn itself on stream transports (no type assertion),
// Streamable HTTP on http://, and ErrNoConnection for a client that is not
// a connection.
func TestDialConn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "ping", func(context.Context, struct{}) (string, error) { return "pong", nil })
	srv := &jsonrpc.Server{Handler: mux}
	defer srv.Shutdown(ctx)
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	for _, u := range []string{l.URL, hs.URL} {
		c, err := jsonrpc.DialConn(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var got string
		if err := c.Call(ctx, "ping", nil, &got); err != nil || got != "pong" {
			t.Fatalf("%s: got %q, %v", u, got, err)
		}
		c.Close()
	}

	registerVocabMessage.Do(func() { // once per process: -count=N runs the test N times
		jsonrpc.RegisterTransport("vocab-message", func(_ context.Context, _ *url.URL, _ jsonrpc.DialSettings) (jsonrpc.Client, error) {
			return jsonrpc.NewMessageClient(func(ctx context.Context, msg []byte, _ bool) ([]byte, error) { return nil, errors.New("not sent") }), nil
		}, nil)
	})
	if _, err := jsonrpc.DialConn(ctx, "vocab-message://x"); !errors.Is(err, jsonrpc.ErrNoConnection) {
		t.Fatalf("a message client: %v", err)
	}
}

// WithConvention and WithProgress used to be ignored beside the handler
// option (WithServer's Server had its own fields): with WithHandler they
// hold, so a call whose context ends cancels the server's handler.
func TestWithConventionBesideWithHandler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cancelled := make(chan struct{})
	started := make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "wait", func(ctx context.Context, _ struct{}) (bool, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return false, ctx.Err()
	})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	defer srv.Shutdown(ctx)
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := jsonrpc.DialConn(ctx, l.URL, jsonrpc.WithHandler(jsonrpc.NewMux()), jsonrpc.WithConvention(jsonrpc.ConventionMCP))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cctx, stop := context.WithCancel(ctx)
	go func() { <-started; stop() }()
	if err := c.Call(cctx, "wait", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v", err)
	}
	select {
	case <-cancelled:
	case <-ctx.Done():
		t.Fatal("the server's handler was not cancelled: WithConvention was ignored beside WithHandler")
	}
}

// A registered transport whose client is a connection starts it with
// DialSettings.NewConn, so that every DialOption holds as on the built-in
// schemes: the peer's call back reaches WithHandler's handler, and
// WithMaxMessageSize bounds the responses read.
func TestRegisteredStreamTransportHonoursDialOptions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	registerVocabStream.Do(func() {
		jsonrpc.RegisterTransport("vocab-stream", func(ctx context.Context, u *url.URL, set jsonrpc.DialSettings) (jsonrpc.Client, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return nil, err
			}
			return set.NewConn(jsonrpc.NewStream(nc, jsonrpc.StreamOptions{})), nil
		}, nil)
	})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "callback", func(ctx context.Context, _ struct{}) (string, error) {
		var s string
		err := jsonrpc.ConnFromContext(ctx).Call(ctx, "hello", nil, &s)
		return s, err
	})
	jsonrpc.Register(mux, "big", func(context.Context, struct{}) (string, error) { return strings.Repeat("x", 1000), nil })
	srv := &jsonrpc.Server{Handler: mux}
	defer srv.Shutdown(ctx)
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client := jsonrpc.NewMux()
	jsonrpc.Register(client, "hello", func(context.Context, struct{}) (string, error) { return "hi", nil })
	c, err := jsonrpc.DialConn(ctx, "vocab-stream://"+strings.TrimPrefix(l.URL, "tcp://"), jsonrpc.WithHandler(client), jsonrpc.WithMaxMessageSize(512))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	if err := c.Call(ctx, "callback", nil, &got); err != nil || got != "hi" {
		t.Fatalf("callback: %q, %v", got, err)
	}
	if err := c.Call(ctx, "big", nil, &got); !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("a response over WithMaxMessageSize: %v", err)
	}
}

var registerVocabStream, registerVocabMessage sync.Once
