package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// A handler that runs past Server.HandlerTimeout is answered at its
// deadline, without waiting for it to return: its context is cancelled
// (with context.Cause errHandlerTimeout) and the request gets
// CodeRequestTimeout "request timed out", the code and message
// go-ethereum sends for the same case, so that clients written for either
// read it alike. In a batch the deadline is the message's: the elements
// answered by then keep their responses, the others get the error.

// DefaultHandlerTimeout is the default Server.HandlerTimeout of HTTP requests.
const DefaultHandlerTimeout = 30 * time.Second

// DefaultHTTPBodyTimeout is the default Server.HTTPBodyTimeout.
const DefaultHTTPBodyTimeout = 30 * time.Second

var (
	errRequestTimeout = &Error{Code: CodeRequestTimeout, Message: "request timed out"}
	// errHandlerTimeout is the cause of a handler's context cancelled at its deadline.
	errHandlerTimeout = errors.New("jsonrpc: the handler ran past Server.HandlerTimeout")
)

// handlerTimeout is the timeout for requests on HTTP (answered with a JSON
// body) or on other transports.
func (s *Server) handlerTimeout(http bool) time.Duration {
	switch {
	case s.HandlerTimeout > 0:
		return s.HandlerTimeout
	case s.HandlerTimeout == 0 && http:
		return DefaultHandlerTimeout
	}
	return 0
}

func (s *Server) httpBodyTimeout() time.Duration {
	switch {
	case s.HTTPBodyTimeout > 0:
		return s.HTTPBodyTimeout
	case s.HTTPBodyTimeout == 0:
		return DefaultHTTPBodyTimeout
	}
	return 0
}

// timedServe is a message served under a timeout: the handlers' context,
// and the state it shares with the timer that answers it when the deadline
// passes first. It is one allocation (on HTTP, part of the request's one
// allocation, httpRequest), and the timer is reused from a pool: a fast
// handler that never waits on its context costs nothing more.
type timedServe struct {
	ctx   lazyCtx
	srv   *Server
	d     time.Duration
	data  []byte
	e     *wire.Envelope  // a single request
	elems []wire.Envelope // or a batch
	late  func([]byte)
	req   Request // a single request's, for callers that have none of their own (HTTP)

	mu       sync.Mutex
	timedOut bool     // the deadline passed first
	answered bool     // the reply is decided: later results are dropped
	resps    [][]byte // a batch's responses rendered in time, by element
	done     []bool
}

// record keeps the response of batch element i, unless it came too late.
func (ts *timedServe) record(i int, r []byte) {
	ts.mu.Lock()
	if !ts.answered && !ts.timedOut {
		ts.resps[i], ts.done[i] = r, true
	}
	ts.mu.Unlock()
}

// fire runs at the deadline: the handlers' context is cancelled and, with
// a late function, the reply due now is sent (ts.mu is held meanwhile, so
// that the handlers' return waits for it).
func (ts *timedServe) fire() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.answered {
		return
	}
	ts.timedOut = true
	ts.ctx.Cancel(context.DeadlineExceeded, errHandlerTimeout)
	if ts.late != nil {
		ts.answered = true
		ts.late(ts.lateReply())
	}
}

// lateReply is the reply once the deadline has passed (ts.mu held): the
// timeout error for each request not answered in time.
func (ts *timedServe) lateReply() []byte {
	ts.srv.logger().Warn("jsonrpc: a handler ran past the handler timeout; answered with -32002", "timeout", ts.d)
	if ts.elems != nil {
		return ts.srv.joinBatch(nil, ts.data, ts.elems, ts.resps, ts.done)
	}
	if id := idOf(ts.e, ts.data); ts.e.Kind == wire.KindRequest && !id.IsZero() {
		return appendResponse(nil, id, nil, errRequestTimeout) // not into out: serveOne may still use it
	}
	return nil
}

// timers fire a timedServe at its deadline, reused from message to message.
var timers = connrt.Timers[timedServe]{Fire: (*timedServe).fire}

// lazyCtx is a handler's context that its server cancels (at the handler
// timeout, once the message is answered), with the handler's peer; it
// costs nothing until somebody waits on it.
type lazyCtx = connrt.Ctx[peerKey, peerInfo]

// serving is one message to serve: a single request or a batch's, and
// how (see serveTimed).
type serving struct {
	conn  *Conn // the connection it arrived on (nil: a message transport)
	data  []byte
	e     *wire.Envelope  // a single request
	req   *Request        // its Request to fill in (nil: one is allocated)
	elems []wire.Envelope // or a batch's requests
	out   []byte          // where the reply is rendered (appended)
	d     time.Duration   // the handler timeout (0: none)
	late  func([]byte)    // answers at the deadline (nil: serveTimed returns that answer)
}

// serve serves sv without a timeout.
func (s *Server) serve(ctx context.Context, sv *serving) []byte {
	if sv.elems != nil {
		return s.serveBatch(ctx, sv.conn, sv.data, sv.elems, nil, sv.out)
	}
	return s.serveOne(ctx, sv.conn, sv.data, sv.e, sv.req, sv.out)
}

// serveTimed serves a single request sv.e (or the batch sv.elems) like
// serveOne (serveBatch) under the timeout sv.d (0: none). When sv.d passes
// first, the handlers' context is cancelled and the reply due then (the
// timeout error for each request not answered yet) goes to sv.late at
// once, and serveTimed returns nil once the handlers have returned; with a
// nil late, serveTimed returns that reply itself, once they have.
//
// ts, when not nil, is the storage to use, its context (ctx) set up by
// ts.ctx.Init (HTTP, whose context carries the peer, even without a
// timeout); otherwise one is allocated when sv.d > 0. Either way the
// handlers' context is cancelled once the message is answered.
func (s *Server) serveTimed(ctx context.Context, ts *timedServe, sv *serving) []byte {
	if ts == nil {
		if sv.d <= 0 {
			return s.serve(ctx, sv)
		}
		ts = new(timedServe)
		ts.ctx.Init(ctx, nil)
	}
	ts.srv, ts.d, ts.data, ts.e, ts.elems, ts.late = s, sv.d, sv.data, sv.e, sv.elems, sv.late
	defer ts.endCtx(sv.req)
	if sv.d <= 0 {
		return s.serve(&ts.ctx, sv)
	}
	ts.ctx.When = time.Now().Add(sv.d)
	if sv.elems != nil {
		ts.resps, ts.done = make([][]byte, len(sv.elems)), make([]bool, len(sv.elems))
	}
	timer := timers.Arm(ts, sv.d)
	var reply []byte
	if sv.elems != nil {
		s.serveBatch(&ts.ctx, sv.conn, sv.data, sv.elems, ts, nil)
	} else {
		reply = s.serveOne(&ts.ctx, sv.conn, sv.data, sv.e, sv.req, sv.out)
	}
	timer.Stop()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.answered:
		sv.req.dropStream()
		return nil // late has answered
	case ts.timedOut:
		sv.req.dropStream()
		reply = ts.lateReply()
	case sv.elems != nil:
		reply = s.joinBatch(sv.out, sv.data, sv.elems, ts.resps, nil)
	}
	ts.answered = true
	return reply
}
