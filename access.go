package jsonrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Access control: who is at the other end (Peer), the hooks that admit and
// authorize requests before any handler runs (Server.Admit,
// Server.Authorize), and the Origin and Host checks of HTTP and WebSocket.
// The policies themselves (tokens, scopes, rate limits) live in package
// auth; the core only calls them.

// Server-defined error codes of the access hooks.
const (
	// CodeForbidden is the error of a request that Server.Authorize
	// refused: the caller may not call this method. The handler does not run.
	CodeForbidden = -32003
	// CodeLimitExceeded is the error of the requests of a message that
	// Server.Admit refused (the code EIP-1474 uses): the caller is over a
	// rate limit. Over HTTP the refusal is 429 Too Many Requests instead.
	CodeLimitExceeded = -32005
)

// LimitError is returned by a Server.Admit hook for a caller over its rate
// limit: the requests get CodeLimitExceeded, and HTTP answers 429 with a
// Retry-After of RetryAfter (rounded up to whole seconds, at least 1).
type LimitError struct {
	RetryAfter time.Duration // when the caller may try again; 0 if unknown
}

func (e *LimitError) Error() string {
	if e.RetryAfter > 0 {
		return "limit exceeded: retry after " + e.RetryAfter.String()
	}
	return "limit exceeded"
}

// Peer describes the other end of the connection a request came on.
type Peer struct {
	// Transport is "http", "ws", "tcp", "unix" or "stdio" (TLS included:
	// https is "http"); "" for a Channel served with ServeConn or NewConn.
	Transport string
	// RemoteAddr is the peer's address: host:port on TCP, HTTP and
	// WebSocket; the socket's path (often empty) on unix sockets; "" on stdio.
	RemoteAddr string
	// TLS is the state of the TLS connection (for mutual TLS,
	// PeerCertificates and VerifiedChains hold the client's certificate);
	// nil without TLS.
	TLS *tls.ConnectionState
	// Header holds the HTTP request's headers (http) or the WebSocket
	// handshake's (ws) without those that served only the upgrade
	// (Connection, Upgrade, Sec-WebSocket-Key, -Version, -Extensions); nil
	// on other transports. Treat it as read-only.
	Header http.Header
}

type peerKey struct{}

// peerInfo is the value under peerKey: the peer, and the Server serving it
// (for Authorized).
type peerInfo struct {
	peer Peer
	srv  *Server

	mu    sync.Mutex
	reply http.Header // HTTP: headers for the response (SetResponseHeader)
}

func withPeer(ctx context.Context, srv *Server, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, &peerInfo{peer: p, srv: srv})
}

// PeerFromContext returns the peer of the request whose handler (or access
// hook) received ctx, on every transport; for WebSocket, the peer of the
// handshake. It reports false outside a served request.
func PeerFromContext(ctx context.Context) (Peer, bool) {
	if pi, ok := ctx.Value(peerKey{}).(*peerInfo); ok {
		return pi.peer, true
	}
	return Peer{}, false
}

// Authorized reports whether the Server serving ctx's request lets the
// caller call method, by asking its Authorize hook (true when it has none,
// and outside a served request). rpc.discover uses it to list only the
// methods the caller may call.
func Authorized(ctx context.Context, method string) bool {
	srv := serverOf(ctx)
	return srv == nil || srv.Authorize == nil || srv.Authorize(ctx, method) == nil
}

// checkOrigin applies the Origin and Host rules (httpx.CheckOrigin) to an
// HTTP request: a refused one gets 403 and is logged, an allowed
// cross-origin one its CORS headers, and a preflight its answer. It reports
// whether the request is left to serve.
func (s *Server) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	ok, cors, why := httpx.CheckOrigin(r, s.AllowedHosts, s.AllowedOrigins)
	if !ok {
		s.logger().Info("jsonrpc: HTTP request refused", "remote", s.remoteAddr(r), "reason", why)
		http.Error(w, "jsonrpc: "+why+" (see Server.AllowedOrigins, Server.AllowedHosts)", http.StatusForbidden)
		return false
	}
	return !cors || !httpx.ServeCORS(w, r)
}

// authorize asks the Authorize hook about one request; it returns the error
// to answer with, or nil to go on. Denials are logged with the method and
// the peer only (never a credential).
func (s *Server) authorize(ctx context.Context, name []byte) *Error {
	if s.Authorize == nil {
		return nil
	}
	method := string(name)
	err := s.Authorize(ctx, method)
	if err == nil {
		return nil
	}
	p, _ := PeerFromContext(ctx)
	s.logger().Info("jsonrpc: call denied", "method", truncate(method, 128), "remote", p.RemoteAddr, "reason", err.Error())
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return &Error{Code: CodeForbidden, Message: "forbidden: " + err.Error()}
}

// admit asks the Admit hook about a message whose elements are elems (the
// responses among them excluded): err is the hook's refusal, and reply then
// the answer to the message's requests (nil when it has none).
func (s *Server) admit(ctx context.Context, data []byte, elems []wire.Envelope, batch bool) (reply []byte, err error) {
	if s.Admit == nil {
		return nil, nil
	}
	n := 0
	for i := range elems {
		if k := elems[i].Kind; k != wire.KindResponse && k != wire.KindBadResponse {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if err = s.Admit(ctx, n); err == nil {
		return nil, nil
	}
	rpcErr := &Error{Code: CodeLimitExceeded, Message: "limit exceeded"}
	if e := (*Error)(nil); errors.As(err, &e) && e != nil {
		rpcErr = e
	}
	p, _ := PeerFromContext(ctx)
	s.logger().Debug("jsonrpc: message refused", "requests", n, "remote", p.RemoteAddr, "reason", err.Error())
	return refusal(data, elems, batch, rpcErr), err
}

// refusal is the reply to a refused message: rpcErr for each of its calls
// (nil when it has none).
func refusal(data []byte, elems []wire.Envelope, batch bool, rpcErr *Error) (reply []byte) {
	for i := range elems {
		e := &elems[i]
		if k := e.Kind; k == wire.KindResponse || k == wire.KindBadResponse || !e.ID.Present() {
			continue // a response, or a notification: no reply
		}
		if batch {
			reply = append(reply, ',') // the first one becomes the '['
		}
		reply = appendResponse(reply, idOf(e, data), nil, rpcErr)
	}
	if batch && len(reply) > 0 {
		reply[0] = '['
		reply = append(reply, ']')
	}
	return reply
}
