package jsonrpc

// Back-pressure: a connection counts the bytes of the replies it has
// rendered and not yet written (internal/backlog). While they exceed the
// Server's MaxQueuedBytes, the connection admits no new request: its read
// loop waits before taking a concurrency token, so it stops reading, and a
// peer that does not read its answers soon cannot write more requests
// either (TCP flow control; a pipe's buffer). Memory stays near
// MaxQueuedBytes plus MaxConcurrency replies, whatever the transport.

// DefaultMaxQueuedBytes is the default Server.MaxQueuedBytes.
const DefaultMaxQueuedBytes = 1 << 20

func (s *Server) maxQueuedBytes() int64 { return orDefault(s.MaxQueuedBytes, DefaultMaxQueuedBytes) }

// queueReply counts n reply bytes as unwritten; replyWritten undoes it once
// they are written (or the write failed).
func (c *Conn) queueReply(n int) { c.backlog.Add(n) }

func (c *Conn) replyWritten(n int) { c.backlog.Written(n, c.srv.maxQueuedBytes()) }

// awaitBacklog waits while the connection's unwritten replies exceed the
// bound; the replies the reader held go out before it waits. It reports
// false if the connection closed meanwhile.
func (c *Conn) awaitBacklog() bool {
	limit := c.srv.maxQueuedBytes()
	if c.backlog.Bytes() <= limit {
		return true // the common case: no func value made for Wait
	}
	return c.backlog.Wait(c.ctx, limit, c.rd.releaseReplies)
}
