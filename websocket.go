package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/netx"
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
type WebSocketOptions struct {
	// OriginPatterns allows cross-origin handshakes from the given host
	// patterns, besides Server.AllowedOrigins (which HTTP shares)
	// (path.Match syntax, e.g. "*.example.com"; with a scheme,
	// "https://app.example.com"). By default only same-origin browsers
	// (and clients that send no Origin header) are accepted. Allowing
	// other origins exposes the server to cross-site requests from those
	// origins: only list ones you trust.
	OriginPatterns []string
	// InsecureSkipVerify accepts handshakes from any origin. Any web page
	// a user visits can then talk to the server with the user's cookies:
	// use it only when the server authenticates requests by other means.
	InsecureSkipVerify bool
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
	// context takeover) from clients that offer it (the server's side of
	// WithCompression): each message of 512 bytes or more is then
	// compressed on its own. Off by default: it costs CPU on both ends for
	// every large message, and buys nothing on a fast network. Message
	// size limits count decompressed bytes.
	Compression bool
}

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
	bufferSize := opts.BufferSize
	if bufferSize <= 0 {
		bufferSize = DefaultWebSocketBufferSize
	}
	accept := websocket.AcceptOptions{
		OriginPatterns:     append(slices.Clip(s.AllowedOrigins), opts.OriginPatterns...),
		InsecureSkipVerify: opts.InsecureSkipVerify,
	}
	if opts.Compression {
		accept.CompressionMode = websocket.CompressionNoContextTakeover
	}
	var open atomic.Int64 // sockets served by this handler
	limit := int64(s.maxConns())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.AllowedHosts) > 0 && !netx.MatchHost(s.AllowedHosts, r.Host) {
			s.logger().Info("jsonrpc: websocket handshake refused", "remote", r.RemoteAddr, "reason", "host "+r.Host+" is not allowed")
			http.Error(w, "jsonrpc: host "+strconv.Quote(r.Host)+" is not allowed (see Server.AllowedHosts)", http.StatusForbidden)
			return
		}
		if open.Add(1) > limit {
			open.Add(-1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy: too many connections", http.StatusServiceUnavailable)
			return
		}
		wc, err := websocket.Accept(smallBuffers{w, bufferSize}, r, &accept)
		if err != nil {
			open.Add(-1)
			s.logger().Debug("jsonrpc: websocket handshake refused", "remote", r.RemoteAddr, "error", err)
			return // Accept has written the HTTP error
		}
		// The socket is hijacked: the Conn lives on after this handler
		// returns, so that net/http's goroutine (and its stack) goes.
		// Handlers see the peer and the values the handshake's middleware
		// stored (an authenticated principal), not its cancellation.
		ctx := withPeer(context.WithoutCancel(r.Context()), s, s.wsPeer(r))
		c := newConnContext(ctx, newWSChannel(wc, s.maxMessageSize(), opts.PingInterval, opts.PingTimeout), s, func() { open.Add(-1) })
		// A socket accepted while the server shuts down may have missed
		// Shutdown's list of connections: close it here.
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			c.Shutdown(context.Background())
		}
	})
}

// DefaultWebSocketBufferSize is the default size of a server socket's
// read buffer and of its write buffer (see WebSocketOptions.BufferSize). net/http
// hands a hijacked socket 4 KiB of each, which an idle connection would
// hold for its lifetime; 1 KiB holds a typical message.
const DefaultWebSocketBufferSize = 1 << 10

// smallBuffers is the handshake's ResponseWriter whose Hijack gives the
// socket buffers of the given size, keeping any bytes the client sent
// after its handshake.
type smallBuffers struct {
	http.ResponseWriter
	size int
}

func (w smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	var src io.Reader = nc
	n := brw.Reader.Buffered()
	if n > 0 {
		early, _ := brw.Reader.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), nc)
	}
	br := bufio.NewReaderSize(src, max(w.size, n))
	if n > 0 {
		br.Peek(n) // the early bytes are buffered, as they were in brw
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, w.size)), nil
}

// connectionHeader returns the handshake's headers a WebSocket connection
// keeps for its lifetime (Peer.Header): all but those that served only the
// upgrade, which would otherwise stay in memory on every idle connection.
// wsPeer is the Peer of a WebSocket connection: the handshake's, with the
// headers that concern the connection (it outlives the request).
func (s *Server) wsPeer(r *http.Request) Peer {
	p := s.httpPeer(r, "ws")
	p.Header = connectionHeader(r.Header)
	return p
}

func connectionHeader(h http.Header) http.Header {
	keep := 0
	for k := range h {
		if !upgradeOnly(k) {
			keep++
		}
	}
	if keep == 0 {
		return nil
	}
	out := make(http.Header, keep)
	for k, v := range h {
		if !upgradeOnly(k) {
			out[k] = v
		}
	}
	return out
}

// upgradeOnly reports whether the (canonical) header name k matters only
// to the WebSocket handshake. Sec-WebSocket-Protocol is kept: it names
// what the client offered.
func upgradeOnly(k string) bool {
	switch k {
	case "Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions":
		return true
	}
	return false
}

// DialWebSocket opens a WebSocket to url (ws:// or wss://) and returns the
// Conn on it. Options: WithHeader (sent in the handshake), WithHTTPClient,
// WithTLSConfig, WithHandler (serves the server's calls to the client;
// without it they get -32601), WithMaxMessageSize (default 10 MiB), WithPing
// (default: a ping every DefaultPingInterval). ctx bounds the handshake only.
func DialWebSocket(ctx context.Context, url string, opts ...DialOption) (*Conn, error) {
	return dialWebSocketConn(ctx, url, newDialConfig(opts))
}

func dialWebSocket(ctx context.Context, url string, cfg *dialConfig) (Client, error) {
	c, err := dialWebSocketConn(ctx, url, cfg)
	if err != nil {
		return nil, err // not a nil *Conn in a non-nil Client
	}
	return c, nil
}

func dialWebSocketConn(ctx context.Context, url string, cfg *dialConfig) (*Conn, error) {
	hc := cfg.httpClient
	if hc == nil && cfg.tlsConfig != nil {
		hc = &http.Client{Transport: newTransport(cfg.tlsConfig)}
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
	limit := cfg.maxMessageSize
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	return cfg.newConn(newWSLending(newWSChannel(wc, limit, cfg.pingInterval, cfg.pingTimeout))), nil
}

// wsChannel is a Channel over a WebSocket. Writes are safe for concurrent
// use (the library serialises frames); Recv runs on one goroutine.
type wsChannel struct {
	wc      *websocket.Conn
	limit   int64 // the read limit: bytes in one message
	once    sync.Once
	pingErr atomic.Pointer[error] // why a ping closed the socket

	// Pings run on a timer, not on a goroutine of their own: an idle
	// socket costs no goroutine between pings.
	mu      sync.Mutex
	closed  bool
	timer   *time.Timer
	pinging sync.WaitGroup // a ping in progress
}

// newWSChannel reads messages of up to limit bytes from wc.
func newWSChannel(wc *websocket.Conn, limit int64, interval, timeout time.Duration) *wsChannel {
	if interval == 0 {
		interval = DefaultPingInterval
	}
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	wc.SetReadLimit(limit)
	ch := &wsChannel{wc: wc, limit: limit}
	if interval > 0 {
		ch.timer = time.AfterFunc(interval, func() { ch.ping(interval, timeout) })
	}
	return ch
}

// ping pings the peer and schedules the next ping; when a pong does not
// come back in time, it records why and drops the socket, which ends Recv.
func (ch *wsChannel) ping(interval, timeout time.Duration) {
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		return
	}
	ch.pinging.Add(1)
	ch.mu.Unlock()
	defer ch.pinging.Done()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := ch.wc.Ping(ctx)
	cancel()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return // closing anyway
	}
	if err != nil {
		perr := fmt.Errorf("jsonrpc: websocket peer did not answer a ping within %s: %w", timeout, err)
		ch.pingErr.Store(&perr)
		ch.wc.CloseNow()
		return
	}
	ch.timer.Reset(interval)
}

// errBinaryFrame ends a connection whose peer sent a binary frame.
var errBinaryFrame = errors.New("jsonrpc: the peer sent a binary WebSocket frame; JSON-RPC messages go in text frames")

func (ch *wsChannel) Recv() ([]byte, error) {
	typ, data, err := ch.wc.Read(context.Background())
	if err != nil {
		return nil, ch.readError(err)
	}
	if typ != websocket.MessageText {
		return nil, ch.binaryFrame()
	}
	return data, nil
}

// readError is the error of a failed read.
func (ch *wsChannel) readError(err error) error {
	if p := ch.pingErr.Load(); p != nil {
		return *p
	}
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
		return io.EOF
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return tooLarge(ch.limit, true) // the socket is closed with 1009
	}
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("jsonrpc: websocket: %w", err)
}

// binaryFrame closes the socket of a peer that sent a binary frame.
func (ch *wsChannel) binaryFrame() error {
	ch.wc.Close(websocket.StatusUnsupportedData, "binary frames are not supported: send JSON-RPC messages as text frames")
	return errBinaryFrame
}

func (ch *wsChannel) Send(msg []byte) error {
	if err := ch.wc.Write(context.Background(), websocket.MessageText, msg); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("jsonrpc: websocket write: %w", err)
	}
	return nil
}

// Close performs the closing handshake (status 1000) and stops the pinger.
func (ch *wsChannel) Close() error {
	ch.once.Do(func() {
		ch.mu.Lock()
		ch.closed = true
		if ch.timer != nil {
			ch.timer.Stop()
		}
		ch.mu.Unlock()
		ch.wc.Close(websocket.StatusNormalClosure, "")
		ch.pinging.Wait()
	})
	return nil
}
