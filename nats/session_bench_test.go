package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// BenchmarkSessionLookup measures what a Streamable HTTP session's request
// costs to look up, side by side: get/* is the store's Get alone (what
// every request naming a session asks), request/* a call in a session
// (a POST with its Mcp-Session-Id, a JSON answer, over loopback, one at a
// time) without a store (a map read), with the memory store and with the
// JetStream store of an embedded nats-server, asked on every request or
// (stale1s) once a second (SessionStaleness).
//
//	go test -run '^$' -bench SessionLookup -count 6 ./nats/ | benchstat -
func BenchmarkSessionLookup(b *testing.B) {
	ns := runJetStream(b)
	stores := []struct {
		name  string
		store state.SessionStore
	}{
		{"none", nil},
		{"memory", state.NewMemorySessionStore(nil)},
		{"jetstream", newSessionStore(b, jsConn(b, ns), "bench_sessions")},
	}
	ctx := context.Background()
	for _, s := range stores[1:] {
		b.Run("get/"+s.name, func(b *testing.B) {
			id := fmt.Sprint("bench-", s.name, benchSeq.Add(1))
			if err := s.store.Create(ctx, state.Session{ID: id, ProtocolVersion: "2025-11-25",
				ClientCapabilities: json.RawMessage(`{"elicitation":{}}`), Expires: time.Now().Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.store.Get(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, s := range stores {
		b.Run("request/"+s.name, func(b *testing.B) {
			benchSessionRequests(b, jsonrpc.StreamableHTTPOptions{Sessions: true, SessionStore: s.store})
		})
	}
	b.Run("request/jetstream-stale1s", func(b *testing.B) {
		benchSessionRequests(b, jsonrpc.StreamableHTTPOptions{Sessions: true, SessionStore: stores[2].store, SessionStaleness: time.Second})
	})
}

// benchSessionRequests times calls in one session of a handler with opts.
func benchSessionRequests(b *testing.B, opts jsonrpc.StreamableHTTPOptions) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	jsonrpc.Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(opts))
	defer hs.Close()
	hc := hs.Client()
	defer hc.CloseIdleConnections()
	post := func(session, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := hc.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if err != nil || resp.Header.Get("Mcp-Session-Id") == "" {
		b.Fatal("initialize", err)
	}
	session := resp.Header.Get("Mcp-Session-Id")
	b.ReportAllocs()
	for b.Loop() {
		if resp, err := post(session, `{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}`); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status, err)
		}
	}
}
