package jsonrpc

import "sync/atomic"

// Back-pressure: a connection counts the bytes of the replies it has
// rendered and not yet written. While they exceed the Server's
// MaxQueuedBytes, the connection admits no new request: its read loop
// waits before taking a concurrency token, so it stops reading, and a
// peer that does not read its answers soon cannot write more requests
// either (TCP flow control; a pipe's buffer). Memory stays near
// MaxQueuedBytes plus MaxConcurrency replies, whatever the transport.

// DefaultMaxQueuedBytes is the default Server.MaxQueuedBytes.
const DefaultMaxQueuedBytes = 1 << 20

// backlog is a connection's count of unwritten reply bytes, with a gate
// that the read loop waits at while the count is over the bound.
type backlog struct {
	bytes   atomic.Int64
	waiting atomic.Bool   // awaitBacklog is waiting for the count to drop
	drained chan struct{} // closed when it does; guarded by Conn.mu
}

func (s *Server) maxQueuedBytes() int64 { return orDefault(s.MaxQueuedBytes, DefaultMaxQueuedBytes) }

// queueReply counts n reply bytes as unwritten; replyWritten undoes it once
// they are written (or the write failed).
func (c *Conn) queueReply(n int) { c.backlog.bytes.Add(int64(n)) }

func (c *Conn) replyWritten(n int) {
	if c.backlog.bytes.Add(-int64(n)) <= c.srv.maxQueuedBytes() && c.backlog.waiting.Load() {
		c.mu.Lock()
		if d := c.backlog.drained; d != nil && c.backlog.bytes.Load() <= c.srv.maxQueuedBytes() {
			close(d)
			c.backlog.drained = nil
			c.backlog.waiting.Store(false)
		}
		c.mu.Unlock()
	}
}

// awaitBacklog waits while the connection's unwritten replies exceed the bound.
// It reports false if the connection closed meanwhile.
func (c *Conn) awaitBacklog() bool {
	limit := c.srv.maxQueuedBytes()
	if c.backlog.bytes.Load() <= limit {
		return true
	}
	c.mu.Lock()
	c.backlog.waiting.Store(true)
	if c.backlog.bytes.Load() <= limit { // written meanwhile
		c.backlog.waiting.Store(c.backlog.drained != nil)
		c.mu.Unlock()
		return true
	}
	if c.backlog.drained == nil {
		c.backlog.drained = make(chan struct{})
	}
	d := c.backlog.drained
	c.mu.Unlock()
	c.rd.releaseReplies() // the reader waits: the replies it held go out
	select {
	case <-d:
		return true
	case <-c.ctx.Done():
		return false
	}
}
