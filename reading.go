package jsonrpc

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Who reads the channel. One goroutine at a time reads, usually a read
// loop (conn.go). A client that makes one call at a time (the peer has sent
// it no request or notification, and no two of its calls overlapped within
// overlapWindow) parks reading once no call waits, and the next caller
// reads its own response: the answer reaches it with no goroutine switch,
// about a third of a loopback round trip. A message that arrives while
// reading is parked is read by the next caller, or within a couple of
// inlineBudget ticks by a read loop the watchdog starts (inline.go). Any
// other connection keeps a read loop at all times, as a server does.

// overlapWindow: a connection whose calls overlapped this recently keeps
// its read loop. With several callers at once, one of them reading would
// mostly read for the others, and handing reading back and forth costs
// more than the switch it saves.
var overlapWindow atomic.Int64 // nanoseconds; a variable for tests

func init() { overlapWindow.Store(int64(100 * time.Millisecond)) }

// noteOverlap records, under c.mu, a call made while others wait.
func (c *Conn) noteOverlap() {
	if len(c.pending) > 0 {
		c.overlapAt = time.Now().UnixNano()
	}
}

// parkedReads counts the connections on which nobody reads, everywhere.
var parkedReads atomic.Int64

// parkRead stops reading on a connection that has only made calls, when no
// call waits and nothing is buffered. It reports whether reading parked;
// the caller then stops reading.
func (c *Conn) parkRead() bool {
	if c.served.Load() {
		return false
	}
	if b, ok := c.ch.(interface{ buffered() bool }); ok && b.buffered() {
		return false
	}
	now := time.Now().UnixNano()
	c.mu.Lock()
	if len(c.pending) > 0 || c.closed || now-c.overlapAt < overlapWindow.Load() {
		c.mu.Unlock()
		return false
	}
	c.parked = true
	c.parkedAt.Store(now)
	c.mu.Unlock()
	if parkedReads.Add(1) == 1 {
		kickWatchdog()
	}
	return true
}

// unpark takes parked reading over; it reports whether it did, in which
// case the caller must read (or start a read loop).
func (c *Conn) unpark() bool {
	if c.parkedAt.Load() == 0 {
		// Not parked (the common case with several callers), seen without
		// the lock: a park before this caller registered its call was
		// published under c.mu, which the caller took since.
		return false
	}
	c.mu.Lock()
	if !c.parked {
		c.mu.Unlock()
		return false
	}
	c.parked = false
	c.parkedAt.Store(0)
	c.mu.Unlock()
	parkedReads.Add(-1)
	return true
}

// unparkStale starts a read loop on a connection whose reading has been
// parked since before deadline (the watchdog calls it).
func (c *Conn) unparkStale(deadline int64) {
	if at := c.parkedAt.Load(); at == 0 || at >= deadline {
		return // the common case, checked without the lock (many connections)
	}
	c.mu.Lock()
	stale := c.parked && c.parkedAt.Load() < deadline
	if stale {
		c.parked = false
		c.parkedAt.Store(0)
	}
	c.mu.Unlock()
	if stale {
		parkedReads.Add(-1)
		go c.readLoop()
	}
}

// readFor reads on the calling goroutine until the calls have their results, then
// parks reading or hands it on. Requests read meanwhile are served on
// goroutines of their own. If ctx ends first, reading moves to a read loop
// (a channel that cannot interrupt its read is read this way only for
// contexts that cannot end: readFor reports false and reads nothing).
func (c *Conn) readFor(ctx context.Context, calls ...*pendingCall) bool {
	var stop func() bool
	if ctx.Done() != nil {
		if _, ok := c.ch.(interrupter); !ok {
			return false
		}
		stop = context.AfterFunc(ctx, func() { c.interruptRead() })
	}
	for !answered(calls) {
		data, err := c.ch.Recv()
		if err != nil {
			if errors.Is(err, errReadInterrupted) {
				c.interrupting.Store(false)
				if ctx.Err() == nil {
					continue // not for us (an idle refresh): read on
				}
				break
			}
			if c.recvFailed(err) {
				continue
			}
			if stop != nil {
				stop()
			}
			go c.finish(err)
			return true
		}
		if t, draining := c.take(data); t != nil {
			spawn(func() { c.run(t, draining) })
		}
	}
	if stop != nil {
		stop()
	}
	if !answered(calls) || !c.parkRead() {
		go c.readLoop()
	}
	return true
}

// interrupter is a channel whose blocked read can be cut (a stream on a
// connection with read deadlines).
type interrupter interface{ interruptRead() bool }

// interruptRead makes the read in progress (or the next one) return
// errReadInterrupted, once at a time. It reports false when the channel
// cannot interrupt a read.
func (c *Conn) interruptRead() bool {
	d, ok := c.ch.(interrupter)
	if !ok || !c.interrupting.CompareAndSwap(false, true) {
		return false
	}
	if !d.interruptRead() {
		c.interrupting.Store(false)
		return false
	}
	return true
}

// answered reports whether every call has its result.
func answered(calls []*pendingCall) bool {
	for _, p := range calls {
		if len(p.ch) == 0 {
			return false
		}
	}
	return true
}
