package connrt

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Ctx is a handler's context that its owner cancels, like one from
// context.WithCancelCause, but that costs no allocation nor registration
// with its parent until somebody waits on it: the standard cancel context
// behind Done is made when Done is first called, or when Value is asked
// once it is cancelled (so that context.Cause finds the cause).
//
// A Ctx is embedded in its owner's allocation and set up by Init. Err, Done
// and Value are those of the cancel context it stands for: cancelled when
// the parent is or when Cancel is called, whichever comes first. It may
// carry a deadline of its own and one value of its own, under a key of
// type K (the handler's peer).
type Ctx[K comparable, V any] struct {
	parent context.Context
	When   time.Time // a deadline of its own, reported when earlier than the parent's (zero: none)
	val    *V        // the value under any key of type K (nil: the parent's)

	inner atomic.Pointer[stdCancel] // made on demand
	ended atomic.Bool               // Cancel was called: err and cause are set

	mu         sync.Mutex
	err, cause error
}

type stdCancel struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Init sets the parent, and the value under K (nil: the parent's).
func (c *Ctx[K, V]) Init(parent context.Context, val *V) { c.parent, c.val = parent, val }

// Cancel cancels the context with err (what Err returns) and cause (what
// context.Cause returns), unless it has ended already; if the parent has
// ended first, its error and cause are kept, as a child context keeps them.
func (c *Ctx[K, V]) Cancel(err, cause error) {
	c.mu.Lock()
	if c.ended.Load() {
		c.mu.Unlock()
		return
	}
	if perr := c.parent.Err(); perr != nil {
		err, cause = perr, context.Cause(c.parent)
	}
	c.err, c.cause = err, cause
	c.ended.Store(true)
	in := c.inner.Load()
	c.mu.Unlock()
	if in != nil {
		in.cancel(cause) // also removes it from the parent's children
	}
}

// std returns the cancel context behind c, making it if needed.
func (c *Ctx[K, V]) std() *stdCancel {
	if in := c.inner.Load(); in != nil {
		return in
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	in := c.inner.Load()
	if in == nil {
		in = new(stdCancel)
		if c.ended.Load() {
			// Ended already: made for its cause, which a parent that has
			// ended since must not replace.
			in.ctx, in.cancel = context.WithCancelCause(context.WithoutCancel(c.parent))
			in.cancel(c.cause)
		} else {
			in.ctx, in.cancel = context.WithCancelCause(c.parent)
		}
		c.inner.Store(in)
	}
	return in
}

// Deadline is the parent's, or When if that is earlier.
func (c *Ctx[K, V]) Deadline() (time.Time, bool) {
	d, ok := c.parent.Deadline()
	if !c.When.IsZero() && (!ok || c.When.Before(d)) {
		return c.When, true
	}
	return d, ok
}

// Done makes the cancel context behind c, if it is not made yet.
func (c *Ctx[K, V]) Done() <-chan struct{} { return c.std().ctx.Done() }

// Err is the error given to Cancel, or the parent's once it has ended.
func (c *Ctx[K, V]) Err() error {
	if c.ended.Load() {
		return c.err // set before ended
	}
	if in := c.inner.Load(); in != nil {
		return in.ctx.Err() // the parent's, if it has ended
	}
	return c.parent.Err()
}

// Value is its own value for a key of type K, the parent's value for another key, and once c is cancelled (or waited
// on) the cancel context's, which context.Cause asks for.
func (c *Ctx[K, V]) Value(key any) any {
	if _, ok := key.(K); ok && c.val != nil {
		return c.val
	}
	if in := c.inner.Load(); in != nil || c.ended.Load() {
		return c.std().ctx.Value(key) // context.Cause asks for the cancel context here
	}
	return c.parent.Value(key)
}

func (c *Ctx[K, V]) String() string { return "jsonrpc.handlerContext" }
