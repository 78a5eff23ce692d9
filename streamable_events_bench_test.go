package jsonrpc_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// BenchmarkStreamableSSEEvents measures a Streamable HTTP POST in a
// session answered with an event stream of 32 notifications and the
// response, end to end on loopback, with StreamableHTTPOptions.EventStore
// nil (each session's own store): the A/B that shows the option costs
// nothing unset. ns/event is ns/op over the 33 events.
func BenchmarkStreamableSSEEvents(b *testing.B) {
	const events = 32
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, struct{}) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "burst", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		for i := range events {
			if err := c.Notify(ctx, "progress", []int{i}); err != nil {
				return "", err
			}
		}
		return "ok", nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	b.Cleanup(hs.Close)
	var sink bytes.Buffer
	post := func(session, msg string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		sink.Reset()
		if _, err := io.Copy(&sink, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("POST: %s %v", resp.Status, err)
		}
		return resp
	}
	session := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`).Header.Get("Mcp-Session-Id")
	b.ReportAllocs()
	for b.Loop() {
		post(session, `{"jsonrpc":"2.0","id":1,"method":"burst"}`)
		if !bytes.Contains(sink.Bytes(), []byte(`"result":"ok"`)) {
			b.Fatalf("answer: %.200s", sink.Bytes())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(events+1)), "ns/event")
}
