package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"time"
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
// passes first. It is one allocation.
type timedServe struct {
	ctx    timedCtx
	cancel context.CancelCauseFunc
	srv    *Server
	d      time.Duration
	data   []byte
	e      *envelope  // a single request
	elems  []envelope // or a batch
	late   func([]byte)

	mu       sync.Mutex
	answered bool     // the reply is decided: later results are dropped
	resps    [][]byte // a batch's responses rendered in time, by element
	done     []bool
}

// timedCtx is the handlers' context: cancelled with errHandlerTimeout at
// the deadline, which it reports as a context with a deadline does.
type timedCtx struct {
	context.Context // a cancel context
	deadline        time.Time
}

func (c *timedCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Err is context.DeadlineExceeded once the deadline has passed.
func (c *timedCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == errHandlerTimeout {
		return context.DeadlineExceeded
	}
	return err
}

// record keeps the response of batch element i, unless it came too late.
func (ts *timedServe) record(i int, r []byte) {
	ts.mu.Lock()
	if !ts.answered && context.Cause(ts.ctx.Context) != errHandlerTimeout {
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
	ts.cancel(errHandlerTimeout)
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
		return ts.srv.joinBatch(ts.data, ts.elems, ts.resps, ts.done)
	}
	if id := ts.e.idOf(ts.data); ts.e.kind == kindRequest && !id.IsZero() {
		return appendResponse(nil, id, nil, errRequestTimeout) // not into out: serveOne may still use it
	}
	return nil
}

// serveTimed serves a single request e (or the batch elems) like serveOne
// (serveBatch) under the timeout d (0: none). When d passes first, the
// handlers' context is cancelled and the reply due then (the timeout error
// for each request not answered yet) goes to late at once, and serveTimed
// returns nil once the handlers have returned; with a nil late, serveTimed
// returns that reply itself, once they have.
func (s *Server) serveTimed(ctx context.Context, conn *Conn, data []byte, e *envelope, req *Request, elems []envelope, out []byte, d time.Duration, late func([]byte)) []byte {
	if d <= 0 {
		if elems != nil {
			return s.serveBatch(ctx, conn, data, elems, nil)
		}
		return s.serveOne(ctx, conn, data, e, req, out)
	}
	ts := &timedServe{srv: s, d: d, data: data, e: e, elems: elems, late: late}
	ts.ctx.Context, ts.cancel = context.WithCancelCause(ctx)
	ts.ctx.deadline = time.Now().Add(d)
	defer ts.cancel(nil)
	if elems != nil {
		ts.resps, ts.done = make([][]byte, len(elems)), make([]bool, len(elems))
	}
	timer := time.AfterFunc(d, ts.fire)
	var reply []byte
	if elems != nil {
		s.serveBatch(&ts.ctx, conn, data, elems, ts)
	} else {
		reply = s.serveOne(&ts.ctx, conn, data, e, req, out)
	}
	timer.Stop()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch {
	case ts.answered:
		return nil // late has answered
	case context.Cause(ts.ctx.Context) == errHandlerTimeout:
		reply = ts.lateReply()
	case elems != nil:
		reply = s.joinBatch(data, elems, ts.resps, nil)
	}
	ts.answered = true
	return reply
}
