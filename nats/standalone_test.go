package nats_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/sse"
	jnats "github.com/seedhq/jsonrpc/nats"
)

// tellInstance is an instance on its own NATS connection, its sessions
// and events in JetStream; its "tell" handler hands the session's
// connection to conns and sends {"tag": T} on it as the notification
// "told" (the standalone GET stream).
func tellInstance(t *testing.T, ns *natsserver.Server, conns chan<- *jsonrpc.Conn) string {
	t.Helper()
	js := jsConn(t, ns)
	events, err := jnats.NewEventStore(t.Context(), js, jnats.EventStoreConfig{Stream: "TELL", Subject: "tell"})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := jnats.NewSessionStore(t.Context(), js, jnats.SessionStoreConfig{Bucket: "tell_sessions"})
	if err != nil {
		t.Fatal(err)
	}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
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
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL
}

// TestJetStreamStandaloneAcrossInstances: with the GET stream open on A,
// what the session's connection sends on B (in a handler serving a POST
// on B, and outside any request) reaches it through JetStream, once each,
// in the order sent, between A's own.
func TestJetStreamStandaloneAcrossInstances(t *testing.T) {
	ns := runJetStream(t)
	connsB := make(chan *jsonrpc.Conn, 1)
	a := tellInstance(t, ns, make(chan *jsonrpc.Conn, 1))
	b := tellInstance(t, ns, connsB)
	resp := resumeRequest(t, http.MethodPost, a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s", resp.Status)
	}
	t.Cleanup(func() { // the session ends on both (its connection on B with it)
		for _, url := range []string{a, b} {
			req, _ := http.NewRequest(http.MethodDelete, url, nil)
			req.Header.Set("Mcp-Session-Id", session)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
	get := resumeRequest(t, http.MethodGet, a, session, "")
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET on A: %s", get.Status)
	}
	time.AfterFunc(15*time.Second, func() { get.Body.Close() })
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
		resp := resumeRequest(t, http.MethodPost, url, session, `{"jsonrpc":"2.0","id":1,"method":"tell","params":{"tag":"`+tag+`"}}`)
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
