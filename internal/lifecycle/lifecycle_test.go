package lifecycle

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// No test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// conn is a connection that records its shutdown in a shared log.
type conn struct {
	name string
	log  *events
	err  error
	wait bool // shut down only once ctx ends
}

func (c *conn) Shutdown(ctx context.Context) error {
	if c.wait {
		<-ctx.Done()
	}
	c.log.add(c.name)
	return c.err
}

type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, s)
}

func TestShutdownOrderAndErrors(t *testing.T) {
	var log events
	var g Group[*conn]
	a, b, gone := &conn{name: "a", log: &log}, &conn{name: "b", log: &log, err: errors.New("b failed")}, &conn{name: "gone", log: &log}
	g.Add(a)
	g.Add(b)
	g.Add(gone)
	g.Remove(gone)
	if n := len(g.Conns()); n != 2 {
		t.Fatalf("Conns: %d, want 2", n)
	}
	listenerErr := errors.New("listener failed")
	g.OnShutdown(func(context.Context) error { log.add("listener 1"); return net.ErrClosed })
	g.OnShutdown(func(context.Context) error { log.add("listener 2"); return listenerErr })
	if g.Closing() {
		t.Fatal("Closing before Shutdown")
	}
	err := g.Shutdown(context.Background())
	if !errors.Is(err, listenerErr) || errors.Is(err, net.ErrClosed) || err == nil || !containsMsg(err, "b failed") {
		t.Fatalf("Shutdown: %v; want the listener's and b's errors, not net.ErrClosed", err)
	}
	if !slices.Equal(log.got[:2], []string{"listener 1", "listener 2"}) {
		t.Fatalf("order: %v; want the listeners first, in order", log.got)
	}
	rest := slices.Sorted(slices.Values(log.got[2:]))
	if !slices.Equal(rest, []string{"a", "b"}) {
		t.Fatalf("connections shut down: %v; want a and b (not the removed one)", rest)
	}
	if !g.Closing() {
		t.Fatal("not Closing after Shutdown")
	}
	if g.OnShutdown(func(context.Context) error { return nil }) {
		t.Fatal("OnShutdown accepted a function after Shutdown")
	}
}

func containsMsg(err error, msg string) bool {
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		if e.Error() == msg {
			return true
		}
	}
	return false
}

func TestShutdownContextEnds(t *testing.T) {
	var log events
	var g Group[*conn]
	g.Add(&conn{name: "stuck", log: &log, wait: true, err: errors.New("cut")})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := g.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown: %v, want the context's error", err)
	}
	if !slices.Equal(log.got, []string{"stuck"}) {
		t.Fatalf("log %v: the connection was not waited for", log.got)
	}
}

func TestShutdownEmpty(t *testing.T) {
	var g Group[*conn]
	if err := g.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown of nothing: %v", err)
	}
}
