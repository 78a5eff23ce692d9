package jsonrpc

import (
	"context"
	"io"
	"sync"
)

// Channel carries whole JSON-RPC messages over some transport: a framed byte
// stream, WebSocket frames, an in-memory pipe.
//
// Recv returns the next message, in a slice the caller owns. It is called by
// one goroutine at a time. It returns a *FrameError for a message it could
// not take (too large, bad framing); when the error's Fatal field is false the
// channel has resynchronised and Recv may be called again. Any other error
// ends the channel; io.EOF means the peer finished sending.
//
// Send writes one message and does not retain msg; it may be called by many
// goroutines at once. It may block while the peer does not read, so a
// Channel should bound how long ([NewStream]'s does, by Server.WriteTimeout):
// a [Conn] does not count replies waiting in Send against
// [Server.MaxConcurrency] (a peer calling us back would otherwise deadlock).
//
// Close closes the channel. It may be called concurrently with Recv and Send,
// and unblocks them.
//
// A Channel may also implement [RecvInterrupter], [BufferedChannel] and
// [QueuedSender], as an io.Reader may implement io.WriterTo: a Conn then
// avoids goroutine switches and keeps replies in the order their handlers
// finished; its contract is the same without them.
type Channel interface {
	Recv() ([]byte, error)
	Send(msg []byte) error
	Close() error
}

// RecvInterrupter is implemented by a [Channel] whose blocked Recv can be cut
// short with nothing lost. A [Conn] then serves a request that arrives alone
// on the goroutine that read it (replacing that goroutine by one on a small
// stack once the connection is idle), and a caller whose context can end
// may read its own response. [NewStream]'s channel implements it when the
// connection has read deadlines (net.Conn does).
type RecvInterrupter interface {
	// InterruptRecv makes the Recv in progress, or the next one, return
	// ErrRecvInterrupted, having consumed nothing of a message it did not
	// return: the next Recv resumes where the cut one stopped. It may be
	// called concurrently with Recv. It reports false when it cannot cut a
	// read (Recv then goes on unaffected).
	InterruptRecv() bool
}

// BufferedChannel is implemented by a [Channel] that reads ahead. A [Conn]
// serves a request on a goroutine of its own, and reads on at once, when
// more input is already waiting (a pipelining peer).
type BufferedChannel interface {
	// Buffered returns the number of bytes read from the transport and not
	// yet returned by Recv. It is called only by the goroutine that calls Recv.
	Buffered() int
}

// QueuedSender is implemented by a [Channel] whose Send queues messages in
// order before writing them (and may coalesce them into few writes). A [Conn]
// gives a finished handler's concurrency slot back as soon as its reply has
// its place in the output, so replies leave in the order their handlers
// finished and a reply waiting to be written holds no slot. For a Channel
// without it, the Conn takes the place itself and sends its replies one at
// a time, in that order.
type QueuedSender interface {
	// SendQueued is Send, except that it calls queued once msg has its
	// place in the output (messages sent after that go out after msg),
	// then waits for the write. It calls queued exactly once, at the latest
	// before it returns, whether or not msg is written.
	SendQueued(msg []byte, queued func()) error
}

// limitedChannel is a [Channel] whose size limit and write timeout the Conn
// that takes it sets from its Server, once (NewStream's).
type limitedChannel interface {
	takenBy(srv *Server)
}

// orderedSender is a [QueuedSender] over a [Channel] that is not one: replies
// take a ticket at once and are sent in ticket order, one at a time.
type orderedSender struct {
	ch   Channel
	mu   sync.Mutex
	cond sync.Cond
	next uint64 // the next ticket
	turn uint64 // the ticket whose Send runs now
}

func (o *orderedSender) SendQueued(msg []byte, queued func()) error {
	o.mu.Lock()
	my := o.next
	o.next++
	if queued != nil {
		queued()
	}
	if o.cond.L == nil {
		o.cond.L = &o.mu
	}
	for o.turn != my {
		o.cond.Wait()
	}
	o.mu.Unlock()
	err := o.ch.Send(msg)
	o.mu.Lock()
	o.turn++
	o.cond.Broadcast()
	o.mu.Unlock()
	return err
}

// SessionConn returns a connection to the client of ctx's request that
// outlives the request, so that a handler can notify or call that client
// later: on a stream transport (TCP, unix, stdio, WebSocket) it is
// ConnFromContext's; over Streamable HTTP with sessions it is the session's,
// whose messages go on the standalone GET stream (waiting in the outbox
// meanwhile: OutboxSize, ErrStreamBacklog), answered by the client's POSTs,
// and which closes with the session. It returns nil on plain HTTP,
// stateless Streamable HTTP, or with NoStandaloneStream.
func SessionConn(ctx context.Context) *Conn {
	if ss, ok := ctx.Value(sessionKey{}).(session); ok {
		c, _ := ss.Conn(ctx).(*Conn)
		return c
	}
	return connFromContext(ctx)
}

// sessionKey keys, in a request's context, the session it belongs to on a
// transport whose sessions outlive their requests (Streamable HTTP's).
type sessionKey struct{}

// session is a transport's session: Conn returns its *Conn, made for ctx's
// request on first use; nil once it has ended.
type session interface {
	Conn(ctx context.Context) io.Closer
}
