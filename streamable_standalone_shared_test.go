package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/state"
)

// standaloneInstance is an instance keeping its sessions and events in the
// shared stores; its "tell" handler sends {"tag": T} as the notification
// "told" on the session's connection (the standalone GET stream) and hands
// that connection to conns.
func standaloneInstance(t *testing.T, events state.EventStore, sessions state.SessionStore, conns chan<- *jsonrpc.Conn) string {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]any, error) {
		return map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "t", "version": "1"}}, nil
	})
	jsonrpc.Register(mux, "tell", func(ctx context.Context, p struct {
		Tag string `json:"tag"`
	}) (bool, error) {
		c := jsonrpc.SessionConn(ctx)
		select {
		case conns <- c:
		default:
		}
		return true, c.Notify(ctx, "told", []string{p.Tag})
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, EventStore: events, SessionStore: sessions, KeepAlive: 200 * time.Millisecond,
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestStreamableHTTPStandaloneAcrossInstances: with the GET stream open on
// instance A, what the session's connection sends on instance B (in a
// handler serving a POST on B, and outside any request) reaches it, once
// each, in the order sent, between A's own.
func TestStreamableHTTPStandaloneAcrossInstances(t *testing.T) {
	events := state.NewMemoryEventStore(state.Limits{}, nil)
	sessions := state.NewMemorySessionStore(nil)
	connsB := make(chan *jsonrpc.Conn, 1)
	a := standaloneInstance(t, events, sessions, make(chan *jsonrpc.Conn, 1))
	b := standaloneInstance(t, events, sessions, connsB)
	session := sharedInit(t, a)
	t.Cleanup(func() { // the session ends on both (its connection on B with it)
		for _, url := range []string{a, b} {
			req := sharedRequest(t, http.MethodDelete, url, session, "").WithContext(context.Background())
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
	get, err := http.DefaultClient.Do(sharedRequest(t, http.MethodGet, a, session, ""))
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET on A: %v %v", get.Status, err)
	}
	defer get.Body.Close()
	time.AfterFunc(10*time.Second, func() { get.Body.Close() })
	got := make(chan string, 16)
	go func() {
		defer close(got)
		r := sse.NewReader(get.Body, 1<<20)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 0 {
				got <- string(ev.Data)
			}
		}
	}()
	tell := func(url, tag string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(sharedRequest(t, http.MethodPost, url, session, `{"jsonrpc":"2.0","id":1,"method":"tell","params":{"tag":"`+tag+`"}}`))
		if err != nil {
			t.Fatalf("tell %s through %s: %v", tag, url, err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), `"result":true`) {
			t.Fatalf("tell %s through %s: %s %s", tag, url, resp.Status, body)
		}
	}
	tell(a, "a1")
	tell(b, "b1")
	connB := <-connsB
	if err := connB.Notify(t.Context(), "told", []string{"b2"}); err != nil { // outside any request
		t.Fatalf("notify on B outside a request: %v", err)
	}
	tell(a, "a2")
	if err := connB.Notify(t.Context(), "told", []string{"b3"}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"a1", "b1", "b2", "a2", "b3"} {
		select {
		case msg := <-got:
			if !strings.Contains(msg, fmt.Sprintf(`"params":[%q]`, tag)) {
				t.Fatalf("the GET stream on A: %s, want %s", msg, tag)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the GET stream on A: no %s within 5 s", tag)
		}
	}
	select {
	case msg, ok := <-got:
		if ok {
			t.Fatalf("the GET stream on A: %s after the last, sent once", msg)
		}
	case <-time.After(300 * time.Millisecond):
	}
}

// TestStreamableHTTPStandaloneStoreFails: a message sent on the session's
// connection while the shared store fails gets an error naming the store,
// within its 2 s bound, not a hang.
func TestStreamableHTTPStandaloneStoreFails(t *testing.T) {
	events := &cutOffStore{EventStore: state.NewMemoryEventStore(state.Limits{}, nil)}
	sessions := state.NewMemorySessionStore(nil)
	conns := make(chan *jsonrpc.Conn, 1)
	a := standaloneInstance(t, events, sessions, conns)
	session := sharedInit(t, a)
	t.Cleanup(func() {
		req := sharedRequest(t, http.MethodDelete, a, session, "").WithContext(context.Background())
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	resp, err := http.DefaultClient.Do(sharedRequest(t, http.MethodPost, a, session, `{"jsonrpc":"2.0","id":1,"method":"tell","params":{"tag":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := <-conns
	events.off.Store(true)
	start := time.Now()
	err = c.Notify(t.Context(), "told", []string{"lost"})
	if !errors.Is(err, sse.ErrStore) || !strings.Contains(err.Error(), "cut off") || time.Since(start) > 3*time.Second {
		t.Fatalf("notify with the store failing: %v after %v; want the store's error within 2 s", err, time.Since(start))
	}
}
