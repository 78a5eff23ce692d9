package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/state"
)

// sharedInstance is one instance of a Streamable HTTP server keeping its
// sessions and events in the stores all instances share; its "slow"
// handler notifies "one", waits for release, notifies "two" and "three"
// and answers "done" (or its context's error); "push" sends three
// notifications on the session's connection (the GET stream).
func sharedInstance(t *testing.T, events state.EventStore, sessions state.SessionStore, release <-chan struct{}, finished chan<- error) string {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]any, error) {
		return map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "serverInfo": map[string]any{"name": "t", "version": "1"}}, nil
	})
	jsonrpc.Register(mux, "push", func(ctx context.Context, _ struct{}) (bool, error) {
		c := jsonrpc.SessionConn(ctx)
		for i := range 3 {
			if err := c.Notify(ctx, "n", []int{i}); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		err := c.Notify(ctx, "note", []string{"one"})
		if err == nil {
			select {
			case <-release:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		for _, n := range []string{"two", "three"} {
			if err == nil {
				err = c.Notify(ctx, "note", []string{n})
			}
		}
		finished <- err
		return "done", err
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, EventStore: events, SessionStore: sessions, KeepAlive: 200 * time.Millisecond,
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// sharedRequest makes a request of a client of the 2025-11-25 revision in session.
func sharedRequest(t *testing.T, method, url, session, body string) *http.Request {
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return req
}

// cutAfterOne initializes a session on instance a, POSTs "slow" there and
// reads its event stream up to the notification "one", then closes the
// response (the client's connection cut). It returns the session and the
// id of the last event read.
func cutAfterOne(t *testing.T, a string) (session, lastID string) {
	t.Helper()
	session = sharedInit(t, a)
	resp, err := http.DefaultClient.Do(sharedRequest(t, http.MethodPost, a, session, `{"jsonrpc":"2.0","id":7,"method":"slow"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("the POST's stream ended before note one: %v", err)
		}
		if strings.Contains(string(ev.Data), `"one"`) {
			return session, r.LastID
		}
	}
}

// sharedInit initializes a session on instance a.
func sharedInit(t *testing.T, a string) (session string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(sharedRequest(t, http.MethodPost, a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	session = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	return session
}

// readResumed reads the messages of a resumed stream until it ends (within
// 10 s), with their ids.
func readResumed(t *testing.T, resp *http.Response) (ids, msgs []string) {
	t.Helper()
	defer resp.Body.Close()
	timer := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if err != nil {
			return ids, msgs
		}
		if len(ev.Data) > 0 {
			ids, msgs = append(ids, r.LastID), append(msgs, string(ev.Data))
		}
	}
}

// TestStreamableHTTPResumeOtherInstance: a POST's stream on instance A is
// cut after its first event; GET with Last-Event-ID on instance B (the
// sessions and events in stores both share) replays what A stored after
// it, then the events A's handler goes on producing, up to the response,
// each once; the call was not cancelled on A.
func TestStreamableHTTPResumeOtherInstance(t *testing.T) {
	events := state.NewMemoryEventStore(state.Limits{}, nil)
	sessions := state.NewMemorySessionStore(nil)
	release := make(chan struct{})
	finished := make(chan error, 2)
	a := sharedInstance(t, events, sessions, release, finished)
	b := sharedInstance(t, events, sessions, release, finished)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the servers close: A's call ends
	session, last := cutAfterOne(t, a)
	stream, lastSeq, ok := sse.ParseEventID(last)
	if !ok || stream == 0 {
		t.Fatalf("the POST's event id %q", last)
	}

	get := sharedRequest(t, http.MethodGet, b, session, "")
	get.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(get)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET on B: %v %v", resp.Status, err)
	}
	time.AfterFunc(100*time.Millisecond, free) // B follows A's stream by now
	ids, msgs := readResumed(t, resp)
	want := []string{`"two"`, `"three"`, `"id":7,"result":"done"`}
	if len(msgs) != len(want) {
		t.Fatalf("B wrote %q; want two, three and the response, once each", msgs)
	}
	prev := lastSeq
	for i, w := range want {
		st, seq, ok := sse.ParseEventID(ids[i])
		if !strings.Contains(msgs[i], w) || !ok || st != stream || seq <= prev {
			t.Fatalf("event %d: %s %s; want %s, after %s", i, ids[i], msgs[i], w, last)
		}
		prev = seq
	}
	if err := <-finished; err != nil {
		t.Fatalf("the call on A: %v; want it served on after the cut", err)
	}
	// Resumed again on A after the last event: the stream has ended (204).
	get = sharedRequest(t, http.MethodGet, a, session, "")
	get.Header.Set("Last-Event-ID", ids[len(ids)-1])
	if resp, err := http.DefaultClient.Do(get); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("GET on A after the last event: %v %v; want 204", resp.Status, err)
	}
}

// cutOffStore is an instance's view of a shared store that it can lose
// (what the other instances see of an instance killed).
type cutOffStore struct {
	state.EventStore
	off atomic.Bool
}

func (s *cutOffStore) Append(ctx context.Context, stream string, data []byte) (uint64, error) {
	if s.off.Load() {
		return 0, errors.New("cut off")
	}
	return s.EventStore.Append(ctx, stream, data)
}

// TestStreamableHTTPResumeInstanceGone: instance A stops storing anything
// (killed, or cut off from the store) while its call runs; the stream
// resumed on B replays what A stored, then, after three KeepAlives of
// silence, ends with a -32001 error for the call.
func TestStreamableHTTPResumeInstanceGone(t *testing.T) {
	events := state.NewMemoryEventStore(state.Limits{}, nil)
	sessions := state.NewMemorySessionStore(nil)
	release := make(chan struct{})
	finished := make(chan error, 2)
	aStore := &cutOffStore{EventStore: events}
	a := sharedInstance(t, aStore, sessions, release, finished)
	b := sharedInstance(t, events, sessions, release, finished)
	t.Cleanup(func() { close(release) }) // before the servers close: A's call ends
	session, last := cutAfterOne(t, a)
	aStore.off.Store(true)

	start := time.Now()
	get := sharedRequest(t, http.MethodGet, b, session, "")
	get.Header.Set("Last-Event-ID", last)
	resp, err := http.DefaultClient.Do(get)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET on B: %v %v", resp.Status, err)
	}
	_, msgs := readResumed(t, resp)
	took := time.Since(start)
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"jsonrpc: the instance serving this call fell silent`) {
		t.Fatalf("B wrote %q; want one -32001 error for id 7", msgs)
	}
	if took < 600*time.Millisecond || took > 5*time.Second {
		t.Fatalf("the error came after %v; want three KeepAlives (600ms)", took)
	}
}

// TestStreamableHTTPResumeGETOtherInstance: the session's GET stream on A
// carries three notifications and is cut after the first; GET with
// Last-Event-ID on B replays the other two from the shared store.
func TestStreamableHTTPResumeGETOtherInstance(t *testing.T) {
	events := state.NewMemoryEventStore(state.Limits{}, nil)
	sessions := state.NewMemorySessionStore(nil)
	release := make(chan struct{})
	finished := make(chan error, 1)
	a := sharedInstance(t, events, sessions, release, finished)
	b := sharedInstance(t, events, sessions, release, finished)
	session := sharedInit(t, a)
	t.Cleanup(func() { // the session's connection, on A, ends with it
		req := sharedRequest(t, http.MethodDelete, a, session, "").WithContext(context.Background()) // t's is done by now
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	resp, err := http.DefaultClient.Do(sharedRequest(t, http.MethodPost, a, session, `{"jsonrpc":"2.0","id":1,"method":"push"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	first := func(url, last string) (*http.Response, *sse.Reader) {
		get := sharedRequest(t, http.MethodGet, url, session, "")
		if last != "" {
			get.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(get)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", url, resp.Status, err)
		}
		time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
		return resp, sse.NewReader(resp.Body, 1<<20)
	}
	next := func(r *sse.Reader) string {
		for {
			ev, err := r.Next()
			if err != nil {
				t.Fatalf("the GET stream ended: %v", err)
			}
			if len(ev.Data) > 0 {
				return string(ev.Data)
			}
		}
	}
	resp, r := first(a, "")
	if got := next(r); !strings.Contains(got, `"params":[0]`) {
		t.Fatalf("the GET stream on A: %s", got)
	}
	cut := r.LastID
	resp.Body.Close()
	resp, r = first(b, cut)
	defer resp.Body.Close()
	for i := 1; i < 3; i++ {
		if got := next(r); !strings.Contains(got, fmt.Sprintf(`"params":[%d]`, i)) {
			t.Fatalf("the GET stream resumed on B after %s: %s, want notification %d", cut, got, i)
		}
	}
}

// pinnedProxy sends a GET with Last-Event-ID (a resumption) to instance
// b and every other request to instance a, as a balancer without
// affinity may.
func pinnedProxy(t *testing.T, a, b string) string {
	var backends [2]*httputil.ReverseProxy
	for i, u := range []string{a, b} {
		target, _ := url.Parse(u)
		backends[i] = httputil.NewSingleHostReverseProxy(target)
		backends[i].FlushInterval = -1
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			backends[1].ServeHTTP(w, r)
			return
		}
		backends[0].ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// TestStreamableHTTPResumeClientOtherInstance: the library's client, its
// POST's connection cut after the first notification, resumes the stream
// on its own through a balancer that sends the resumption to the other
// instance: the call gets the rest of its notifications and its result;
// with the first instance cut off from the store mid-call, the call fails
// with -32001 from the other instance.
func TestStreamableHTTPResumeClientOtherInstance(t *testing.T) {
	t.Run("served", func(t *testing.T) {
		done, notes, free := cutClientCall(t)
		free()
		expectNote(t, notes, `note ["two"]`)
		expectNote(t, notes, `note ["three"]`)
		if err := <-done; err != nil {
			t.Fatalf("the call resumed on the other instance: %v", err)
		}
	})
	t.Run("gone", func(t *testing.T) {
		done, _, _ := cutClientCall(t)
		var e *jsonrpc.Error
		select {
		case err := <-done:
			if !errors.As(err, &e) || e.Code != -32001 || !strings.Contains(e.Message, "fell silent") {
				t.Fatalf("the call of an instance gone: %v; want -32001", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call of an instance gone did not end within 10s")
		}
	})
}

// cutClientCall starts two instances behind pinnedProxy and a client of
// it whose "slow" call's connection is cut after note one; by then A's
// view of the event store is cut off too when the subtest is "gone". It
// returns the call's outcome, the notifications and the release of the
// handlers.
func cutClientCall(t *testing.T) (<-chan error, <-chan string, func()) {
	events := state.NewMemoryEventStore(state.Limits{}, nil)
	sessions := state.NewMemorySessionStore(nil)
	release := make(chan struct{})
	finished := make(chan error, 4)
	aStore := &cutOffStore{EventStore: events}
	a := sharedInstance(t, aStore, sessions, release, finished)
	b := sharedInstance(t, events, sessions, release, finished)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	d := &cutDialer{}
	tr := &http.Transport{DialContext: d.dial}
	t.Cleanup(tr.CloseIdleConnections)
	notes := make(chan string, 16)
	ctx := t.Context()
	c, err := jsonrpc.DialStreamableHTTP(ctx, pinnedProxy(t, a, b), append(clientSide(notes), jsonrpc.WithHTTPClient(&http.Client{Transport: tr}))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{}}`), nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var s string
		err := c.Call(ctx, "slow", nil, &s)
		if err == nil && s != "done" {
			err = fmt.Errorf("result %q", s)
		}
		done <- err
	}()
	expectNote(t, notes, `note ["one"]`)
	if strings.HasSuffix(t.Name(), "/gone") {
		aStore.off.Store(true) // from now on nothing A writes is stored
	}
	if n := d.cut(`"method":"slow"`); n == 0 {
		t.Fatal("no connection carried the call")
	}
	return done, notes, free
}
