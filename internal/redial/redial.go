package redial

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Options configure a Redialer of connections of type C.
type Options[C comparable] struct {
	Min, Max time.Duration // the first wait before a re-dial (> 0), and the cap of the doubling waits
	// Notify, when set, is called on the Redialer's goroutine with the
	// cause when a connection drops (Cause's), and with nil once the next
	// one is dialled and Acquire returns it (so Notify may use it).
	Notify func(err error)
	// Done returns a channel closed once c has ended; Cause says why it
	// ended (never nil); Close closes it.
	Done  func(c C) <-chan struct{}
	Cause func(c C) error
	Close func(c C) error
	// Closed is Acquire's error once the Redialer is closed.
	Closed error
}

// Redialer holds one connection at a time and dials the next one whenever
// it drops, with capped, jittered, doubling waits. Safe for concurrent use.
type Redialer[C comparable] struct {
	dial func(context.Context) (C, error)
	opts Options[C]

	mu     sync.Mutex
	conn   C             // the zero C while redialling
	ready  chan struct{} // closed once conn is set, or the Redialer closed
	closed bool
	stop   context.Context // ended by Close (halt)
	halt   context.CancelFunc
	done   chan struct{} // closed when the redialling goroutine has ended
}

// Start holds first and, when it drops, dials with dial until Close.
func Start[C comparable](first C, dial func(context.Context) (C, error), o Options[C]) *Redialer[C] {
	r := &Redialer[C]{dial: dial, opts: o, conn: first, ready: make(chan struct{}), done: make(chan struct{})}
	r.stop, r.halt = context.WithCancel(context.Background())
	close(r.ready)
	go r.run(first)
	return r
}

// run waits for each connection to end and dials the next one.
func (r *Redialer[C]) run(c C) {
	defer close(r.done)
	for {
		select {
		case <-r.opts.Done(c):
		case <-r.stop.Done():
			r.opts.Close(c)
			return
		}
		r.lost(c)
		if r.opts.Notify != nil {
			r.opts.Notify(r.opts.Cause(c))
		}
		var ok bool
		if c, ok = r.redial(); !ok {
			return
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			r.opts.Close(c)
			return
		}
		r.conn = c
		close(r.ready)
		r.mu.Unlock()
		if r.opts.Notify != nil {
			r.opts.Notify(nil)
		}
	}
}

// lost marks c as gone, if it is still the current connection, so that
// Acquire waits for the next one.
func (r *Redialer[C]) lost(c C) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var none C
	if r.conn == c && !r.closed {
		r.conn = none
		r.ready = make(chan struct{})
	}
}

// redial dials until it succeeds; it reports false once the Redialer is
// closed.
func (r *Redialer[C]) redial() (C, bool) {
	delay := r.opts.Min
	for {
		wait := delay/2 + rand.N(delay/2+1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.stop.Done():
			t.Stop()
			var none C
			return none, false
		}
		ctx, cancel := context.WithCancel(r.stop)
		c, err := r.dial(ctx)
		cancel()
		if err == nil {
			return c, true
		}
		delay = min(2*delay, r.opts.Max)
	}
}

// Acquire returns the current connection, other than prev (a connection
// found closed; the zero C for none), waiting for the next one up to ctx.
func (r *Redialer[C]) Acquire(ctx context.Context, prev C) (C, error) {
	var none C
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return none, r.opts.Closed
		}
		c, ready := r.conn, r.ready
		r.mu.Unlock()
		if c != none && c != prev {
			return c, nil
		}
		if c == prev && c != none {
			r.lost(c) // the connection is known closed: wait for the next
			continue
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return none, ctx.Err()
		}
	}
}

// Closed reports whether Close was called.
func (r *Redialer[C]) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Close closes the connection and stops redialling; waiting Acquires fail
// with Options.Closed. It returns once the redialling goroutine has ended.
func (r *Redialer[C]) Close() {
	var none C
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.halt()
		if r.conn == none {
			close(r.ready) // wakes waiting Acquires, which find it closed
		}
	}
	r.mu.Unlock()
	<-r.done
}
