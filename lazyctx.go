package jsonrpc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// lazyCtx is a handler's context that its server cancels (at the handler
// timeout, once the message is answered), like one from
// context.WithCancelCause, but that costs nothing until somebody waits on
// it: the standard cancel context behind Done is made when Done is first
// called (a handler that selects on it, a context derived from it), or
// when Value is asked once it is cancelled (so that context.Cause finds the
// cause). A handler that never waits, the common fast case, costs neither
// an allocation nor a registration with the parent's children.
//
// It is embedded in its owner's allocation and set up by init. Err,
// Deadline, Done and Value are those of the cancel context it stands for:
// cancelled when the parent is or when cancel is called, whichever comes
// first.
type lazyCtx struct {
	parent   context.Context
	deadline time.Time // reported by Deadline when earlier than the parent's (zero: none)
	peer     *peerInfo // the value under peerKey (nil: the parent's)

	inner atomic.Pointer[stdCancel] // made on demand
	ended atomic.Bool               // cancel was called: err and cause are set

	mu         sync.Mutex
	err, cause error
}

type stdCancel struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// init sets the parent and the peer (nil: the parent's).
func (c *lazyCtx) init(parent context.Context, peer *peerInfo) {
	c.parent, c.peer = parent, peer
}

// cancel cancels the context with err (what Err returns) and cause (what
// context.Cause returns), unless it has ended already; if the parent has
// ended first, its error and cause are kept, as a child context keeps them.
func (c *lazyCtx) cancel(err, cause error) {
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
func (c *lazyCtx) std() *stdCancel {
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

func (c *lazyCtx) Deadline() (time.Time, bool) {
	d, ok := c.parent.Deadline()
	if !c.deadline.IsZero() && (!ok || c.deadline.Before(d)) {
		return c.deadline, true
	}
	return d, ok
}

func (c *lazyCtx) Done() <-chan struct{} { return c.std().ctx.Done() }

func (c *lazyCtx) Err() error {
	if c.ended.Load() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
	if in := c.inner.Load(); in != nil {
		return in.ctx.Err() // the parent's, if it has ended
	}
	return c.parent.Err()
}

func (c *lazyCtx) Value(key any) any {
	if key == (peerKey{}) && c.peer != nil {
		return c.peer
	}
	if in := c.inner.Load(); in != nil || c.ended.Load() {
		return c.std().ctx.Value(key) // context.Cause asks for the cancel context here
	}
	return c.parent.Value(key)
}

func (c *lazyCtx) String() string { return "jsonrpc.handlerContext" }
