package nats_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// eventsPerPOST is the notifications a benchmarked POST's stream carries
// before its response.
const eventsPerPOST = 32

// BenchmarkStreamableEvents measures what an event of a Streamable HTTP
// POST's stream costs, end to end on loopback (a handler notifying
// eventsPerPOST times, then answering; the client reading the stream):
// with each session's own store (EventStoreNone: StreamableHTTPOptions.
// EventStore nil), in a shared state.MemoryEventStore, and in a JetStream
// one (file storage, one embedded server). ns/event is the time of a POST
// over its events and response.
func BenchmarkStreamableEvents(b *testing.B) {
	lim := state.Limits{MaxEvents: 100000}
	b.Run("none", func(b *testing.B) { benchStreamableEvents(b, nil) })
	b.Run("memory", func(b *testing.B) { benchStreamableEvents(b, state.NewMemoryEventStore(lim, nil)) })
	b.Run("jetstream", func(b *testing.B) {
		benchStreamableEvents(b, newEventStore(b, jsConn(b, runJetStream(b)), lim))
	})
}

func benchStreamableEvents(b *testing.B, store state.EventStore) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, struct{}) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "burst", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		for i := range eventsPerPOST {
			if err := c.Notify(ctx, "progress", []int{i}); err != nil {
				return "", err
			}
		}
		return "ok", nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, EventStore: store}))
	b.Cleanup(hs.Close)
	session := benchPOST(b, hs.URL, "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`, nil).Header.Get("Mcp-Session-Id")
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"burst"}`)
	var sink bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		resp := benchPOST(b, hs.URL, session, string(body), &sink)
		if resp.Header.Get("Content-Type") != "text/event-stream" || !bytes.Contains(sink.Bytes(), []byte(`"result":"ok"`)) {
			b.Fatalf("answer %s: %.200s", resp.Header.Get("Content-Type"), sink.Bytes())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(eventsPerPOST+1)), "ns/event")
}

// benchPOST POSTs msg in session and reads the whole answer into sink.
func benchPOST(b *testing.B, url, session, msg string, sink *bytes.Buffer) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
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
	if sink == nil {
		sink = new(bytes.Buffer)
	}
	sink.Reset()
	if _, err := io.Copy(sink, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST: %s %v", resp.Status, err)
	}
	return resp
}

// BenchmarkEventStoreWait measures what a follower pays per event it is
// woken for: an Append on one instance, then a Wait for it through
// another (it has come: Wait returns at once), in memory and on JetStream
// (two connections: Wait creates, pulls from and deletes a consumer).
func BenchmarkEventStoreWait(b *testing.B) {
	lim := state.Limits{MaxEvents: 10000}
	b.Run("memory", func(b *testing.B) {
		m := state.NewMemoryEventStore(lim, nil)
		benchWait(b, m, m)
	})
	b.Run("jetstream", func(b *testing.B) {
		ns := runJetStream(b)
		a := newEventStore(b, jsConn(b, ns), lim)
		storeSeq.Add(-1) // the same stream, through another connection
		benchWait(b, a, newEventStore(b, jsConn(b, ns), lim))
	})
}

func benchWait(b *testing.B, writer state.EventStore, follower state.Follower) {
	ctx := b.Context()
	data := make([]byte, 256)
	var last uint64
	b.ReportAllocs()
	for b.Loop() {
		seq, err := writer.Append(ctx, "follow", data)
		if err != nil {
			b.Fatal(err)
		}
		if err := follower.Wait(ctx, "follow", last); err != nil {
			b.Fatal(err)
		}
		last = seq
	}
}
