package jsonrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/convention"
	"github.com/seedhq/jsonrpc/internal/pubsub"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// ErrClosed is returned by calls on a connection that has closed.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Conn is a JSON-RPC peer on a [Channel]: it can call the other side and serve
// the other side's calls, both at once. See the package documentation for
// its concurrency contract.
type Conn struct {
	ch  Channel
	srv *Server

	ctx        context.Context // cancelled when the connection closes; handlers derive from it
	cancel     context.CancelFunc
	tokens     connrt.Tokens // one per running handler
	seq        atomic.Uint64 // ids of our outgoing calls
	paramsSize atomic.Int64  // size of the last large params we sent (see growFor)
	wg         sync.WaitGroup
	done       chan struct{} // made by Done when first asked for (guarded by mu): a server's connection seldom is
	peerDone   chan struct{} // made by peerFinished when first asked for (guarded by mu)
	onDone     func()

	rd        readOwner      // who reads (reading.go)
	ordered   *orderedSender // replies in order, when ch is no QueuedSender
	giveToken func()         // gives a concurrency token back (for QueuedSender)

	mu       sync.Mutex
	pending  pendingSet        // our calls awaiting a response (pending.go)
	inflight inflightSet       // the peer's requests being served, by id
	queued   convention.Queued // the peer's requests read but not yet served (under a Convention)
	busy     int               // messages taken and not yet answered (dispatch and handlers)
	idle     chan struct{}     // made by Shutdown when first asked for, closed once stopping
	taken    atomic.Int64      // messages taken for processing (tests count answers against it)
	err      error
	inv      Invoker // WithInterceptors: the chain Call, Notify and Batch go through (nil: none)

	// Side by side, so that an idle connection's Conn fits a smaller size class.
	draining, stopping bool // Shutdown: answer new requests with an error; found idle: take no more messages
	closed, ended      bool // ended: finish is done, done is closed
	peerEnded          bool // reading ended: peerDone is closed
	strictResults      bool // WithStrictResults: unknown members of results are errors

	iterCalls atomic.Int32                    // CallIter calls waiting, whose responses may be lent (calliter.go)
	subs      atomic.Pointer[pubsub.Registry] // our subscriptions' events, once Subscribe was called (subscribe.go)
	backlog   connrt.Backlog                  // unwritten reply bytes; admission waits on it (see start)
}

// NewConn starts serving ch: it reads messages until the channel ends,
// answering the peer's requests with srv (nil: every call gets -32601) and
// matching responses to the calls made with [Conn.Call], [Conn.Notify] and [Conn.Batch].
func NewConn(ch Channel, srv *Server) *Conn {
	return newConnContext(context.Background(), ch, srv, nil)
}

// newConnContext is NewConn whose handlers' contexts derive from base (the
// peer, what a WebSocket handshake's middleware stored), calling onDone at the end.
func newConnContext(base context.Context, ch Channel, srv *Server, onDone func()) *Conn {
	if srv == nil {
		srv = &Server{Handler: NewMux()}
	}
	if l, ok := ch.(limitedChannel); ok {
		l.takenBy(srv)
	}
	ctx, cancel := context.WithCancel(base)
	c := &Conn{
		ch:     ch,
		srv:    srv,
		ctx:    ctx,
		cancel: cancel,
		onDone: onDone,
	}
	if _, ok := ch.(QueuedSender); !ok {
		c.ordered = &orderedSender{ch: ch}
	}
	c.giveToken = c.tokens.Give
	if l, ok := ch.(lineLender); ok {
		l.SetLendCheck(c.lendCheck)
	}
	c.rd.c, c.rd.window = c, overlapWindow
	c.rd.ReadOwner.Init(&c.rd)
	srv.life.Add(c)
	c.rd.Hand(c.rd.Load(), connrt.Loop, true)
	return c
}

type connKey struct{}

// task is one incoming request (or batch) being served, and its handler's
// context (the connection's, plus the connection): one allocation.
type task struct {
	context.Context
	conn  *Conn
	held  atomic.Bool     // whether the handler still holds a concurrency token
	keep  bool            // data is not given back: the batch had responses too, which their calls read (beside held: no room added)
	alone bool            // served inline with no input behind it: not timed (see readOwner.quick; here: no room added)
	data  []byte          // the message
	env   wire.Envelope   // a single request
	req   Request         // its Request, given to the handler
	batch []wire.Envelope // or the requests of a batch

	inlineAt connrt.ReadWord // the reading state while served inline (0: not inline)

	after []func() // run once the reply is sent (see afterReply); guarded by conn.mu

	stream *streamSlot // a Stream the handler returned, written in pieces (stream.go); nil: none
}

// Value returns the task itself for connKey (see ConnFromContext).
func (t *task) Value(key any) any {
	if key == (connKey{}) {
		return t
	}
	return t.Context.Value(key)
}

// release gives the task's concurrency token back, once.
func (t *task) release() {
	if t.held.Swap(false) {
		t.conn.tokens.Give()
	}
}

// ConnFromContext returns the connection whose handler received ctx, so
// that a handler can call or notify the peer that called it. It never
// returns nil: outside a handler, or on a transport that cannot reach the
// peer outside its answer (plain HTTP, a message broker such as NATS), it
// returns an ended connection whose Call, Notify and Batch fail at once with
// [ErrNoConnection] and whose Err is ErrNoConnection. Over Streamable HTTP it
// is the connection of the POST being served, opened by the first
// ConnFromContext (its answer becomes an event stream once something is
// sent on it).
func ConnFromContext(ctx context.Context) *Conn {
	switch v := ctx.Value(connKey{}).(type) {
	case *task:
		return v.conn
	case atOnceHost:
		if c := v.open(); c != nil {
			return c
		}
	}
	return noConn()
}

// connFromContext is the connection ctx's request is served on, or nil
// where there is none (a Streamable HTTP POST's is not opened for it).
func connFromContext(ctx context.Context) *Conn {
	if t, ok := ctx.Value(connKey{}).(*task); ok {
		return t.conn
	}
	return nil
}

// ErrNoConnection is the error of a call or notification on the connection
// [ConnFromContext] returns where the transport has none (plain HTTP, NATS),
// and of [DialConn] for a URL whose client is not a connection.
var ErrNoConnection = errors.New("jsonrpc: no connection to the peer on this transport")

// noConn is the ended connection ConnFromContext returns where there is
// none: made once, over a Channel that has ended.
var noConn = sync.OnceValue(func() *Conn {
	c := NewConn(noChannel{}, nil)
	<-c.Done()
	return c
})

// noChannel is a Channel that has ended before its first message.
type noChannel struct{}

func (noChannel) Recv() ([]byte, error) { return nil, ErrNoConnection }
func (noChannel) Send([]byte) error     { return ErrNoConnection }
func (noChannel) Close() error          { return nil }

// errClosed is the error of a call on a closed connection: errNotSent (it
// matches ErrClosed) with why it ended, as failPending's, or
// ErrNoConnection on ConnFromContext's stand-in.
func (c *Conn) errClosed() error {
	if _, ok := c.ch.(noChannel); ok {
		return ErrNoConnection
	}
	if err := c.Err(); err != nil && err != io.EOF && err != ErrClosed { // why it ended, when that says more
		return errors.Join(errNotSent, err)
	}
	return errNotSent
}

// Done is closed when the connection has ended and every handler has returned.
func (c *Conn) Done() <-chan struct{} { return c.signal(&c.done, &c.ended) }

// peerFinished is closed once reading has ended: the peer finished
// sending, or the transport broke.
func (c *Conn) peerFinished() <-chan struct{} { return c.signal(&c.peerDone, &c.peerEnded) }

// signal returns *ch, made when first asked for (an idle server connection
// seldom is), closed at once if *ended.
func (c *Conn) signal(ch *chan struct{}, ended *bool) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *ch == nil {
		*ch = make(chan struct{})
		if *ended {
			close(*ch)
		}
	}
	return *ch
}

// raise sets *ended and closes *ch if signal made it.
func (c *Conn) raise(ch *chan struct{}, ended *bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *ended = true; *ch != nil {
		close(*ch)
	}
}

// Err returns why the connection ended (io.EOF when the peer finished), or nil while it runs.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Wait blocks until the connection has ended and returns Err.
func (c *Conn) Wait() error {
	<-c.Done()
	return c.Err()
}

// scanState is the scanning state of one message, taken from a pool for
// each message so that an idle connection holds none.
type scanState struct {
	sc wire.Scanner
	m  wire.Message
}

var scanPool = sync.Pool{New: func() any { return new(scanState) }}

// recvFailed answers a message the channel could not take. It reports
// whether reading can go on.
func (c *Conn) recvFailed(err error) bool {
	var fe *FrameError
	if errors.As(err, &fe) {
		if !errors.Is(fe, ErrMessageTooLarge) || !c.failOversize(fe) {
			c.sendReply(c.srv.logReply(c.ctx, &Error{Code: fe.Code, Message: fe.Msg})) // a response of ours is not answered
		}
		return !fe.Fatal
	}
	return false
}

// finish ends the connection once reading has ended with err. If the peer
// finished sending (EOF, also mid-message, or a stream that cannot be
// resynchronised), requests already read are still answered; if the
// transport broke, running handlers are cancelled at once.
func (c *Conn) finish(err error) {
	c.srv.logProtocol(c.ctx, "jsonrpc: connection closed", nil, err)
	var fe *FrameError
	if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &fe) { // the peer finished sending, maybe mid-message
		c.close(err)
	}
	c.failPending(err)
	c.raise(&c.peerDone, &c.peerEnded) // subscriptions/listen ends: nothing else would end it (listen.go)
	c.wg.Wait()
	c.rd.flushReplies(context.Background()) // the answers of a peer that finished sending (bounded by the write timeout)
	c.close(err)
	c.rd.Stop()
	c.raise(&c.done, &c.ended)
	if c.onDone != nil {
		c.onDone()
	}
}

// take dispatches one message read from the channel (dispatch.go) and
// returns the task to serve, if any, admitted by start.
func (c *Conn) take(data []byte) (*task, bool) {
	if !c.begin() {
		return nil, false // Shutdown already closed the connection: nothing can be answered
	}
	c.taken.Add(1)
	ci := connInboundPool.Get().(*connInbound)
	ci.data, ci.conn = data, c
	var t *task
	var draining bool
	if e, batch, ok := c.srv.dispatch(c.ctx, &ci.inbound, ci); ok {
		t, draining = ci.start(e, batch)
	}
	ci.data, ci.conn, ci.sc.Data = nil, nil, nil // do not pin the message
	connInboundPool.Put(ci)
	c.end()
	return t, draining
}

// begin counts a message (or a handler) as taken and not yet answered. It
// reports false once Shutdown has found the connection idle and is closing it.
func (c *Conn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return false
	}
	c.busy++
	return true
}

// end undoes begin; leaving the connection idle during Shutdown, it stops
// taking messages and wakes Shutdown under one lock (none is taken after).
func (c *Conn) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	if c.busy == 0 && c.draining && !c.stopping {
		c.stopping = true
		if c.idle != nil {
			close(c.idle)
		}
	}
}

// start admits t: it waits while the unwritten replies exceed MaxQueuedBytes
// (back-pressure: the reader stops) and for a concurrency token, then counts
// t as running and, under a Convention, queues its ids for cancels.
func (c *Conn) start(t *task) (*task, bool) {
	if limit := c.srv.maxQueuedBytes(); c.backlog.Bytes() > limit {
		c.rd.holder().Release()
		if !c.backlog.Wait(c.ctx, limit) {
			return nil, false
		}
	}
	if !c.tokens.TryTake(c.srv.maxConcurrency()) {
		c.rd.holder().Release() // the reader waits: the replies it held go out
		if !c.tokens.Take(c.ctx, c.srv.maxConcurrency()) {
			return nil, false
		}
	}
	c.rd.served.Store(true)
	c.mu.Lock()
	draining := c.draining
	c.busy++ // the message being dispatched is counted, so busy > 0 here
	if c.srv.Convention != ConventionNone {
		t.eachID(c.queued.Add) // the peer may cancel it before it runs
	}
	c.mu.Unlock()
	t.Context = c.ctx
	t.held.Store(true)
	c.wg.Add(1)
	return t, draining
}

// run serves task t (admitted by start) inline or on a worker, top to
// bottom: the handler timeout if any, the request (serveElem) or the batch,
// the reply, counted as unwritten until written.
func (c *Conn) run(t *task, draining bool) {
	defer c.wg.Done()
	if !t.keep {
		defer c.giveBack(t.data) // served and answered: nothing holds the message any more
	}
	if t.batch != nil {
		defer putEnvelopes(t.batch) // last: unqueue reads it
	}
	defer c.end()
	defer c.unqueue(t)
	defer t.release()
	defer t.replied()
	var ctx context.Context = t
	if draining {
		// Shutting down: the request was read, so it is answered, not run.
		ctx2, cancel := context.WithCancel(ctx)
		cancel()
		ctx = ctx2
	}
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	out := (*buf)[:0]
	var req *Request
	if t.batch == nil {
		t.req = Request{ID: idOf(&t.env, t.data), stream: &t.stream}
		req = &t.req
	}
	var ts *timedServe
	if d := c.srv.handlerTimeout(false); d > 0 {
		ts = &timedServe{srv: c.srv, d: d, data: t.data, e: &t.env, elems: t.batch, late: c.sendReply}
		ts.ctx.Init(ctx, nil)
		ctx = ts.start()
	}
	var start time.Time
	if !t.alone {
		start = time.Now()
	}
	var reply []byte
	if t.batch != nil {
		reply = c.srv.serveBatch(ctx, c, t.data, t.batch, ts, out)
	} else {
		reply = c.srv.serveElem(ctx, c, t.data, &t.env, req, out)
	}
	if ts != nil {
		reply = ts.stop(reply, out, req)
	}
	if cap(reply) > cap(*buf) {
		*buf = reply[:0] // keep the grown buffer for the next reply
	}
	if !start.IsZero() {
		c.rd.quick.Store(time.Since(start) < quickRequest)
	}
	switch { // one way out: run's defers are open-coded (with more, each would cost a deferproc)
	case t.stream != nil:
		c.sendStream(t, reply)
	case len(reply) > 0 && c.ctx.Err() == nil: // (else nothing to send, or the connection is closing)
		// The slot goes back once the reply has its place in the output, before
		// it is written: else two peers whose handlers write to each other deadlock.
		c.sendQueued(t, reply)
	}
}

// sendQueued sends t's reply, counted as unwritten meanwhile, and gives
// t's token back once the reply has its place in the output.
func (c *Conn) sendQueued(t *task, reply []byte) {
	c.backlog.Add(len(reply))
	queued := c.giveToken
	if !t.held.Swap(false) {
		queued = nil // given back already (the handler called its peer)
	}
	qs, ok := c.ch.(QueuedSender)
	if !ok {
		qs = c.ordered
	}
	err := qs.SendQueued(reply, queued)
	c.backlog.Written(len(reply), c.srv.maxQueuedBytes())
	c.sent(err)
}

// afterReply arranges for f to run once the reply to the request ctx
// belongs to has been sent (or is known never to be), so that a message f
// sends follows that reply on the wire. It reports false outside a handler
// served on a [Conn] or by an atOnceHost, where it does nothing.
func afterReply(ctx context.Context, f func()) bool {
	var t *task
	switch v := ctx.Value(connKey{}).(type) {
	case *task:
		t = v
	case atOnceHost:
		return v.afterReply(f)
	default:
		return false
	}
	t.conn.mu.Lock()
	t.after = append(t.after, f)
	t.conn.mu.Unlock()
	return true
}

// replied runs the task's afterReply functions.
func (t *task) replied() {
	t.conn.mu.Lock()
	after := t.after
	t.after = nil
	t.conn.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// startRequest records an incoming id as in flight on c (for
// Server.startRequest, under a Convention) and returns the context the
// peer's cancel reaches; nil, recording nothing, for an id in flight already.
func (c *Conn) startRequest(ctx context.Context, id ID, params []byte) *callCtx {
	k := id.key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight.get(k) != nil {
		return nil
	}
	r := newRequestCtx(ctx, c.srv.Convention, c, params)
	if c.queued.Cancelled(k) {
		r.cancel(errPeerCancelled)
	}
	c.inflight.add(k, r)
	return r
}

// endRequest forgets an incoming id; it reports whether the peer cancelled it.
func (c *Conn) endRequest(id ID) (cancelled bool) {
	k := id.key()
	c.mu.Lock()
	r := c.inflight.remove(k)
	c.mu.Unlock()
	return r.end()
}

// inflightSet holds the contexts of the peer's requests served under a
// Convention, by id key: the first in fields, only overlapping ones in a map
// (dropped once nothing is in flight).
type inflightSet struct {
	key  string
	r    *callCtx // nil: none in the fields
	more map[string]*callCtx
}

func (s *inflightSet) get(k string) *callCtx {
	if s.r != nil && s.key == k {
		return s.r
	}
	return s.more[k]
}

func (s *inflightSet) add(k string, r *callCtx) {
	if s.r == nil {
		s.key, s.r = k, r
		return
	}
	if s.more == nil {
		s.more = make(map[string]*callCtx)
	}
	s.more[k] = r
}

func (s *inflightSet) remove(k string) *callCtx {
	r := s.get(k)
	if s.r != nil && s.key == k {
		s.key, s.r = "", nil
	} else {
		delete(s.more, k)
	}
	if s.r == nil && len(s.more) == 0 {
		s.more = nil
	}
	return r
}

// each calls f with every context in s.
func (s *inflightSet) each(f func(*callCtx)) {
	if s.r != nil {
		f(s.r)
	}
	for _, r := range s.more {
		f(r)
	}
}

// sendReply writes a reply at once, not queued behind the running
// handlers' (see Conn.run); a failure to write ends the connection.
func (c *Conn) sendReply(msg []byte) { c.sent(c.ch.Send(msg)) }

func (c *Conn) sent(err error) {
	if err != nil {
		c.srv.logger().Debug("jsonrpc: write failed; closing the connection", "error", err)
		c.close(err)
	}
}

// deliver hands the responses among elems to the calls waiting for them
// (see pendingSet.answer) and logs those that match no call.
func (c *Conn) deliver(data []byte, elems []wire.Envelope, batch bool) {
	c.mu.Lock()
	unmatched, id, nullErr := c.pending.answer(data, elems, batch)
	c.mu.Unlock()
	if unmatched > 0 {
		c.srv.logger().Debug("jsonrpc: dropping responses that match no call", "count", unmatched, "id", id)
	}
	if nullErr != nil {
		c.srv.logger().Warn("jsonrpc: the peer answered a message with an error that matches no call", "code", nullErr.Code, "message", nullErr.Message)
	}
}

// markBareResponses makes the invalid elements of m with no method and the
// id of a call of ours waiting ({"jsonrpc":"2.0","id":N}: a server leaving a
// null result out) bad responses, which fail their calls.
func (c *Conn) markBareResponses(data []byte, m *wire.Message) {
	for i := range m.Elems {
		e := &m.Elems[i]
		if e.Kind != wire.KindInvalid || e.HasMethod() {
			continue
		}
		id, ok := parseOurID(e.ID.Of(data))
		c.mu.Lock()
		if _, waiting := c.pending.Get(id); ok && waiting {
			e.Kind = wire.KindBadResponse
		}
		c.mu.Unlock()
	}
}

// failPending fails every call still waiting for a response.
func (c *Conn) failPending(cause error) {
	c.mu.Lock()
	pending := c.pending.TakeAll()
	if !c.closed && c.err == nil {
		c.err = cause
	}
	c.mu.Unlock()
	err := ErrClosed
	if cause != nil && cause != io.EOF && cause != ErrClosed { // why it ended, when that says more
		err = errors.Join(ErrClosed, cause)
	}
	for _, p := range pending {
		p.ch <- callResult{err: err}
	}
}

// close ends the connection at once: the channel closes, running handlers
// see their context cancelled, and waiting calls fail.
func (c *Conn) close(cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.err == nil {
		c.err = cause
	}
	c.mu.Unlock()
	c.cancel()
	c.ch.Close()
	c.failPending(cause)
	c.rd.wake() // parked reading: a read loop sees the channel closed and finishes
	c.srv.life.Remove(c)
}

// Close closes the connection at once: running handlers are cancelled and
// pending calls fail with [ErrClosed]. Use [Conn.Shutdown] to finish work first.
func (c *Conn) Close() error {
	c.close(ErrClosed)
	<-c.Done()
	return nil
}

// Shutdown answers every request already received, then closes. Requests
// that arrive meanwhile get a CodeRequestCanceled error. If ctx ends
// first, the connection is closed at once and ctx's error returned.
func (c *Conn) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.draining = true
	c.stopping = c.stopping || c.busy == 0
	c.mu.Unlock()
	select {
	case <-c.signal(&c.idle, &c.stopping): // closed once stopping (end)
		c.rd.flushReplies(ctx) // every answer is out before the connection closes
		c.close(ErrClosed)
	case <-c.Done():
	case <-ctx.Done():
		c.close(ErrClosed)
		<-c.Done()
		return ctx.Err()
	}
	<-c.Done()
	return nil
}

// Call sends a request and waits for its response, decoding the result into
// result (a pointer; nil to discard it). An error response is returned as
// an *Error. A handler may call back to its own peer: while it waits, its
// concurrency token is given back, so callbacks never deadlock the connection.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if c.inv != nil {
		return c.inv.Call(ctx, method, params, result)
	}
	return c.callDirect(ctx, method, params, result)
}

func (c *Conn) callDirect(ctx context.Context, method string, params, result any) error {
	ir, iter := result.(*iterResult)
	if iter {
		iter = lendsResponses(c.ch) // CallIter: its response may be lent (calliter.go)
	}
	r, err := c.call(ctx, method, params, iter)
	if err != nil {
		return err
	}
	if r.lent != nil {
		return c.readLent(ctx, r.lent, ir)
	}
	err = decodeResult(method, r.result, result, c.strictResults)
	if r.msg != nil {
		c.giveBack(r.msg) // decoded: nothing refers to the message any more
	}
	return err
}

// call sends a request and waits for its response; with iter (CallIter) it
// may come lent (callResult.lent), the reader waiting until it is read.
func (c *Conn) call(ctx context.Context, method string, params any, iter bool) (callResult, error) {
	if err := ctx.Err(); err != nil {
		return callResult{}, err // a call whose context has ended is not sent
	}
	n := c.seq.Add(1)
	var idBuf [20]byte
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	var err error
	*buf, err = codec.AppendRequest(*buf, strconv.AppendUint(idBuf[:0], n, 10), method, params, &c.paramsSize)
	if err != nil {
		return callResult{}, err
	}
	p := newPending(n)
	if p.iter = iter; iter {
		c.iterCalls.Add(1)
		defer c.iterCalls.Add(-1)
	}
	c.mu.Lock()
	if c.closed || c.pending.Ended() {
		c.mu.Unlock()
		return callResult{}, c.errClosed()
	}
	c.rd.noteOverlap()
	c.pending.Add(n, p.group, p)
	c.mu.Unlock()
	yieldToken(ctx, c)
	if err := c.sendFor(ctx, *buf); err != nil {
		c.forget(n)
		if ctx.Err() != nil {
			// Streamable HTTP: the call's POST was abandoned; a server
			// need not take that as a cancellation (MCP).
			c.sendCancel(ctx, strconv.AppendUint(idBuf[:0], n, 10))
		}
		return callResult{}, err
	}
	if iter {
		c.rd.wake() // a read loop reads, and lends the response to this goroutine
	} else {
		c.rd.takeOver(ctx, p)
	}
	select {
	case r := <-p.ch:
		pendingPool.Put(p) // nothing else can send on it now
		return r, r.err
	case <-ctx.Done():
		if !c.forget(n) && iter {
			// The reader took the call: its result comes at once, and a
			// lent response must be read off for the reader to go on.
			if r := <-p.ch; r.lent != nil {
				r.lent.abandon()
			}
		}
		c.sendCancel(ctx, strconv.AppendUint(idBuf[:0], n, 10))
		return callResult{}, ctx.Err()
	}
}

// yieldToken gives back the concurrency token of the handler that owns ctx,
// if it runs on c, before it sends to its peer: the send may wait for the
// peer to read, and the peer may be waiting for us to read (progress
// notifications from both sides deadlocked), so the connection keeps serving.
func yieldToken(ctx context.Context, c *Conn) {
	if t, ok := ctx.Value(connKey{}).(*task); ok && t.conn == c {
		t.release()
		if t.inlineAt != 0 {
			c.rd.Hand(t.inlineAt, connrt.Loop, true) // served inline: its answer must be read while it waits
		}
	}
}

// forget forgets a call; it reports whether it was still waiting (false:
// its response was taken).
func (c *Conn) forget(id uint64) bool {
	c.mu.Lock()
	_, ok := c.pending.Take(id)
	c.mu.Unlock()
	return ok
}

// Notify sends a notification (a request without id; no response comes back).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if c.inv != nil {
		return c.inv.Notify(ctx, method, params)
	}
	return c.notifyDirect(ctx, method, params)
}

func (c *Conn) notifyDirect(ctx context.Context, method string, params any) error {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	var err error
	*buf, err = codec.AppendRequest(*buf, nil, method, params, &c.paramsSize)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return c.errClosed()
	}
	yieldToken(ctx, c)
	return c.sendFor(ctx, *buf)
}

// Batch sends the calls and notifications of b as one batch and waits for
// every response. It returns an error only if the batch could not be sent
// or ctx ended; each call's own outcome is in its Err field.
func (c *Conn) Batch(ctx context.Context, b *Batch) error {
	if c.inv != nil {
		return c.inv.Batch(ctx, b)
	}
	return c.batchDirect(ctx, b)
}

func (c *Conn) batchDirect(ctx context.Context, b *Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	msg, sb, err := encodeBatch((*buf)[:0], b, &c.seq)
	*buf = msg
	if err != nil {
		return err
	}
	defer sb.release()
	calls := sb.calls
	c.mu.Lock()
	if c.closed || c.pending.Ended() {
		c.mu.Unlock()
		return c.errClosed()
	}
	c.rd.noteOverlap()
	for _, w := range calls {
		c.pending.Add(w.id, w.p.group, w.p)
	}
	c.mu.Unlock()
	yieldToken(ctx, c)
	if err = c.sendFor(ctx, msg); err == nil {
		if len(calls) > 0 && c.rd.Load().State() == connrt.Parked {
			c.rd.takeOver(ctx, sb.records()...)
		}
		err = wait(ctx, sb, c.strictResults)
	}
	if err != nil {
		for _, w := range calls {
			c.forget(w.id) // not waited for
		}
		return err
	}
	if msg := sb.whole(); msg != nil {
		c.giveBack(msg) // decoded: nothing refers to the reply any more
	}
	return nil
}
