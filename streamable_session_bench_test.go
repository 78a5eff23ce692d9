package jsonrpc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// BenchmarkStreamableSession: a call in a Streamable HTTP session (a POST
// with its Mcp-Session-Id, answered with JSON), over loopback, one at a
// time: the cost of a session's request, whose look-up is a map read
// without a SessionStore.
//
//	go test -run '^$' -bench 'StreamableSession' -count 6 . | benchstat -
func BenchmarkStreamableSession(b *testing.B) {
	benchSession(b, jsonrpc.StreamableHTTPOptions{Sessions: true})
}

// benchSession times calls in one session of a handler with opts.
func benchSession(b *testing.B, opts jsonrpc.StreamableHTTPOptions) {
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
