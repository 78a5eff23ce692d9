package jsonrpc

import (
	"fmt"
	"time"
)

// WithStallTimeout makes a connection (tcp, tls, unix, WebSocket, stdio)
// that has calls in flight and reads nothing at all for d count as lost: a
// peer that keeps its socket but stopped answering (half-open) is
// otherwise only ended by each call's context. The connection is closed:
// its calls in flight fail with [ErrClosed] (with [WithReconnect],
// [ErrConnectionLost], and the next call redials). Reading is "anything":
// part of a large message counts on a stream, a whole message on other
// channels; pick d above the longest pause a healthy peer takes with a
// call in flight (a slow handler counts). Off by default, checked every
// d/4.
func WithStallTimeout(d time.Duration) DialOption {
	return func(c *dialConfig) { c.stallTimeout = d }
}

// readProgress is a channel that counts what it has read.
type readProgress interface{ ReadProgress() uint64 }

// progress is what c has read so far, in units that only grow.
func (c *Conn) progress() uint64 {
	n := uint64(c.taken.Load())
	if rp, ok := c.ch.(readProgress); ok {
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
	for {
		select {
		case <-c.done:
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
