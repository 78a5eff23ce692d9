package streamable

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

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
	"github.com/seedhq/jsonrpc/state"
)

// sharedTable is a session table of an instance keeping its events in
// store, with a heartbeat every beat.
func sharedTable(store state.EventStore, beat time.Duration) *Sessions {
	cfg := testConfig()
	cfg.Enabled, cfg.Shared, cfg.KeepAlive, cfg.Retry = true, store, beat, 10*time.Millisecond
	return NewSessions(cfg)
}

// adopt gives table b the session s of another instance (what a shared
// session store does).
func adopt(b *Sessions, s *Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &Session{ID: s.ID, t: b, timer: time.AfterFunc(time.Hour, func() {})}
	b.m[s.ID] = c
}

// headOf is the head of the stream answering the call in msg.
func headOf(t *testing.T, msg string) []byte {
	var h []byte
	parse([]byte(msg), func(m *wire.Message) { h = Head([]byte(msg), &m.Elems[0], nil) })
	if h == nil {
		t.Fatalf("%s does not parse", msg)
	}
	return h
}

// resume GETs stream id's events after lastID from the instance at url.
func resume(t *testing.T, url, session, lastID string) (*http.Response, *sse.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	req.Header.Set("Accept", sse.ContentType)
	req.Header.Set(mcp.SessionHeader, session)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, sse.NewReader(resp.Body, 1<<20)
}

// events reads the messages of r until it ends (bounded by within).
func events(t *testing.T, r *sse.Reader, within time.Duration) (ids, msgs []string) {
	t.Helper()
	done := make(chan struct{})
	timer := time.AfterFunc(within, func() { close(done) })
	defer timer.Stop()
	for {
		ev, err := r.Next()
		if err != nil {
			select {
			case <-done:
				t.Fatalf("the stream did not end within %v: %v (got %q)", within, err, msgs)
			default:
			}
			return ids, msgs
		}
		if len(ev.Data) > 0 {
			ids, msgs = append(ids, r.LastID), append(msgs, string(ev.Data))
		}
	}
}

// A POST's stream written on instance A, cut after its first event, is
// resumed through instance B: B replays what A stored after the id, then
// follows what A goes on writing until its end; nothing twice. The same
// with a store that cannot Wait (B polls it).
func TestSharedFollow(t *testing.T) {
	t.Run("Follower", func(t *testing.T) { testSharedFollow(t, state.NewMemoryEventStore(state.Limits{}, nil)) })
	t.Run("poll", func(t *testing.T) {
		testSharedFollow(t, struct{ state.EventStore }{state.NewMemoryEventStore(state.Limits{}, nil)})
	})
}

func testSharedFollow(t *testing.T, store state.EventStore) {
	a, b := sharedTable(store, time.Second), sharedTable(store, time.Second)
	s := a.New()
	adopt(b, s)
	hs := httptest.NewServer(http.HandlerFunc(b.ServeGET))
	t.Cleanup(hs.Close)

	es := a.PostStream(s)
	es.Shared.Head = headOf(t, `{"jsonrpc":"2.0","id":7,"method":"slow"}`)
	rec := httptest.NewRecorder()
	es.Open(sse.NewOut(rec))
	es.Begin(nil, true)
	for _, m := range []string{"one", "two"} {
		if err := es.Send([]byte(`{"jsonrpc":"2.0","method":"note","params":["` + m + `"]}`)); err != nil {
			t.Fatal(err)
		}
	}
	first := sse.NewReader(strings.NewReader(rec.Body.String()), 1<<20)
	var cut string
	for {
		ev, err := first.Next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(ev.Data), "one") {
			cut = first.LastID
			break
		}
	}
	resp, r := resume(t, hs.URL, s.ID, cut)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume through B: %s", resp.Status)
	}
	go func() {
		time.Sleep(50 * time.Millisecond) // B follows by now
		es.Send([]byte(`{"jsonrpc":"2.0","method":"note","params":["three"]}`))
		es.Send([]byte(`{"jsonrpc":"2.0","id":7,"result":"done"}`))
		s.CloseStream(es)
	}()
	ids, msgs := events(t, r, 10*time.Second)
	want := []string{`"two"`, `"three"`, `"result":"done"`}
	if len(msgs) != len(want) {
		t.Fatalf("B wrote %q, want the events after %s: two, three, the response", msgs, cut)
	}
	for i, w := range want {
		if !strings.Contains(msgs[i], w) || !strings.HasPrefix(ids[i], fmt.Sprint(es.Num, "-")) {
			t.Fatalf("event %d: %s %s, want %s", i, ids[i], msgs[i], w)
		}
	}
	// The stream has ended: resuming after its last event is 204.
	if resp, _ := resume(t, hs.URL, s.ID, ids[len(ids)-1]); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("resuming an ended stream after its last event: %s", resp.Status)
	}
	if resp, _ := resume(t, hs.URL, s.ID, "12345-1"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("resuming a stream never written: %s", resp.Status)
	}
}

// The instance writing a POST's stream dies (its records stop, no end):
// B's follow ends the stream after three heartbeats of silence with a
// -32001 error for the call the stream had not answered.
func TestSharedFollowSilent(t *testing.T) {
	const beat = 100 * time.Millisecond
	store := state.NewMemoryEventStore(state.Limits{}, nil)
	b := sharedTable(store, beat)
	s := b.New()
	hs := httptest.NewServer(http.HandlerFunc(b.ServeGET))
	t.Cleanup(hs.Close)
	// What an instance that died stored: the head of a batch of two calls,
	// a notification, a response to one of them.
	name := s.ID + "/42"
	ctx := t.Context()
	msg := `[{"jsonrpc":"2.0","id":"a","method":"slow"},{"jsonrpc":"2.0","id":2,"method":"slow"}]`
	var h []byte
	parse([]byte(msg), func(m *wire.Message) { h = Head([]byte(msg), nil, m.Elems) })
	store.Append(ctx, name, append([]byte("\x00head"), h...))
	seq, _ := store.Append(ctx, name, []byte(`{"jsonrpc":"2.0","method":"note"}`))
	store.Append(ctx, name, []byte(`{"jsonrpc":"2.0","id":"a","result":1}`))

	start := time.Now()
	resp, r := resume(t, hs.URL, s.ID, fmt.Sprint("42-", seq))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %s", resp.Status)
	}
	_, msgs := events(t, r, 10*time.Second)
	took := time.Since(start)
	if len(msgs) != 2 || !strings.Contains(msgs[0], `"id":"a","result":1`) {
		t.Fatalf("events %q: want the stored response, then the errors", msgs)
	}
	if !strings.HasPrefix(msgs[1], `[{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"jsonrpc: the instance serving this call fell silent`) || strings.Contains(msgs[1], `"a"`) {
		t.Fatalf("the end of a silent stream: %s; want a batch with -32001 for id 2 only", msgs[1])
	}
	if took < 3*beat || took > 3*beat+5*time.Second {
		t.Fatalf("the silent stream ended after %v, want 3 beats (%v)", took, 3*beat)
	}
	// The errors are stored: a second resumption gets them once more after
	// the response, then 204 after them.
	_, again := events(t, func() *sse.Reader { _, r := resume(t, hs.URL, s.ID, fmt.Sprint("42-", seq)); return r }(), 5*time.Second)
	if len(again) != 2 || again[1] != msgs[1] {
		t.Fatalf("the stored end: %q", again)
	}
}

// errStore is a store that fails.
type errStore struct{}

var errDown = errors.New("store down")

func (errStore) Append(context.Context, string, []byte) (uint64, error) { return 0, errDown }
func (errStore) After(context.Context, string, uint64) ([]state.Event, bool, error) {
	return nil, false, errDown
}

// A store that fails: the resumption gets 503 naming the store's error at
// once, and an event is still written to the attached response (without
// an id); with no response attached, Send reports the store's error.
func TestSharedStoreDown(t *testing.T) {
	b := sharedTable(errStore{}, time.Second)
	s := b.New()
	hs := httptest.NewServer(http.HandlerFunc(b.ServeGET))
	t.Cleanup(hs.Close)
	resp, _ := resume(t, hs.URL, s.ID, "42-1")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "event store failed: store down") {
		t.Fatalf("resume with the store down: %s %s", resp.Status, body)
	}
	es := b.PostStream(s)
	rec := httptest.NewRecorder()
	es.Open(sse.NewOut(rec))
	es.Begin(nil, true)
	if err := es.Send([]byte(`{"jsonrpc":"2.0","method":"n"}`)); err != nil {
		t.Fatalf("Send to an attached response: %v", err)
	}
	if !strings.Contains(rec.Body.String(), "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}") || strings.Contains(rec.Body.String(), "id: "+fmt.Sprint(es.Num, "-1")) {
		t.Fatalf("written: %q", rec.Body.String())
	}
	s.CloseStream(es)
	es2 := b.PostStream(s)
	es2.Begin(nil, true) // no response attached
	if err := es2.Send([]byte(`{}`)); !errors.Is(err, errDown) {
		t.Fatalf("Send with no response and the store down: %v", err)
	}
}

// A POST's stream whose events after Last-Event-ID were evicted from the
// shared store cannot be resumed exactly: 410, as with a session's store.
func TestSharedFollowEvicted(t *testing.T) {
	store := state.NewMemoryEventStore(state.Limits{MaxEvents: 3}, nil)
	b := sharedTable(store, time.Second)
	s := b.New()
	hs := httptest.NewServer(http.HandlerFunc(b.ServeGET))
	t.Cleanup(hs.Close)
	name := s.ID + "/9"
	var seqs []uint64
	for _, d := range []string{"\x00head{\"ids\":[1]}", `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`, `{"jsonrpc":"2.0","method":"c"}`, `{"jsonrpc":"2.0","method":"d"}`} {
		seq, _ := store.Append(t.Context(), name, []byte(d))
		seqs = append(seqs, seq)
	}
	resp, _ := resume(t, hs.URL, s.ID, fmt.Sprint("9-", seqs[0]))
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusGone || !strings.Contains(string(body), "EventStore's Limits") {
		t.Fatalf("resuming after an evicted event: %s %s, want 410 naming the store's limits", resp.Status, body)
	}
	resp, r := resume(t, hs.URL, s.ID, fmt.Sprint("9-", seqs[2]))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resuming after a kept event: %s", resp.Status)
	}
	ev, err := r.Next()
	if err != nil || !strings.Contains(string(ev.Data), `"c"`) {
		t.Fatalf("first event after a kept one: %q %v", ev.Data, err)
	}
}
