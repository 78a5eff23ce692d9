package jsonrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
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

// WithFraming sets the framing on tcp:// and unix:// (default [FramingLine]).
func WithFraming(f Framing) DialOption { return func(c *dialConfig) { c.framing = f } }

// WithServer serves the peer's calls with srv on bidirectional transports
// (WebSocket, TCP, unix, stdio); by default they get -32601. Its limits also
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
	if c.server == nil && c.maxMessageSize > 0 {
		// The connection's own checks use its Server's limit: the same one.
		c.server = &Server{Handler: NewMux(), MaxMessageSize: c.maxMessageSize}
	}
	return c
}

// Dial connects to a JSON-RPC server named by a URL:
//
//	http://host:port/path, https://...  one HTTP POST per call (HTTPClient)
//	ws://host:port/path, wss://...      WebSocket, bidirectional (*Conn)
//	tcp://host:port                     TCP stream, bidirectional (*Conn)
//	tls://host:port                     TCP stream over TLS (WithTLSConfig)
//	unix:///path/to/socket              unix socket stream (*Conn)
//	unix://@name                        abstract unix socket (Linux)
//
// and any scheme registered with [RegisterTransport] (nats:// once
// github.com/seedhq/jsonrpc/nats is imported). To talk to a subprocess over its stdin and stdout, use [DialCommand].
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
		return NewConn(NewStream(nc, StreamOptions{Framing: framing, MaxMessageSize: cfg.maxMessageSize}), cfg.server), nil
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

// ListenOption configures [Server.Listen].
type ListenOption func(*listenConfig)

type listenConfig struct {
	framing    Framing
	tls        *tls.Config
	socketMode fs.FileMode    // unix:// (ListenSocketMode)
	extra      *http.ServeMux // ListenHandler's handlers (nil: none)
}

// ListenHandler serves h for pattern (an http.ServeMux pattern such as
// "/explorer/") on http:// and https:// listeners, beside the JSON-RPC
// path, which pattern must not cover; other listeners ignore it. The
// listener's limits (MaxConns, timeouts) apply to it too. For instance the
// web explorer (package explorer) or a health check.
func ListenHandler(pattern string, h http.Handler) ListenOption {
	return func(c *listenConfig) {
		if c.extra == nil {
			c.extra = http.NewServeMux()
		}
		c.extra.Handle(pattern, h)
	}
}

// ListenTLS sets the TLS configuration of https://, wss:// and tls://
// listeners (required for them): its certificates (Certificates or
// GetCertificate, which can reload them without a restart) and, for mutual
// TLS, ClientAuth and ClientCAs. The configuration is cloned; TLS 1.2 is
// the minimum version whatever it says. Handlers find the client's verified
// certificate in PeerFromContext(ctx).TLS. Package auth builds
// configurations from files.
func ListenTLS(cfg *tls.Config) ListenOption { return func(c *listenConfig) { c.tls = cfg } }

// serverTLS returns the listener's TLS configuration with modern defaults,
// offering the given application protocols (ALPN).
func (c *listenConfig) serverTLS(scheme string, protos ...string) (*tls.Config, error) {
	if c.tls == nil {
		return nil, errors.New("jsonrpc: a " + scheme + ":// listener needs a TLS configuration with a certificate (ListenTLS)")
	}
	cfg := c.tls.Clone()
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return nil, errors.New("jsonrpc: the TLS configuration of " + scheme + ":// has no certificate (set Certificates or GetCertificate)")
	}
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = protos
	}
	return cfg, nil
}

// ListenFraming sets the framing of tcp://, unix:// and stdio: listeners
// (default [FramingAuto]: detected from the first bytes the peer sends).
func ListenFraming(f Framing) ListenOption { return func(c *listenConfig) { c.framing = f } }

// Listener is a transport a [Server] serves, started by Server.Listen.
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
//	unix:///tmp/rpc.sock         unix socket (file mode 0600: ListenSocketMode)
//	unix://@name                 abstract unix socket (Linux: no file)
//	stdio:                       standard input and output
//	https://…, wss://…, tls://127.0.0.1:9443
//	                             the same over TLS (tls:// is TCP over TLS);
//	                             they need ListenTLS
//
// A unix socket path never destroys a file: a path that holds anything but
// a socket is refused and left untouched, a socket where a server accepts
// connections is refused (errors.Is(err, syscall.EADDRINUSE)), and only a
// stale socket (connecting is refused) is replaced. On Shutdown the socket
// file is removed if it is still the one this listener created.
//
// On stdio the listener stops when its connection ends. When the peer ended
// it (end of input, or a stream that cannot be read any further, answered
// with an error where one can be framed) Err is nil and the reason is
// logged; Err reports only the server's own failures (a failed write).
//
// Any scheme registered with [RegisterTransport] works too. Shutdown stops
// every listener.
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
	case "http", "ws", "https", "wss":
		var tlsCfg *tls.Config
		switch u.Scheme {
		case "https":
			tlsCfg, err = cfg.serverTLS(u.Scheme, "h2", "http/1.1")
		case "wss":
			tlsCfg, err = cfg.serverTLS(u.Scheme, "http/1.1") // WebSocket upgrades are HTTP/1.1
		}
		if err != nil {
			return nil, err
		}
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
		extra := cfg.extra
		if u.Scheme == "ws" || u.Scheme == "wss" {
			h, extra = s.WebSocketHandler(), nil
		}
		go func() { l.stop(s.serveHTTP(nl, path, h, extra, tlsCfg)) }()
	case "tls":
		tlsCfg, err := cfg.serverTLS(u.Scheme)
		if err != nil {
			return nil, err
		}
		nl, err := net.Listen("tcp", u.Host)
		if err != nil {
			return nil, err
		}
		l.URL = "tls://" + nl.Addr().String()
		go func() { l.stop(s.Serve(tls.NewListener(nl, tlsCfg), cfg.framing)) }()
	case "tcp", "unix":
		var nl net.Listener
		if u.Scheme == "unix" {
			addr := unixPath(u)
			if addr == "" {
				return nil, errors.New("jsonrpc: URL " + rawURL + " names no socket")
			}
			nl, err = listenUnix(addr, cfg.socketMode)
			l.URL = "unix://" + addr
		} else {
			nl, err = net.Listen("tcp", u.Host)
		}
		if err != nil {
			return nil, err
		}
		if u.Scheme == "tcp" {
			l.URL = "tcp://" + nl.Addr().String()
		}
		go func() {
			err := s.Serve(nl, cfg.framing)
			nl.Close() // a unix socket file goes with it
			l.stop(err)
		}()
	case "stdio":
		l.URL = "stdio:"
		c := newConnContext(withPeer(context.Background(), s, Peer{Transport: "stdio"}), NewStream(stdio{}, s.streamOptions(cfg.framing)), s, nil)
		go func() {
			<-c.Done()
			l.stop(s.stdioEnded(c.Err()))
		}()
	default:
		if l, ok, err := s.listenRegistered(u); ok {
			return l, err
		}
		return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, https, ws, wss, tcp, tls, unix or stdio" + orRegistered(func(t transport) bool { return t.listen != nil }) + ")")
	}
	return l, nil
}

// stdio is standard input and output as one stream. Close closes standard
// input only, so that a write still in progress is not cut.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }
