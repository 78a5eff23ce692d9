package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/wire"
)

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
	if s.HandlerTimeout == 0 && http {
		return DefaultHandlerTimeout
	}
	return max(s.HandlerTimeout, 0)
}

func (s *Server) httpBodyTimeout() time.Duration {
	if s.HTTPBodyTimeout < 0 {
		return 0
	}
	return orDefault(s.HTTPBodyTimeout, DefaultHTTPBodyTimeout)
}

// timedServe is a message served under a timeout: the handlers' context
// and the state it shares with the pooled timer that answers it when the
// deadline passes first, in one allocation.
type timedServe struct {
	ctx   lazyCtx
	srv   *Server
	d     time.Duration
	data  []byte
	e     *wire.Envelope  // a single request
	elems []wire.Envelope // or a batch
	late  func([]byte)
	req   Request                   // a single request's, for callers that have none of their own (HTTP)
	timer *connrt.Timer[timedServe] // armed by start when d > 0

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
// late, the reply due now is sent (under ts.mu: stop waits for it).
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
		return appendResponse(nil, id, nil, errRequestTimeout) // not into out: serveElem may still use it
	}
	return nil
}

// timers fire a timedServe at its deadline, reused from message to message.
var timers = connrt.Timers[timedServe]{Fire: (*timedServe).fire}

// lazyCtx is a handler's context that its server cancels (at the handler
// timeout, once the message is answered), with the handler's peer; it
// costs nothing until somebody waits on it.
type lazyCtx = connrt.Ctx[peerKey, peerInfo]

// start begins serving under ts (srv, d, data, e or elems and late set):
// the deadline's timer is armed when d > 0. It returns the handlers' context.
func (ts *timedServe) start() context.Context {
	if ts.elems != nil {
		ts.resps, ts.done = make([][]byte, len(ts.elems)), make([]bool, len(ts.elems))
	}
	if ts.d > 0 {
		ts.ctx.When = time.Now().Add(ts.d)
		ts.timer = timers.Arm(ts, ts.d)
	}
	return &ts.ctx
}

// stop ends serving under ts once its handlers have returned and returns
// the reply: reply (a batch's joined into out), the timeout error for each
// request not answered in time, or nil if late sent it. The handlers'
// context then ends.
func (ts *timedServe) stop(reply, out []byte, req *Request) []byte {
	if ts.timer != nil {
		ts.timer.Stop()
	}
	ts.mu.Lock()
	switch {
	case ts.answered:
		req.dropStream()
		reply = nil // late has answered
	case ts.timedOut:
		req.dropStream()
		reply = ts.lateReply()
	case ts.elems != nil:
		reply = ts.srv.joinBatch(out, ts.data, ts.elems, ts.resps, nil)
	}
	ts.answered = true
	ts.mu.Unlock()
	if req != nil && req.stream != nil && *req.stream != nil {
		(*req.stream).ctx = &ts.ctx // a Stream still to be written: its slot cancels it
	} else {
		ts.ctx.Cancel(context.Canceled, context.Canceled)
	}
	return reply
}
