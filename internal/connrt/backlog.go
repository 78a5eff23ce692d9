package connrt

import (
	"context"
	"sync"
	"sync/atomic"
)

// Backlog is a connection's count of reply bytes rendered and not yet
// written, with a gate that its reader waits at while the count is over a
// bound: a peer that does not read its answers cannot write more requests
// either (TCP flow control), and memory stays near the bound.
//
// Add and Written may be called from any goroutine (an atomic add when
// nobody waits); Wait by one goroutine at a time (the reader). The bound is
// given to each call. The zero value is an empty backlog.
type Backlog struct {
	bytes   atomic.Int64
	waiting atomic.Bool // Wait is waiting for the count to drop

	mu      sync.Mutex
	drained chan struct{} // closed when it does
}

// Add counts n bytes as unwritten.
func (b *Backlog) Add(n int) { b.bytes.Add(int64(n)) }

// Bytes is the count of unwritten bytes.
func (b *Backlog) Bytes() int64 { return b.bytes.Load() }

// Written undoes Add once the n bytes are written (or their write failed),
// and opens the gate if the count is now within limit.
func (b *Backlog) Written(n int, limit int64) {
	if b.bytes.Add(-int64(n)) <= limit && b.waiting.Load() {
		b.mu.Lock()
		if d := b.drained; d != nil && b.bytes.Load() <= limit {
			close(d)
			b.drained = nil
			b.waiting.Store(false)
		}
		b.mu.Unlock()
	}
}

// Wait waits while the count exceeds limit. It reports false if ctx ended
// first.
func (b *Backlog) Wait(ctx context.Context, limit int64) bool {
	if b.bytes.Load() <= limit {
		return true
	}
	b.mu.Lock()
	b.waiting.Store(true)
	if b.bytes.Load() <= limit { // written meanwhile
		b.waiting.Store(b.drained != nil)
		b.mu.Unlock()
		return true
	}
	if b.drained == nil {
		b.drained = make(chan struct{})
	}
	d := b.drained
	b.mu.Unlock()
	select {
	case <-d:
		return true
	case <-ctx.Done():
		return false
	}
}
