package jsonrpc_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// cutDialer dials TCP connections that remember what their requests
// carried, so that a test can cut the one serving a given request.
type cutDialer struct {
	mu    sync.Mutex
	conns []*markedConn
}

type markedConn struct {
	net.Conn
	mu      sync.Mutex
	written []byte
}

func (c *markedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.written = append(c.written, b...)
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	mc := &markedConn{Conn: nc}
	d.mu.Lock()
	d.conns = append(d.conns, mc)
	d.mu.Unlock()
	return mc, nil
}

// cut closes the connections whose requests contained mark, and reports how many.
func (d *cutDialer) cut(mark string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, c := range d.conns {
		c.mu.Lock()
		hit := bytes.Contains(c.written, []byte(mark))
		c.mu.Unlock()
		if hit {
			c.Close()
			n++
		}
	}
	return n
}

// lastIDs records the Last-Event-ID of every GET.
type lastIDs struct {
	h   http.Handler
	mu  sync.Mutex
	ids []string
}

func (l *lastIDs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		l.mu.Lock()
		l.ids = append(l.ids, r.Header.Get("Last-Event-ID"))
		l.mu.Unlock()
	}
	l.h.ServeHTTP(w, r)
}

func (l *lastIDs) seen(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.ids, id)
}

// resumedPOST reports whether a GET resumed a POST's stream (not 0).
func (l *lastIDs) resumedPOST() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.ids, func(id string) bool { return id != "" && !strings.HasPrefix(id, "0-") })
}

func expectNote(t *testing.T, notes <-chan string, want string) {
	t.Helper()
	select {
	case n := <-notes:
		if n != want {
			t.Fatalf("notification %q, want %q", n, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("notification %q never arrived", want)
	}
}

// Our client and server end to end: the TCP connection of a POST's event
// stream is cut mid-call; the client resumes it with GET and Last-Event-ID
// and gets the rest and the response exactly once. Then the GET stream's
// connection is cut: its notifications arrive all, in order, once. The
// same with the events in a state.EventStore (EventStore).
func TestStreamableHTTPResumeEndToEnd(t *testing.T) {
	t.Run("session", func(t *testing.T) { testResumeEndToEnd(t, nil) })
	t.Run("EventStore", func(t *testing.T) { testResumeEndToEnd(t, state.NewMemoryEventStore(state.Limits{}, nil)) })
}

func testResumeEndToEnd(t *testing.T, store state.EventStore) {
	release := make(chan struct{})
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, release)}
	opts := jsonrpc.StreamableHTTPOptions{Sessions: true, RetryDelay: 50 * time.Millisecond}
	if store != nil {
		opts.EventStore = store
	}
	ids := &lastIDs{h: srv.StreamableHTTPHandler(opts)}
	hs := httptest.NewServer(ids)
	t.Cleanup(hs.Close)
	d := &cutDialer{}
	tr := &http.Transport{DialContext: d.dial}
	t.Cleanup(tr.CloseIdleConnections)
	notes := make(chan string, 64)
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, append(clientSide(notes), jsonrpc.WithHTTPClient(&http.Client{Transport: tr}))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Call(ctx, "initialize", nil, nil); err != nil {
		t.Fatal(err)
	}
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var s string
		err := c.Call(ctx, "slow", nil, &s)
		done <- result{s, err}
	}()
	expectNote(t, notes, `note ["one"]`)
	if n := d.cut(`"method":"slow"`); n != 1 {
		t.Fatalf("cut %d connections", n)
	}
	close(release)
	r := <-done
	if r.err != nil || r.s != "done" {
		t.Fatalf("the resumed call: %q %v", r.s, r.err)
	}
	expectNote(t, notes, `note ["two"]`)
	if store == nil && !ids.seen("2-1") || store != nil && !ids.resumedPOST() {
		t.Fatalf("no GET resumed the POST's stream: %q", ids.ids)
	}

	// The GET stream: a session connection's notifications, cut midway.
	if err := c.Call(ctx, "keep", nil, nil); err != nil {
		t.Fatal(err)
	}
	sc := <-conns
	deadline := time.Now().Add(10 * time.Second)
	for !ids.seen("") {
		if time.Now().After(deadline) {
			t.Fatal("the client never opened its GET stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		if err := sc.Notify(ctx, "n", []int{i}); err != nil {
			t.Fatal(err)
		}
		expectNote(t, notes, fmt.Sprintf("n [%d]", i))
	}
	if n := d.cut("GET "); n == 0 {
		t.Fatal("no GET connection to cut")
	}
	for i := 3; i < 6; i++ {
		if err := sc.Notify(ctx, "n", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 3; i < 6; i++ {
		expectNote(t, notes, fmt.Sprintf("n [%d]", i))
	}
	select {
	case n := <-notes:
		t.Fatalf("a notification twice: %q", n)
	case <-time.After(200 * time.Millisecond):
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if !slices.ContainsFunc(ids.ids, func(id string) bool { return strings.HasPrefix(id, "0-") }) {
		t.Fatalf("the GET stream was not resumed with Last-Event-ID: %q", ids.ids)
	}
}

// Subscriptions over Streamable HTTP with sessions: the subscription
// belongs to the session; its events come on the GET stream, whether the
// session keeps events (its POSTs served aside) or not (served at once).
func TestStreamableHTTPSubscription(t *testing.T) {
	for _, storeSize := range []int{0, -1} {
		t.Run(fmt.Sprintf("EventStoreSize=%d", storeSize), func(t *testing.T) { testStreamableHTTPSubscription(t, storeSize) })
	}
}

func testStreamableHTTPSubscription(t *testing.T, storeSize int) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "t"})
	jsonrpc.AddSubscription(subs, "count", func(ctx context.Context, p struct{ N int }, sink *jsonrpc.Sink[int]) error {
		for i := range p.N {
			if err := sink.Send(i); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, EventStoreSize: storeSize}))
	t.Cleanup(hs.Close)
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Call(ctx, "initialize", nil, nil); err != nil {
		t.Fatal(err)
	}
	sub, err := jsonrpc.Subscribe[int](ctx, c, "t", "count", map[string]int{"N": 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ev, err := sub.Next(ctx)
		cancel()
		if err != nil || ev != i {
			t.Fatalf("event %d: %d %v", i, ev, err)
		}
	}
	if err := sub.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for subs.Live() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription is still live after unsubscribe")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
