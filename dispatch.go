package jsonrpc

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// The inbound path. Every transport hands each message it receives to
// [Server.dispatch], once, which applies the rules every message passes:
//
//	size → scan → the transport's take → batch rules → Admit
//
// and returns the requests to serve, which the transport then serves: a
// connection on its workers (connInbound.start, Conn.run), a message
// transport (HTTP, Process, NATS) at once (exchange.serve), a Streamable
// HTTP POST either way (postSink). Its sink takes the rest.

// inbound is one message to dispatch, with its scanning state.
type inbound struct {
	scanState
	data []byte
}

// sink is a transport's side of the inbound path.
type sink interface {
	// take takes what of the scanned message m is for the transport itself
	// and returns the requests to serve; false: nothing more is done with m.
	take(data []byte, m *wire.Message) ([]wire.Envelope, bool)
	// early takes the answer decided before any handler runs: the error of
	// a message too large, unparsed or breaking a batch rule, or Admit's
	// refusal (refused; reply holds the requests' errors, nil if none is due).
	early(reply []byte, refused error)
	// unparsed is told of a message that did not parse, before its error
	// goes to early (a connection's: it may be a response to its call).
	unparsed(data []byte, err error)
}

// dispatch takes one message through the inbound path (see above), with
// the sink to, and returns the admitted requests to serve: e alone, or a
// batch's; ok false: nothing to serve. ctx's values (the peer) are Admit's.
func (s *Server) dispatch(ctx context.Context, in *inbound, to sink) (e *wire.Envelope, batch []wire.Envelope, ok bool) {
	m := &in.m
	m.Limit = s.maxBatchLen()
	var rerr *Error
	if int64(len(in.data)) > s.maxMessageSize() {
		// The transport's own limit may be larger (a Channel built with
		// other options): MaxMessageSize holds on every path.
		rerr = errMessageTooLarge(s.maxMessageSize())
	} else if err := in.sc.Parse(in.data, s.maxDepth(), m); err != nil {
		if rerr = parseError(err); rerr.Code == CodeParseError {
			to.unparsed(in.data, err)
		}
	}
	if rerr != nil {
		to.early(s.logReply(ctx, rerr), nil)
		return nil, nil, false
	}
	requests, ok := to.take(in.data, m)
	if !ok {
		return nil, nil, false // a response, an event or a convention's notification: taken
	}
	if rerr := batchError(m); rerr != nil {
		to.early(s.logReply(ctx, rerr), nil)
		return nil, nil, false
	}
	if len(requests) == 0 {
		return nil, nil, false // a batch of responses only
	}
	if reply, err := s.admit(ctx, in.data, requests, m.Batch); err != nil {
		to.early(reply, err)
		return nil, nil, false
	}
	if m.Batch {
		return nil, requests, true
	}
	return &requests[0], nil, true
}

// batchError is the error to answer for a scanned batch that breaks a rule
// of its own: empty, or longer than MaxBatchLen (m.Limit).
func batchError(m *wire.Message) *Error {
	switch {
	case !m.Batch:
		return nil
	case len(m.Elems) == 0:
		return errEmptyBatch
	case m.N > m.Limit:
		return &Error{Code: CodeInvalidRequest, Message: "batch too long: " + strconv.Itoa(m.N) + " requests, the limit is " + strconv.Itoa(m.Limit)}
	}
	return nil
}

// exchange is the sink of a message transport: the caller serves what
// dispatch returns at once (serve) and finds the reply (nil: none is due)
// in reply.
type exchange struct {
	inbound
	srv  *Server
	ts   *timedServe   // the timeout's storage (nil: allocated when d > 0)
	d    time.Duration // the handler timeout (0: none)
	late func([]byte)  // answers at the deadline (see serve)
	out  []byte        // where a single reply is rendered

	reply   []byte
	refused error // Admit's error when it refused the message
}

// take leaves every element to serve: a response gets an error.
func (x *exchange) take(_ []byte, m *wire.Message) ([]wire.Envelope, bool) { return m.Elems, true }

func (x *exchange) early(reply []byte, refused error) { x.reply, x.refused = reply, refused }

func (*exchange) unparsed([]byte, error) {}

// serve serves the requests dispatch returned for x's message (under
// timedServe when there is a timeout or x brings its ts) and keeps the reply.
func (x *exchange) serve(ctx context.Context, e *wire.Envelope, batch []wire.Envelope) {
	ts := x.ts
	if ts == nil && x.d > 0 {
		ts = new(timedServe)
		ts.ctx.Init(ctx, nil)
	}
	var req *Request
	switch {
	case e != nil && ts != nil:
		req = &ts.req
	case e != nil:
		req = new(Request)
	}
	if req != nil {
		req.ID = idOf(e, x.data)
	}
	if ts != nil {
		ts.srv, ts.d, ts.data, ts.e, ts.elems, ts.late = x.srv, x.d, x.data, e, batch, x.late
		ctx = ts.start()
	}
	if batch != nil {
		x.reply = x.srv.serveBatch(ctx, nil, x.data, batch, ts, x.out)
	} else {
		x.reply = x.srv.serveElem(ctx, nil, x.data, e, req, x.out)
	}
	if ts != nil {
		x.reply = ts.stop(x.reply, x.out, req)
	}
}

var exchangePool = sync.Pool{New: func() any { return new(exchange) }}

// connInbound is the sink of a connection: a task serves the requests and
// writes the reply (start, Conn.run); an early answer is written at once.
type connInbound struct {
	inbound
	conn *Conn // the connection it arrived on
}

var connInboundPool = sync.Pool{New: func() any { return new(connInbound) }}

func (ci *connInbound) unparsed(data []byte, err error) { ci.conn.failUnparsed(data, err) }

func (ci *connInbound) early(reply []byte, _ error) {
	if len(reply) > 0 {
		ci.conn.sendReply(reply)
	}
}

// start makes the task that serves the requests dispatch returned and
// admits it (Conn.start); draining: Shutdown has begun, t is answered, not run.
func (ci *connInbound) start(e *wire.Envelope, batch []wire.Envelope) (t *task, draining bool) {
	t = &task{conn: ci.conn, data: ci.data, batch: batch, keep: batch != nil && len(batch) < len(ci.m.Elems)}
	if e != nil {
		t.env = *e
	}
	return ci.conn.start(t)
}

// take takes what of a scanned message is for the connection itself (the
// responses to its calls, and, alone, a subscription's event or a
// convention's notification) and returns the requests to serve.
func (ci *connInbound) take(data []byte, m *wire.Message) ([]wire.Envelope, bool) {
	c := ci.conn
	c.markBareResponses(data, m)
	if !m.Batch {
		e := &m.Elems[0]
		switch {
		case e.Kind == wire.KindResponse || e.Kind == wire.KindBadResponse:
			c.deliver(data, m.Elems, false)
			return nil, false
		case !e.ID.Present() && c.takeEvent(data, e):
			return nil, false
		case c.srv.Convention != ConventionNone && e.Kind == wire.KindRequest && !e.ID.Present() &&
			c.srv.conventionMessage(c.ctx, c, e.MethodName(data), paramsOf(data, e)):
			return nil, false
		}
		return m.Elems, true
	}
	var requests []wire.Envelope // the task keeps them (m goes back to its pool) and gives them back
	for i := range m.Elems {
		if k := m.Elems[i].Kind; k != wire.KindResponse && k != wire.KindBadResponse {
			if requests == nil {
				requests = getEnvelopes(len(m.Elems) - i)
			}
			requests = append(requests, m.Elems[i])
		}
	}
	if len(requests) < len(m.Elems) {
		c.deliver(data, m.Elems, true)
	}
	return requests, true // none: a batch of responses (the client's usual case)
}

// envelopesPool recycles the slices holding a batch's requests while it is
// served (see connInbound.take and Conn.run).
var envelopesPool = sync.Pool{New: func() any { return new([]wire.Envelope) }}

func getEnvelopes(n int) []wire.Envelope {
	p := envelopesPool.Get().(*[]wire.Envelope)
	return slices.Grow((*p)[:0], n)
}

// putEnvelopes gives back a slice of getEnvelopes once nothing uses it
// (up to 1024 envelopes: a huge batch's is not kept).
func putEnvelopes(s []wire.Envelope) {
	if cap(s) > 1024 {
		return
	}
	clear(s) // nothing pinned by an element's error
	s = s[:0]
	envelopesPool.Put(&s)
}
