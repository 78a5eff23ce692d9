package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// lazyPOST POSTs body to url as an MCP client does (it takes JSON and
// event streams) and returns the answer's Content-Type and body.
func lazyPOST(t *testing.T, url, session, body string) (contentType, answer string) {
	t.Helper()
	header := map[string]string{}
	if session != "" {
		header["Mcp-Session-Id"] = session
	}
	_, contentType, answer = atOncePOST(t, url, body, header)
	return contentType, answer
}

// lazyServer serves mux over Streamable HTTP (stateless) and returns the
// handler, to look at its routes.
func lazyServer(t *testing.T, srv *Server, opts StreamableHTTPOptions) (*streamableHandler, string) {
	h := srv.StreamableHTTPHandler(opts).(*streamableHandler)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return h, hs.URL
}

// A POST whose handler never reaches its client is served at once and
// answered with JSON: no connection is opened, and nothing is routed but,
// under a Convention, the POST itself (so that cancels find its requests),
// until it is answered.
func TestStreamableAtOnceOpensNothing(t *testing.T) {
	for _, cv := range []Convention{ConventionNone, ConventionMCP} {
		t.Run(fmt.Sprint(cv), func(t *testing.T) {
			var h *streamableHandler
			srv := &Server{Convention: cv}
			var conns, routes int
			mux := NewMux()
			mux.HandleFunc("plain", func(ctx context.Context, _ *Request) (any, error) {
				conns, routes = len(srv.life.Conns()), len(h.routes.All())
				return "ok", nil
			})
			srv.Handler = mux
			h, url := lazyServer(t, srv, StreamableHTTPOptions{})
			ct, got := lazyPOST(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"plain"}`)
			if ct != "application/json" || got != `{"jsonrpc":"2.0","id":1,"result":"ok"}` {
				t.Fatalf("answer: %s %q", ct, got)
			}
			wantRoutes := 0
			if cv != ConventionNone {
				wantRoutes = 1
			}
			if conns != 0 || routes != wantRoutes {
				t.Fatalf("while served: %d connections, %d routes; want 0, %d", conns, routes, wantRoutes)
			}
			if n := len(h.routes.All()); n != 0 {
				t.Fatalf("%d routes left", n)
			}
		})
	}
}

// A handler served at once that notifies its client opens the POST's
// connection: the answer becomes an event stream whose last event is the
// reply (a batch's, with an element that sent nothing), and the
// connection and its route go with the POST.
func TestStreamableAtOnceOpensOnNotify(t *testing.T) {
	var h *streamableHandler
	srv := &Server{}
	var conns, routes int
	mux := NewMux()
	mux.HandleFunc("plain", func(context.Context, *Request) (any, error) { return "ok", nil })
	mux.HandleFunc("note", func(ctx context.Context, _ *Request) (any, error) {
		if err := ConnFromContext(ctx).Notify(ctx, "n", []int{1}); err != nil {
			return nil, err
		}
		conns, routes = len(srv.life.Conns()), len(h.routes.All())
		return "noted", nil
	})
	srv.Handler = mux
	h, url := lazyServer(t, srv, StreamableHTTPOptions{KeepAlive: -1})
	ct, got := lazyPOST(t, url, "", `[{"jsonrpc":"2.0","id":1,"method":"note"},{"jsonrpc":"2.0","id":2,"method":"plain"}]`)
	want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[1]}\n\n" +
		"event: message\ndata: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"noted\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"ok\"}]\n\n"
	if ct != "text/event-stream" || got != want {
		t.Fatalf("answer: %s\n%q\nwant\n%q", ct, got, want)
	}
	if conns != 1 || routes != 1 {
		t.Fatalf("once notified: %d connections, %d routes; want 1, 1", conns, routes)
	}
	if n, r := len(srv.life.Conns()), len(h.routes.All()); n != 0 || r != 0 {
		t.Fatalf("after the POST: %d connections, %d routes", n, r)
	}
}

// A cancel reaches a request served at once (here in a session that keeps
// no events): MCP leaves it unanswered (an event stream with no message),
// LSP answers -32800; no connection is opened for it.
func TestStreamableAtOnceCancel(t *testing.T) {
	for _, tc := range []struct {
		cv         Convention
		cancel     string
		ct, answer string
	}{
		{ConventionMCP, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`, "text/event-stream", "retry: 1000\n\n"},
		{ConventionLSP, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"w"}}`, "application/json", `{"jsonrpc":"2.0","id":"w","error":{"code":-32800,"message":"request cancelled"}}`},
	} {
		t.Run(fmt.Sprint(tc.cv), func(t *testing.T) {
			srv := &Server{Convention: tc.cv}
			started, conns := make(chan struct{}), make(chan int, 1)
			mux := NewMux()
			mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
			mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
				close(started)
				<-ctx.Done()
				conns <- len(srv.life.Conns())
				return nil, ctx.Err()
			})
			srv.Handler = mux
			hs := httptest.NewServer(srv.StreamableHTTPHandler(StreamableHTTPOptions{Sessions: true, EventStoreSize: -1, KeepAlive: -1}))
			t.Cleanup(hs.Close)
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			session := resp.Header.Get("Mcp-Session-Id")

			type answer struct{ ct, body string }
			answers := make(chan answer, 1)
			go func() {
				ct, body := lazyPOST(t, hs.URL, session, `{"jsonrpc":"2.0","id":"w","method":"wait"}`)
				answers <- answer{ct, body}
			}()
			<-started
			if ct, got := lazyPOST(t, hs.URL, session, tc.cancel); ct != "" || got != "" {
				t.Fatalf("the cancel's answer: %s %q", ct, got)
			}
			if a := <-answers; a.ct != tc.ct || a.body != tc.answer {
				t.Fatalf("the cancelled POST's answer: %s %q, want %s %q", a.ct, a.body, tc.ct, tc.answer)
			}
			if n := <-conns; n != 0 {
				t.Fatalf("%d connections opened", n)
			}
		})
	}
}

// The body of a POST answered at once to a client that takes event
// streams is not given back to the pool for the next POST, whether its
// handler opened the connection or not: a handler may hand its request on
// beyond the POST (an MCP task keeps its context), and what it kept stays
// as it was.
func TestStreamableAtOnceLendsBody(t *testing.T) {
	for _, notify := range []bool{false, true} {
		t.Run(fmt.Sprint("notify=", notify), func(t *testing.T) {
			var kept json.RawMessage
			mux := NewMux()
			mux.HandleFunc("keep", func(ctx context.Context, req *Request) (any, error) {
				kept = req.Params // aliases the POST's body
				if notify {
					return nil, ConnFromContext(ctx).Notify(ctx, "n", nil)
				}
				return "kept", nil
			})
			mux.HandleFunc("plain", func(context.Context, *Request) (any, error) { return "ok", nil })
			_, url := lazyServer(t, &Server{Handler: mux}, StreamableHTTPOptions{KeepAlive: -1})
			lazyPOST(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"keep","params":["aaaaaaaa"]}`)
			want := bytes.Clone(kept)
			for range 20 {
				lazyPOST(t, url, "", `{"jsonrpc":"2.0","id":2,"method":"plain","params":["bbbbbbbb"]}`)
			}
			if !bytes.Equal(kept, want) {
				t.Fatalf("the POST's body was reused: %s, was %s", kept, want)
			}
		})
	}
}

// A session that ends cancels its requests served at once, as it does
// those served on a POST's connection.
func TestStreamableAtOnceSessionEnd(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan error, 1)
	mux := NewMux()
	mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
	mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
		close(started)
		select {
		case <-ctx.Done():
			cancelled <- context.Cause(ctx)
		case <-time.After(10 * time.Second):
			cancelled <- errors.New("not cancelled within 10 s")
		}
		return nil, ctx.Err()
	})
	srv := &Server{Handler: mux, Convention: ConventionMCP}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(StreamableHTTPOptions{Sessions: true, EventStoreSize: -1, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	done := make(chan struct{})
	go func() {
		defer close(done)
		lazyPOST(t, hs.URL, session, `{"jsonrpc":"2.0","id":"w","method":"wait"}`)
	}()
	<-started
	del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	del.Header.Set("Mcp-Session-Id", session)
	if resp, err := http.DefaultClient.Do(del); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if err := <-cancelled; err != ErrClosed {
		t.Fatalf("the handler's context ended with %v", err)
	}
	<-done
}

// A handler served at once that opens its POST's connection just as
// Shutdown begins (Shutdown finds the connection idle and closes it before
// it begins: h.opening) reaches no client (ErrNoConnection), but its
// request, accepted, goes on uncancelled and is answered, as JSON, before
// Shutdown returns.
func TestStreamableAtOnceOpenRacesShutdown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cv       Convention
		sessions bool
	}{{"MCP", ConventionMCP, false}, {"session", ConventionNone, true}, {"none", ConventionNone, false}} {
		t.Run(tc.name, func(t *testing.T) {
			notified := make(chan error, 1)
			mux := NewMux()
			mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
			mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
				notified <- ConnFromContext(ctx).Notify(ctx, "n", nil)
				if err := context.Cause(ctx); err != nil {
					return nil, err
				}
				return "done", nil
			})
			srv := &Server{Handler: mux, Convention: tc.cv, ExposeInternalErrors: true}
			h, url := lazyServer(t, srv, StreamableHTTPOptions{Sessions: tc.sessions, EventStoreSize: -1, KeepAlive: -1})
			session := ""
			if tc.sessions {
				session = atOnceSession(t, url)
			}
			shut := make(chan error, 1)
			h.opening = func(c *Conn) {
				go func() { shut <- srv.Shutdown(context.Background()) }()
				<-c.Done() // Shutdown found it idle, and closed it
			}
			ct, got := lazyPOST(t, url, session, `{"jsonrpc":"2.0","id":1,"method":"wait"}`)
			if ct != "application/json" || got != `{"jsonrpc":"2.0","id":1,"result":"done"}` {
				t.Errorf("the answer: %s %q", ct, got)
			}
			if err := <-notified; err != ErrNoConnection {
				t.Errorf("Notify: %v, want ErrNoConnection", err)
			}
			if err := <-shut; err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}
