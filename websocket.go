package jsonrpc

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/wsconn"
)

// The WebSocket transport: one JSON-RPC message per text frame, in both
// directions, on github.com/coder/websocket.

// Default WebSocket keep-alive: a ping every interval; a peer that has not
// answered within the timeout is taken for dead and the socket is closed.
const (
	DefaultPingInterval = 30 * time.Second
	DefaultPingTimeout  = 15 * time.Second
)

// WebSocketOptions configures [Server.WebSocketHandler] and the ws:// and
// wss:// listeners of [Server.Listen] ([ListenWebSocket]). The zero value
// is the default.
//
// A handshake passes the Origin and Host rules of every HTTP transport
// (Server.AllowedOrigins, Server.AllowedHosts).
type WebSocketOptions struct {
	// BufferSize is the size of each socket's read buffer and of its write
	// buffer (0: DefaultWebSocketBufferSize). An idle socket holds both; a
	// message larger than a buffer costs one more system call to read or
	// write.
	BufferSize int
	// PingInterval is how often the server pings each client (0:
	// DefaultPingInterval; negative: no pings), and PingTimeout how long
	// it waits for the pong (0: DefaultPingTimeout) before closing the
	// socket: the server's side of WithPing.
	PingInterval, PingTimeout time.Duration
	// Compression lets the server accept permessage-deflate (RFC 7692, no
	// context takeover) from clients that offer it (WithCompression): each
	// message of 512 bytes or more is compressed on its own. Off by default:
	// it costs CPU and buys nothing on a fast network. Size limits count
	// decompressed bytes.
	Compression bool
	// Subprotocols are the subprotocols the server agrees to (RFC 6455
	// section 1.9), in order of preference; the first one the client
	// offers is selected. Browsers and WHATWG clients fail a handshake that
	// selects none of those they offered. nil: DefaultWebSocketSubprotocols; an
	// empty non-nil slice selects none.
	Subprotocols []string
}

// DefaultWebSocketSubprotocols are the names JSON-RPC and MCP clients
// offer (the MCP SDKs offer "mcp").
var DefaultWebSocketSubprotocols = []string{"jsonrpc", "jsonrpc-2.0", "json-rpc", "mcp"}

// WebSocketHandler returns an http.Handler that upgrades requests to
// WebSocket and serves one Conn per socket with s, until the socket
// closes. The connection is fully bidirectional: a handler can call or
// notify the client through ConnFromContext(ctx).
//
// Each text frame carries one message (a request, a response or a batch).
// A binary frame closes the socket with status 1003 (unsupported data); a
// message over MaxMessageSize closes it with status 1009 (message too big).
// Server.Shutdown answers the requests already read, then closes the
// sockets (status 1000).
//
// The handler returns as soon as the socket is open: the connection is
// served in the background, with no goroutine of net/http's kept for it.
// Beyond Server.MaxConns sockets at once, handshakes get 503.
func (s *Server) WebSocketHandler(opts WebSocketOptions) http.Handler {
	bufferSize := orDefault(opts.BufferSize, DefaultWebSocketBufferSize)
	// The origin is checked below, by the rules of every HTTP transport.
	accept := websocket.AcceptOptions{InsecureSkipVerify: true, Subprotocols: opts.Subprotocols}
	if accept.Subprotocols == nil {
		accept.Subprotocols = DefaultWebSocketSubprotocols
	}
	if opts.Compression {
		accept.CompressionMode = websocket.CompressionNoContextTakeover
	}
	var open atomic.Int64 // sockets served by this handler
	limit := int64(s.maxConns())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, _, why := httpx.CheckOrigin(r, s.AllowedHosts, s.AllowedOrigins); !ok {
			s.logger().Info("jsonrpc: websocket handshake refused", "remote", r.RemoteAddr, "reason", why)
			http.Error(w, "jsonrpc: "+why+" (see Server.AllowedOrigins, Server.AllowedHosts)", http.StatusForbidden)
			return
		}
		if open.Add(1) > limit {
			open.Add(-1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy: too many connections", http.StatusServiceUnavailable)
			return
		}
		wc, err := websocket.Accept(wsconn.SmallBuffers{ResponseWriter: w, Size: bufferSize}, r, &accept)
		if err != nil {
			open.Add(-1)
			s.logger().Debug("jsonrpc: websocket handshake refused", "remote", r.RemoteAddr, "error", err)
			return // Accept has written the HTTP error
		}
		// The socket is hijacked: the Conn lives on after this handler
		// returns, so that net/http's goroutine (and its stack) goes.
		// Handlers see the peer (with the headers that outlive the
		// handshake) and the values its middleware stored (an authenticated
		// principal), not its cancellation.
		p := s.httpPeer(r, "ws")
		p.Header = wsconn.ConnectionHeader(r.Header)
		ctx := withPeer(context.WithoutCancel(r.Context()), s, p)
		c := newConnContext(ctx, newWSChannel(wc, s.maxMessageSize(), opts.PingInterval, opts.PingTimeout), s, func() { open.Add(-1) })
		// A socket accepted while the server shuts down may have missed
		// Shutdown's list of connections: close it here.
		if s.life.Closing() {
			c.Shutdown(context.Background())
		}
	})
}

// DefaultWebSocketBufferSize is the default size of a server socket's
// read buffer and of its write buffer (see WebSocketOptions.BufferSize). net/http
// hands a hijacked socket 4 KiB of each, which an idle connection would
// hold for its lifetime; 1 KiB holds a typical message.
const DefaultWebSocketBufferSize = 1 << 10

// DialWebSocket opens a WebSocket to url (ws:// or wss://) and returns the
// Conn on it; ctx bounds the handshake only. The options that apply, with
// their defaults, are in the package doc's table (WithHeader is sent in the
// handshake).
func DialWebSocket(ctx context.Context, url string, opts ...DialOption) (*Conn, error) {
	return dialWebSocket(ctx, url, newDialConfig(opts))
}

func dialWebSocket(ctx context.Context, url string, cfg *dialConfig) (*Conn, error) {
	hc := cfg.httpClient
	if hc == nil && cfg.tlsConfig != nil {
		hc = &http.Client{Transport: httpx.NewTransport(cfg.tlsConfig)}
	}
	dopts := &websocket.DialOptions{HTTPClient: hc, HTTPHeader: cfg.header}
	if cfg.compress {
		dopts.CompressionMode = websocket.CompressionNoContextTakeover
	}
	wc, resp, err := websocket.Dial(ctx, url, dopts)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: err.Error()}
		}
		return nil, fmt.Errorf("jsonrpc: websocket dial %s: %w", url, err)
	}
	limit := orDefault(cfg.maxMessageSize, DefaultMaxMessageSize)
	return cfg.newConn(newWSChannel(wc, limit, cfg.pingInterval, cfg.pingTimeout)), nil
}

// newWSChannel reads messages of up to limit bytes from wc and pings the
// peer every interval (0: DefaultPingInterval; negative: never), waiting
// timeout (0: DefaultPingTimeout) for the pong.
func newWSChannel(wc *websocket.Conn, limit int64, interval, timeout time.Duration) *wsconn.Channel {
	return wsconn.New(wc, wsconn.Options{Limit: limit, PingInterval: cmp.Or(interval, DefaultPingInterval), PingTimeout: orDefault(timeout, DefaultPingTimeout),
		Closed: ErrClosed, TooLarge: func(limit int64) error {
			return &FrameError{Fatal: true, Code: CodeInvalidRequest, Msg: framing.TooLargeMessage(limit), limit: limit}
		}})
}
