package jsonrpc

import (
	"fmt"
	"time"
)

// WithStallTimeout closes a connection (tcp, tls, unix, WebSocket, stdio)
// that reads nothing for d while calls are in flight, as a half-open peer
// is otherwise only ended by each call's context: its calls fail with
// [ErrClosed] ([ErrConnectionLost] with [WithReconnect], which redials).
// Part of a message counts as reading on a stream, a whole message
// elsewhere; pick d above a healthy peer's longest pause with a call in
// flight (a slow handler counts). Off by default, checked every d/4.
func WithStallTimeout(d time.Duration) DialOption {
	return func(c *dialConfig) { c.stallTimeout = d }
}

// progress is what c has read so far, in units that only grow.
func (c *Conn) progress() uint64 {
	n := uint64(c.taken.Load())
	if rp, ok := c.ch.(interface{ ReadProgress() uint64 }); ok {
		n += rp.ReadProgress()
	}
	return n
}

// watchStall closes c once calls have been in flight with nothing read for
// d (WithStallTimeout); it returns when c is done.
func (c *Conn) watchStall(d time.Duration) {
	t := time.NewTicker(max(d/4, time.Millisecond))
	defer t.Stop()
	last, since := c.progress(), time.Now()
	done := c.Done()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			c.mu.Lock()
			waiting := c.pending.Len() > 0
			c.mu.Unlock()
			if n := c.progress(); n != last || !waiting {
				last, since = n, now
				continue
			}
			if now.Sub(since) >= d {
				err := fmt.Errorf("jsonrpc: nothing read for %v with calls in flight: connection taken as lost (WithStallTimeout)", d)
				c.failPending(err) // first: the read that the close cuts would fail them with its own error
				c.close(err)
				return
			}
		}
	}
}
