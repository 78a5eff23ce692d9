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

// deadline is the state a message served under a timeout shares with the
// timer that answers it when the deadline passes first.
type deadline struct {
	mu       sync.Mutex
	answered bool     // the reply is decided: later results are dropped
	resps    [][]byte // a batch's responses rendered in time, by element
	done     []bool
}

// record keeps the response of batch element i, unless it came too late.
func (dl *deadline) record(ctx context.Context, i int, r []byte) {
	dl.mu.Lock()
	if !dl.answered && context.Cause(ctx) != errHandlerTimeout {
		dl.resps[i], dl.done[i] = r, true
	}
	dl.mu.Unlock()
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
	ctx, cancel := context.WithTimeoutCause(ctx, d, errHandlerTimeout)
	defer cancel()
	dl := &deadline{}
	if elems != nil {
		dl.resps, dl.done = make([][]byte, len(elems)), make([]bool, len(elems))
	}
	// lateReply is the reply when the deadline has passed (dl.mu held).
	lateReply := func() []byte {
		s.logger().Warn("jsonrpc: a handler ran past the handler timeout; answered with -32002", "timeout", d)
		if elems != nil {
			return s.joinBatch(data, elems, dl.resps, dl.done)
		}
		if id := e.idOf(data); e.kind == kindRequest && !id.IsZero() {
			return appendResponse(nil, id, nil, errRequestTimeout) // not out: serveOne may still be using it
		}
		return nil
	}
	if late != nil {
		stop := context.AfterFunc(ctx, func() {
			dl.mu.Lock()
			defer dl.mu.Unlock() // held while late writes, so that the handler's return waits for it
			if dl.answered || context.Cause(ctx) != errHandlerTimeout {
				return
			}
			dl.answered = true
			late(lateReply())
		})
		defer stop()
	}
	var reply []byte
	if elems != nil {
		s.serveBatch(ctx, conn, data, elems, dl)
	} else {
		reply = s.serveOne(ctx, conn, data, e, req, out)
	}
	dl.mu.Lock()
	defer dl.mu.Unlock()
	switch {
	case dl.answered:
		return nil // late has answered
	case context.Cause(ctx) == errHandlerTimeout:
		dl.answered = true
		return lateReply()
	case elems != nil:
		dl.answered = true
		return s.joinBatch(data, elems, dl.resps, nil)
	}
	dl.answered = true
	return reply
}
