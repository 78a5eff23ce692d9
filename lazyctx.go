package jsonrpc

import (
	"context"
	"time"

	"github.com/seedhq/jsonrpc/internal/lazyctx"
)

// lazyCtx is a handler's context that its server cancels (at the handler
// timeout, once the message is answered): an internal/lazyctx Ctx, which
// costs nothing until somebody waits on it (a handler that never waits, the
// common fast case, costs neither an allocation nor a registration with the
// parent's children), with the handler's own deadline and its peer.
//
// It is embedded in its owner's allocation and set up by init. Err, Done
// and Value are those of the cancel context it stands for: cancelled when
// the parent is or when cancel is called, whichever comes first.
type lazyCtx struct {
	lazyctx.Ctx
	deadline time.Time // reported by Deadline when earlier than the parent's (zero: none)
	peer     *peerInfo // the value under peerKey (nil: the parent's)
}

// init sets the parent and the peer (nil: the parent's).
func (c *lazyCtx) init(parent context.Context, peer *peerInfo) {
	c.Ctx.Init(parent)
	c.peer = peer
}

// cancel cancels the context with err (what Err returns) and cause (what
// context.Cause returns), unless it has ended already; if the parent has
// ended first, its error and cause are kept, as a child context keeps them.
func (c *lazyCtx) cancel(err, cause error) { c.Ctx.Cancel(err, cause) }

func (c *lazyCtx) Deadline() (time.Time, bool) {
	d, ok := c.Ctx.Deadline()
	if !c.deadline.IsZero() && (!ok || c.deadline.Before(d)) {
		return c.deadline, true
	}
	return d, ok
}

func (c *lazyCtx) Value(key any) any {
	if key == (peerKey{}) && c.peer != nil {
		return c.peer
	}
	return c.Ctx.Value(key)
}

func (c *lazyCtx) String() string { return "jsonrpc.handlerContext" }
