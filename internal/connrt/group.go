package connrt

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// Group is what a server stops when it shuts down, in order: first what
// it registered to stop (its listeners and HTTP servers: OnShutdown), then
// every connection it serves (Add), which its owner shuts down, all at once
// and gracefully, once Stop returns them. Its zero value is ready to use;
// it is safe for concurrent use.
type Group[C comparable] struct {
	mu      sync.Mutex
	conns   map[C]struct{}
	closers []func(context.Context) error // listeners and HTTP servers to stop
	closing bool                          // Shutdown has begun

	requests atomic.Int64  // served outside a connection (Enter)
	waiting  atomic.Bool   // Wait waits: Leave must wake it
	idle     chan struct{} // closed once requests is 0 (made by Wait)
}

// Enter counts a request served outside a connection (an HTTP request, on
// a server of anyone's), which Wait waits for; Leave ends it.
func (g *Group[C]) Enter() { g.requests.Add(1) }

// Leave ends a request Enter counted.
func (g *Group[C]) Leave() {
	if g.requests.Add(-1) == 0 && g.waiting.Load() { // no lock per request unless Shutdown waits
		g.mu.Lock()
		if g.idle != nil {
			close(g.idle)
			g.idle = nil
		}
		g.mu.Unlock()
	}
}

// Wait waits until no request Enter counted is being served, or ctx ends.
func (g *Group[C]) Wait(ctx context.Context) error {
	g.waiting.Store(true) // before the count is read: a Leave that takes it to 0 then sees it
	for {
		g.mu.Lock()
		if g.requests.Load() == 0 {
			g.mu.Unlock()
			return nil
		}
		if g.idle == nil {
			g.idle = make(chan struct{})
		}
		idle := g.idle
		g.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Add records a connection the server serves.
func (g *Group[C]) Add(c C) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns == nil {
		g.conns = make(map[C]struct{})
	}
	g.conns[c] = struct{}{}
}

// Remove forgets a connection that has ended.
func (g *Group[C]) Remove(c C) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// Conns returns the connections served now.
func (g *Group[C]) Conns() []C {
	g.mu.Lock()
	defer g.mu.Unlock()
	conns := make([]C, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	return conns
}

// OnShutdown registers f, which Shutdown calls first (to stop a listener
// or an HTTP server). It reports false if Shutdown has begun already: f is
// not registered, and the caller stops what it started itself.
func (g *Group[C]) OnShutdown(f func(context.Context) error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return false
	}
	g.closers = append(g.closers, f)
	return true
}

// Closing reports whether Shutdown has begun. A connection accepted once it
// has may have been missed by Shutdown's list: its server shuts it down.
func (g *Group[C]) Closing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}

// Stop begins the shutdown: it calls the functions registered with
// OnShutdown, in order, and returns their errors (but net.ErrClosed: a
// listener closed already) and the connections to shut down then.
func (g *Group[C]) Stop(ctx context.Context) ([]error, []C) {
	g.mu.Lock()
	g.closing = true
	closers := g.closers
	g.closers = nil
	g.mu.Unlock()
	var errs []error
	for _, f := range closers {
		if err := f(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errs, g.Conns()
}
