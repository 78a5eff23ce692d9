package jsonrpc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// pollMux: "poll" closes its POST's event stream (CloseEventStream), tells
// the test whether it could (closed), waits for release, notifies "two"
// and answers "done".
func pollMux(closed chan<- bool, release <-chan struct{}) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "poll", func(ctx context.Context, _ struct{}) (string, error) {
		ok := jsonrpc.CloseEventStream(ctx)
		closed <- ok
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "note", []string{"two"}); err != nil && ok {
			return "", err
		}
		return "done", nil
	})
	return mux
}

// readBounded reads resp's body to its end, failing the test when that
// takes more than 5 s.
func readBounded(t *testing.T, resp *http.Response) string {
	t.Helper()
	stop := time.AfterFunc(5*time.Second, func() { resp.Body.Close() })
	defer stop.Stop()
	return readAll(t, resp)
}

// A handler closes its POST's event stream mid-call (MCP's SSE polling,
// SEP-1699): the POST's response ends after the priming event while the
// call goes on, and a GET with Last-Event-ID gets the rest, reply included.
func TestStreamableHTTPCloseEventStream(t *testing.T) {
	closed, release := make(chan bool, 1), make(chan struct{})
	srv := &jsonrpc.Server{Handler: pollMux(closed, release)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	t.Cleanup(c.end)

	resp := c.post(`{"jsonrpc":"2.0","id":"p","method":"poll"}`, bothAccept)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("POST: %d %q", resp.StatusCode, ct)
	}
	// The call waits for release: the response ends before its reply.
	if got := readBounded(t, resp); got != "id: 2-0\nretry: 1000\n\n" {
		t.Fatalf("POST stream: %q", got)
	}
	if !<-closed {
		t.Fatal("CloseEventStream reported false on a session's event stream")
	}
	close(release)
	want := "retry: 1000\n\n" +
		"id: 2-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":[\"two\"]}\n\n" +
		"id: 2-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":\"done\"}\n\n"
	r := c.get("Last-Event-ID: 2-0")
	if got := readBounded(t, r); r.StatusCode != 200 || got != want {
		t.Fatalf("resumed: %d %q, want %q", r.StatusCode, got, want)
	}
}

// Where nothing would resume, CloseEventStream does nothing and reports
// false: the call is answered as usual.
func TestStreamableHTTPCloseEventStreamRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   jsonrpc.StreamableHTTPOptions
		accept string
	}{
		{"stateless", jsonrpc.StreamableHTTPOptions{}, bothAccept},
		{"no event store", jsonrpc.StreamableHTTPOptions{Sessions: true, EventStoreSize: -1}, bothAccept},
		{"JSON client", jsonrpc.StreamableHTTPOptions{Sessions: true}, "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed, release := make(chan bool, 1), make(chan struct{})
			close(release)
			srv := &jsonrpc.Server{Handler: pollMux(closed, release)}
			tc.opts.KeepAlive = -1
			hs := httptest.NewServer(srv.StreamableHTTPHandler(tc.opts))
			t.Cleanup(hs.Close)
			c := &streamClient{t: t, url: hs.URL}
			if tc.opts.Sessions {
				c.initialize()
				t.Cleanup(c.end)
			}
			got := readBounded(t, c.post(`{"jsonrpc":"2.0","id":"p","method":"poll"}`, tc.accept))
			if !strings.Contains(got, `{"jsonrpc":"2.0","id":"p","result":"done"}`) {
				t.Fatalf("answer: %q", got)
			}
			if <-closed {
				t.Fatal("CloseEventStream reported true")
			}
		})
	}
}

// A handler may close its events' response more than once (SEP-1699): the
// second time, the GET that resumed them ends, and the next GET resumes.
func TestStreamableHTTPCloseEventStreamTwice(t *testing.T) {
	release1, release2 := make(chan struct{}), make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "poll", func(ctx context.Context, _ struct{}) (string, error) {
		first := jsonrpc.CloseEventStream(ctx)
		<-release1
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "note", []string{"two"}); err != nil {
			return "", err
		}
		second := jsonrpc.CloseEventStream(ctx)
		<-release2
		return fmt.Sprint(first, second), nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	t.Cleanup(c.end)

	if got := readBounded(t, c.post(`{"jsonrpc":"2.0","id":"p","method":"poll"}`, bothAccept)); got != "id: 2-0\nretry: 1000\n\n" {
		t.Fatalf("POST stream: %q", got)
	}
	r := c.get("Last-Event-ID: 2-0")
	stop := time.AfterFunc(5*time.Second, func() { r.Body.Close() })
	defer stop.Stop()
	f := newFrames(t, r.Body)
	if got := f.next(); got != "retry: 1000\n\n" {
		t.Fatalf("resumed: %q", got)
	}
	close(release1) // the GET is attached: the note goes there, then it ends
	if got := f.next(); got != "id: 2-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":[\"two\"]}\n\n" || !f.ended() {
		t.Fatalf("resumed, then closed: %q", got)
	}
	r.Body.Close()
	close(release2)
	want := "retry: 1000\n\nid: 2-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":\"true true\"}\n\n"
	if r := c.get("Last-Event-ID: 2-1"); readBounded(t, r) != want {
		t.Fatalf("resumed again: want %q", want)
	}
}

// With a shared event store the events of a closed response are resumed
// from the store as well.
func TestStreamableHTTPCloseEventStreamShared(t *testing.T) {
	closed, release := make(chan bool, 1), make(chan struct{})
	srv := &jsonrpc.Server{Handler: pollMux(closed, release)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1,
		EventStore: state.NewMemoryEventStore(state.Limits{}, nil)}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	t.Cleanup(c.end)
	got := readBounded(t, c.post(`{"jsonrpc":"2.0","id":"p","method":"poll"}`, bothAccept))
	id, _, ok := strings.Cut(strings.TrimPrefix(got, "id: "), "\n")
	if !ok || !strings.HasPrefix(got, "id: ") || !strings.HasSuffix(got, "retry: 1000\n\n") || !<-closed {
		t.Fatalf("POST stream: %q", got)
	}
	close(release)
	r := c.get("Last-Event-ID: " + id)
	if got := readBounded(t, r); r.StatusCode != 200 || !strings.Contains(got, `"method":"note","params":["two"]`) ||
		!strings.HasSuffix(got, "data: {\"jsonrpc\":\"2.0\",\"id\":\"p\",\"result\":\"done\"}\n\n") {
		t.Fatalf("resumed: %d %q", r.StatusCode, got)
	}
}
