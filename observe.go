package jsonrpc

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
)

// Hooks for observability: middleware that sees every request the server
// dispatches (Server.Middleware), the error code a handler's error becomes
// (CodeOf), and the one place protocol errors are logged (logProtocol). Who
// a request came from is in its context (PeerFromContext).

// CodeOf returns the error code a Server sends for a handler's error: the
// code of an *Error in err's chain, CodeRequestCanceled for a cancelled or
// expired context, CodeInternalError for any other error, and 0 for nil.
func CodeOf(err error) int64 {
	if err == nil {
		return 0
	}
	var e *Error
	switch {
	case errors.As(err, &e) && e != nil:
		return e.Code
	case errors.As(err, &e):
		return CodeInternalError // a nil *Error
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return CodeRequestCanceled
	}
	return CodeInternalError
}

// notFound answers requests for methods a Mux does not have, when they go
// through Server.Middleware.
var notFound = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
	return nil, methodNotFound(req.Method)
})

// chain is Server.Middleware around the handler chosen for each request
// (Request.target), built once.
func (s *Server) chain() Handler {
	s.mwOnce.Do(func() {
		inner := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			h := req.target
			if h == nil {
				h = s.Handler // a middleware passed on a Request of its own
			}
			return s.run(ctx, h, req)
		})
		s.mwChain = Chain(inner, s.Middleware...)
	})
	return s.mwChain
}

// logProtocol logs, at debug level, a message the server could not serve
// as a request (a parse error, an invalid request, a message too large) or
// the end of a connection. It is called once, where the problem is found.
func (s *Server) logProtocol(ctx context.Context, msg string, e *Error, err error) {
	l := s.logger()
	if !l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := appendPeer(ctx, make([]slog.Attr, 0, 5))
	if e != nil {
		attrs = append(attrs, slog.Int64("code", e.Code), slog.String("error", e.Message))
	} else if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.LogAttrs(ctx, slog.LevelDebug, msg, attrs...)
}

// appendPeer appends the transport and address of ctx's peer, when known.
func appendPeer(ctx context.Context, attrs []slog.Attr) []slog.Attr {
	p, _ := PeerFromContext(ctx)
	if p.Transport != "" {
		attrs = append(attrs, slog.String("transport", p.Transport))
	}
	if p.RemoteAddr != "" {
		attrs = append(attrs, slog.String("remote", p.RemoteAddr))
	}
	return attrs
}

// logReply logs a reply that carries only an error (the server's answer to a
// message it could not serve) and returns it.
func (s *Server) logReply(ctx context.Context, e *Error) []byte {
	s.logProtocol(ctx, "jsonrpc: "+protocolMessage(e.Code), e, nil)
	return appendResponse(nil, ID{}, nil, e)
}

func protocolMessage(code int64) string {
	switch code {
	case CodeParseError:
		return "parse error"
	case CodeInvalidRequest:
		return "invalid request"
	}
	return "protocol error " + strconv.FormatInt(code, 10)
}

type headerKey struct{}

// ContextWithHeader returns a copy of ctx that makes the HTTP client send
// h's fields with the POST of each call, notification or batch made with
// it, replacing the fields of the same names set with WithHeader. It is
// how per-call headers (a trace context, a request id) reach the server;
// the other transports ignore it.
func ContextWithHeader(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headerKey{}, h)
}

func headerFromContext(ctx context.Context) http.Header {
	h, _ := ctx.Value(headerKey{}).(http.Header)
	return h
}
