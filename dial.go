package jsonrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// DialOption configures [Dial].
type DialOption func(*dialConfig)

type dialConfig struct {
	header         http.Header
	httpClient     *http.Client
	framing        Framing
	server         *Server
	maxMessageSize int64
	tlsConfig      *tls.Config
	pingInterval   time.Duration // WebSocket keep-alive (WithPing)
	pingTimeout    time.Duration
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

// WithServer serves the peer's calls with srv on bidirectional transports
// (WebSocket, TCP, unix, stdio, Streamable HTTP); by default they get -32601. Its limits also
// apply to the messages read.
func WithServer(srv *Server) DialOption { return func(c *dialConfig) { c.server = srv } }

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
	if c.maxMessageSize == 0 && c.server != nil {
		c.maxMessageSize = c.server.maxMessageSize()
	}
	if c.server == nil && (c.maxMessageSize > 0 || c.convention != ConventionNone) {
		// The connection's own checks use its Server's limit: the same one.
		c.server = &Server{Handler: NewMux(), MaxMessageSize: c.maxMessageSize, Convention: c.convention, OnProgress: c.onProgress}
	}
	return c
}

// newConn starts a client connection over ch with the options' server
// and client settings.
func (cfg *dialConfig) newConn(ch Channel) *Conn {
	c := NewConn(ch, cfg.server)
	c.strictResults = cfg.strictResults
	c.inv = cfg.chain(connDirect{c})
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
// github.com/seedhq/jsonrpc/nats is imported). To talk to a subprocess over its stdin and stdout, use [DialCommand].
//
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
		return dialWebSocket(ctx, u.String(), cfg)
	case "tcp", "unix", "tls":
		network, addr := u.Scheme, u.Host
		if u.Scheme == "unix" {
			addr = unixPath(u)
		}
		if addr == "" {
			return nil, errors.New("jsonrpc: URL " + rawURL + " names no address")
		}
		var nc net.Conn
		if u.Scheme == "tls" {
			d := tls.Dialer{Config: cfg.tlsConfig}
			nc, err = d.DialContext(ctx, "tcp", addr)
		} else {
			var d net.Dialer
			nc, err = d.DialContext(ctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		framing := cfg.framing
		if framing == FramingAuto {
			framing = FramingLine
		}
		return cfg.newConn(NewStream(nc, StreamOptions{Framing: framing, MaxMessageSize: cfg.maxMessageSize})), nil
	}
	if c, ok, err := dialRegistered(ctx, u, cfg); ok {
		return c, err
	}
	return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, https, ws, wss, tcp, tls or unix" + orRegistered(func(t transport) bool { return t.dial != nil }) + ")")
}

// unixPath returns the socket path of unix:///path (or unix:path), or
// "@name" for the abstract socket of unix://@name (Linux).
func unixPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	if u.User != nil {
		return u.User.String() + "@" + u.Host + u.Path
	}
	return u.Host + u.Path
}
