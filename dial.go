package jsonrpc

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/seedhq/jsonrpc/internal/netx"
)

// DialOption configures [Dial].
type DialOption func(*dialConfig)

type dialConfig struct {
	header         http.Header
	httpClient     *http.Client
	framing        Framing
	handler        Handler                                // WithHandler
	maxConcurrency int                                    // WithMaxConcurrency
	admit          func(ctx context.Context, n int) error // WithAdmit
	logger         *slog.Logger                           // WithLogger
	maxMessageSize int64
	tlsConfig      *tls.Config
	pingInterval   time.Duration // WebSocket keep-alive (WithPing)
	pingTimeout    time.Duration
	stallTimeout   time.Duration                   // WithStallTimeout: 0 for none
	stderr         io.Writer                       // DialCommand: where the command's stderr goes (WithStderr)
	grace          time.Duration                   // DialCommand: wait for exit before killing (WithGracePeriod)
	streamable     bool                            // http(s): a Streamable HTTP client (WithStreamableHTTP)
	convention     Convention                      // WithConvention
	onProgress     func(context.Context, Progress) // WithProgress
	strictResults  bool                            // WithStrictResults
	reconnect      *reconnectConfig                // WithReconnect: nil when off
	probeInterval  time.Duration                   // DialFailover (WithProbeInterval)
	interceptors   []Interceptor                   // WithInterceptors
	compress       bool                            // WithCompression
	mcpVersion     string                          // WithMCPVersion: "" for no MCP client
	mcpInfo        [2]string                       // WithMCPClientInfo: name, version
	mcpCaps        any                             // WithMCPCapabilities
	maxInputRounds int                             // WithMaxInputRounds
	mcpTasks       *func(taskID, status string)    // WithMCPTasks: nil when off
}

// WithHeader adds an HTTP header to every request (HTTP) or to the handshake (WebSocket).
func WithHeader(key, value string) DialOption {
	return func(c *dialConfig) {
		if c.header == nil {
			c.header = make(http.Header)
		}
		c.header.Add(key, value)
	}
}

// WithHTTPClient sets the *http.Client used for HTTP and WebSocket (default: a
// client of its own with keep-alive connections).
func WithHTTPClient(hc *http.Client) DialOption { return func(c *dialConfig) { c.httpClient = hc } }

// WithFraming sets the framing on tcp:// and unix:// (default [FramingLine]).
func WithFraming(f Framing) DialOption { return func(c *dialConfig) { c.framing = f } }

// WithHandler serves the calls and notifications the peer sends us with h,
// on bidirectional transports (WebSocket, TCP, unix, stdio, Streamable
// HTTP); without it the peer's requests get -32601 and its notifications
// are dropped. Inside h, [ConnFromContext] is the connection, so h can call
// the peer back.
func WithHandler(h Handler) DialOption { return func(c *dialConfig) { c.handler = h } }

// WithMaxConcurrency bounds how many of the peer's requests the
// WithHandler handler serves at once on the connection (default
// 8×GOMAXPROCS, as [Server.MaxConcurrency]); 1 serves them one at a time,
// in the order they arrive.
func WithMaxConcurrency(n int) DialOption { return func(c *dialConfig) { c.maxConcurrency = n } }

// WithAdmit has admit judge each message the peer sends us, with the number
// of requests it carries, as it is read (as [Server.Admit]): an error
// refuses the message's requests with it. It is called on the reading
// goroutine, in the order messages arrive, and must return quickly.
func WithAdmit(admit func(ctx context.Context, n int) error) DialOption {
	return func(c *dialConfig) { c.admit = admit }
}

// WithLogger sets where the connection logs what never reaches a handler
// (malformed messages, connection ends), at debug level (default: nowhere,
// as [Server.Logger]).
func WithLogger(l *slog.Logger) DialOption { return func(c *dialConfig) { c.logger = l } }

// WithMaxMessageSize bounds the messages read (default 10 MiB).
func WithMaxMessageSize(n int64) DialOption { return func(c *dialConfig) { c.maxMessageSize = n } }

// WithPing sets how often a WebSocket client pings the server (default
// [DefaultPingInterval]) and how long it waits for the pong (default
// [DefaultPingTimeout]) before closing the socket. An interval below zero
// turns pings off.
func WithPing(interval, timeout time.Duration) DialOption {
	return func(c *dialConfig) { c.pingInterval, c.pingTimeout = interval, timeout }
}

// WithTLSConfig sets the TLS configuration for https://, wss:// and tls://
// (package auth builds one from CA and client-certificate files).
func WithTLSConfig(cfg *tls.Config) DialOption { return func(c *dialConfig) { c.tlsConfig = cfg } }

func newDialConfig(opts []DialOption) *dialConfig {
	c := &dialConfig{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// peer is the Server that serves, on a client's connection, what the peer
// sends it: the options' handler and limits (the connection's own checks
// use its Server's message size limit: the same one as the transport's).
func (cfg *dialConfig) peer() *Server {
	h := cfg.handler
	if h == nil {
		h = NewMux()
	}
	return &Server{Handler: h, MaxMessageSize: cfg.maxMessageSize, MaxConcurrency: cfg.maxConcurrency, Admit: cfg.admit,
		Logger: cfg.logger, Convention: cfg.convention, OnProgress: cfg.onProgress}
}

// streamFraming is the framing of a client's stream: WithFraming's, or
// FramingLine (the client speaks first: there is nothing to detect).
func (cfg *dialConfig) streamFraming() Framing { return cmp.Or(cfg.framing, FramingLine) }

// newConn starts a client connection over ch with the options' server
// and client settings.
func (cfg *dialConfig) newConn(ch Channel) *Conn {
	c := NewConn(ch, cfg.peer())
	c.strictResults = cfg.strictResults
	c.inv = cfg.chain(direct{c})
	if cfg.stallTimeout > 0 {
		go c.watchStall(cfg.stallTimeout)
	}
	return c
}

// Dial connects to a JSON-RPC server named by a URL:
//
//	http://host:port/path, https://...  one HTTP POST per call (HTTPClient);
//	                                    with WithStreamableHTTP, Streamable HTTP (*Conn)
//	ws://host:port/path, wss://...      WebSocket, bidirectional (*Conn)
//	tcp://host:port                     TCP stream, bidirectional (*Conn)
//	tls://host:port                     TCP stream over TLS (WithTLSConfig)
//	unix:///path/to/socket              unix socket stream (*Conn)
//	unix://@name                        abstract unix socket (Linux)
//
// and any scheme registered with [RegisterTransport] (nats:// once
// github.com/seedhq/jsonrpc/nats is imported); a subprocess: [DialCommand].
// [DialConn] returns the *Conn of a connection's URL (all but plain HTTP).
// With [WithReconnect], a stream URL gives a [*ReconnectClient].
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (Client, error) {
	cfg := newDialConfig(opts)
	if cfg.reconnect != nil {
		return dialReconnecting(ctx, rawURL, cfg)
	}
	return dialConfigured(ctx, rawURL, cfg)
}

func dialConfigured(ctx context.Context, rawURL string, cfg *dialConfig) (Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	switch u.Scheme {
	case "http", "https":
		if cfg.streamable {
			return dialStreamable(u.String(), cfg)
		}
		return newHTTPClient(u.String(), cfg), nil
	case "ws", "wss":
		c, err := dialWebSocket(ctx, u.String(), cfg)
		if err != nil {
			return nil, err // not a nil *Conn in a non-nil Client
		}
		return c, nil
	case "tcp", "unix", "tls":
		nc, err := netx.DialStream(ctx, u, cfg.tlsConfig)
		if err != nil {
			return nil, err
		}
		return cfg.newConn(NewStream(nc, StreamOptions{Framing: cfg.streamFraming()})), nil
	}
	if t := registered(u.Scheme); t.dial != nil {
		c, err := t.dial(ctx, u, DialSettings{Header: cfg.header.Clone(), TLSConfig: cfg.tlsConfig, MaxMessageSize: cfg.maxMessageSize, cfg: cfg})
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, https, ws, wss, tcp, tls or unix" + orRegistered(func(t transport) bool { return t.dial != nil }) + ")")
}

// DialConn is [Dial] for the transports whose client is a connection, which
// the peer can call back and [Subscribe] can use: ws(s)://, tcp://, tls://,
// unix:// and http(s):// as Streamable HTTP (as with [WithStreamableHTTP]),
// and a registered scheme whose client is a *Conn. For plain HTTP or a
// registered scheme whose client is not a *Conn (nats://), the error wraps
// [ErrNoConnection] (a registered one is dialled and closed first).
func DialConn(ctx context.Context, rawURL string, opts ...DialOption) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		opts = append(slices.Clip(opts), WithStreamableHTTP())
	}
	c, err := Dial(ctx, rawURL, opts...)
	if err != nil {
		return nil, err
	}
	conn, ok := c.(*Conn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("jsonrpc: %s clients are not connections: %w", u.Scheme, ErrNoConnection)
	}
	return conn, nil
}
