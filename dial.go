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
	"os"
	"sync"
	"time"
)

// DialOption configures Dial.
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
	stderr         io.Writer     // DialCommand: where the command's stderr goes (WithStderr)
	grace          time.Duration // DialCommand: wait for exit before killing (WithGracePeriod)
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

// WithFraming sets the framing on tcp:// and unix:// (default FramingLine).
func WithFraming(f Framing) DialOption { return func(c *dialConfig) { c.framing = f } }

// WithServer serves the peer's calls with srv on bidirectional transports
// (WebSocket, TCP, unix, stdio); by default they get -32601. Its limits also
// apply to the messages read.
func WithServer(srv *Server) DialOption { return func(c *dialConfig) { c.server = srv } }

// WithMaxMessageSize bounds the messages read (default 10 MiB).
func WithMaxMessageSize(n int64) DialOption { return func(c *dialConfig) { c.maxMessageSize = n } }

// WithPing sets how often a WebSocket client pings the server (default
// DefaultPingInterval) and how long it waits for the pong (default
// DefaultPingTimeout) before closing the socket. An interval below zero
// turns pings off.
func WithPing(interval, timeout time.Duration) DialOption {
	return func(c *dialConfig) { c.pingInterval, c.pingTimeout = interval, timeout }
}

// WithTLSConfig sets the TLS configuration for https:// and wss://.
func WithTLSConfig(cfg *tls.Config) DialOption { return func(c *dialConfig) { c.tlsConfig = cfg } }

func newDialConfig(opts []DialOption) *dialConfig {
	c := &dialConfig{}
	for _, o := range opts {
		o(c)
	}
	if c.maxMessageSize == 0 && c.server != nil {
		c.maxMessageSize = c.server.maxMessageSize()
	}
	return c
}

// Dial connects to a JSON-RPC server named by a URL:
//
//	http://host:port/path, https://...  one HTTP POST per call (HTTPClient)
//	ws://host:port/path, wss://...      WebSocket, bidirectional (*Conn)
//	tcp://host:port                     TCP stream, bidirectional (*Conn)
//	unix:///path/to/socket              unix socket stream (*Conn)
//
// and any scheme registered with RegisterTransport (nats:// once
// github.com/seedhq/jsonrpc/nats is imported). To talk to a subprocess over its stdin and stdout, use DialCommand.
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	cfg := newDialConfig(opts)
	switch u.Scheme {
	case "http", "https":
		return newHTTPClient(u.String(), cfg), nil
	case "ws", "wss":
		return dialWebSocket(ctx, u.String(), cfg)
	case "tcp", "unix":
		network, addr := u.Scheme, u.Host
		if u.Scheme == "unix" {
			addr = unixPath(u)
		}
		if addr == "" {
			return nil, errors.New("jsonrpc: URL " + rawURL + " names no address")
		}
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		framing := cfg.framing
		if framing == FramingAuto {
			framing = FramingLine
		}
		return NewConn(NewStream(nc, StreamOptions{Framing: framing, MaxMessageSize: cfg.maxMessageSize}), cfg.server), nil
	}
	if c, ok, err := dialRegistered(ctx, u, cfg); ok {
		return c, err
	}
	return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, https, ws, wss, tcp or unix" + orRegistered(func(t transport) bool { return t.dial != nil }) + ")")
}

// unixPath returns the socket path of unix:///path (or unix:path).
func unixPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.Host + u.Path
}

// ListenOption configures Server.Listen.
type ListenOption func(*listenConfig)

type listenConfig struct {
	framing Framing
}

// ListenFraming sets the framing of tcp://, unix:// and stdio: listeners
// (default: FramingAuto on sockets, FramingLine on stdio).
func ListenFraming(f Framing) ListenOption { return func(c *listenConfig) { c.framing = f } }

// Listener is a transport a Server serves, started by Server.Listen.
type Listener struct {
	// URL is where clients reach it, with the actual port when the URL asked
	// for port 0 (for stdio: "stdio:").
	URL  string
	done chan struct{}
	once sync.Once
	err  error
}

// Done is closed when the listener has stopped (after Shutdown, or for
// stdio when standard input ended and every request was answered).
func (l *Listener) Done() <-chan struct{} { return l.done }

// Err returns why the listener stopped (nil after Shutdown or end of input).
func (l *Listener) Err() error {
	<-l.done
	return l.err
}

func (l *Listener) stop(err error) {
	l.once.Do(func() {
		if errors.Is(err, ErrServerClosed) || errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		l.err = err
		close(l.done)
	})
}

// Listen starts serving s on the URL in the background:
//
//	http://127.0.0.1:8080/path   HTTP POST at path (an http.Server with sane timeouts)
//	ws://127.0.0.1:8081/path     WebSocket at path
//	tcp://127.0.0.1:9090         TCP, framing auto-detected per connection
//	unix:///tmp/rpc.sock         unix socket
//	stdio:                       standard input and output
//
// and any scheme registered with RegisterTransport. Shutdown stops every
// listener.
func (s *Server) Listen(rawURL string, opts ...ListenOption) (*Listener, error) {
	cfg := &listenConfig{}
	for _, o := range opts {
		o(cfg)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	l := &Listener{done: make(chan struct{})}
	switch u.Scheme {
	case "http", "ws":
		nl, err := net.Listen("tcp", u.Host)
		if err != nil {
			return nil, err
		}
		path := u.Path
		if path == "" {
			path = "/"
		}
		l.URL = u.Scheme + "://" + nl.Addr().String() + path
		var h http.Handler = s
		if u.Scheme == "ws" {
			h = s.WebSocketHandler()
		}
		go func() { l.stop(s.serveHTTP(nl, path, h)) }()
	case "tcp", "unix":
		network, addr := u.Scheme, u.Host
		if u.Scheme == "unix" {
			addr = unixPath(u)
			os.Remove(addr) // a stale socket file from an earlier run
		}
		nl, err := net.Listen(network, addr)
		if err != nil {
			return nil, err
		}
		if u.Scheme == "unix" {
			l.URL = "unix://" + addr
		} else {
			l.URL = "tcp://" + nl.Addr().String()
		}
		go func() { l.stop(s.Serve(nl, cfg.framing)) }()
	case "stdio":
		l.URL = "stdio:"
		framing := cfg.framing
		if framing == FramingAuto {
			framing = FramingLine
		}
		c := NewConn(NewStream(stdio{}, s.streamOptions(framing)), s)
		go func() {
			<-c.Done()
			err := c.Err()
			if errors.Is(err, ErrClosed) || err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = nil
			}
			l.stop(err)
		}()
	default:
		if l, ok, err := s.listenRegistered(u); ok {
			return l, err
		}
		return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, ws, tcp, unix or stdio" + orRegistered(func(t transport) bool { return t.listen != nil }) + ")")
	}
	return l, nil
}

// stdio is standard input and output as one stream. Close closes standard
// input only, so that a write still in progress is not cut.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }
