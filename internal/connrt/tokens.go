package connrt

import (
	"context"
	"sync/atomic"
)

// Tokens is a connection's concurrency tokens, one per running handler: a
// counting semaphore that costs two atomic words and no allocation until
// somebody waits for a token (the channel that wakes waiters is made then).
// The bound is given to each call, as for Backlog. The zero value holds no
// token; it is safe for concurrent use.
type Tokens struct {
	held    atomic.Int32
	waiting atomic.Int32
	wake    atomic.Pointer[chan struct{}] // closed by Give while somebody waits
}

// TryTake takes a token if fewer than max are held.
func (t *Tokens) TryTake(max int) bool {
	for {
		n := t.held.Load()
		if int(n) >= max {
			return false
		}
		if t.held.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Take takes a token, waiting while max are held; it reports false if ctx
// ended first.
func (t *Tokens) Take(ctx context.Context, max int) bool {
	for !t.TryTake(max) {
		t.waiting.Add(1)
		w := t.waker()
		if t.TryTake(max) { // given back before the waker was in place
			t.waiting.Add(-1)
			return true
		}
		select {
		case <-w:
			t.waiting.Add(-1)
		case <-ctx.Done():
			t.waiting.Add(-1)
			return false
		}
	}
	return true
}

// waker returns the channel the next Give closes, making it if needed.
func (t *Tokens) waker() chan struct{} {
	for {
		if p := t.wake.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if t.wake.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// Give gives a token back, waking those that wait for one (they try again).
func (t *Tokens) Give() {
	t.held.Add(-1)
	if t.waiting.Load() > 0 {
		if p := t.wake.Swap(nil); p != nil {
			close(*p)
		}
	}
}
