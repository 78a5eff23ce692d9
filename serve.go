package jsonrpc

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/netx"
)

// ErrServerClosed is returned by the Serve methods after Shutdown.
var ErrServerClosed = errors.New("jsonrpc: server closed")

// ServeConn serves one connection on ch until it ends, and returns why
// (nil when the peer closed it normally).
func (s *Server) ServeConn(ctx context.Context, ch Channel) error {
	c := NewConn(ch, s)
	select {
	case <-c.Done():
	case <-ctx.Done():
		c.Close()
	}
	if err := c.Err(); err != nil && err != io.EOF && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

// stdioEnded returns why a stdio listener stopped, given why its one
// connection ended: nil when the peer ended it (end of input, a message
// cut short, a stream that cannot be read further, already answered), the
// error when the server failed (it could not write). Either way it logs why.
func (s *Server) stdioEnded(err error) error {
	var fe *FrameError
	switch {
	case err == nil || errors.Is(err, ErrClosed):
		return nil
	case errors.Is(err, io.EOF):
		s.logger().Debug("jsonrpc: standard input ended") // the normal end: quiet
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.logger().Warn("jsonrpc: standard input ended in the middle of a message")
		return nil
	case errors.As(err, &fe):
		s.logger().Warn("jsonrpc: standard input cannot be read further; stopping", "error", fe.Msg)
		return nil
	}
	s.logger().Error("jsonrpc: stdio failed", "error", err)
	return err
}

// Serve accepts stream connections (TCP, unix) on l and serves each, as
// [Server.Listen] serves a tcp:// or unix:// URL: opts are the listener's,
// with the same meaning (ListenFraming, default FramingAuto: detected per
// connection; ListenTLS: a TLS handshake on each connection, as tls://;
// options of other transports are ignored). It returns ErrServerClosed
// after Shutdown.
func (s *Server) Serve(l net.Listener, opts ...ListenOption) error {
	cfg := newListenConfig(opts)
	if cfg.tls != nil {
		tlsCfg, err := netx.ServerTLS(cfg.tls, "tls")
		if err != nil {
			return err
		}
		l = tls.NewListener(l, tlsCfg)
	}
	return s.acceptStreams(l, cfg.framing)
}

// acceptStreams accepts and serves the stream connections of l with framing.
func (s *Server) acceptStreams(l net.Listener, framing Framing) error {
	if !s.life.OnShutdown(func(context.Context) error { return l.Close() }) {
		l.Close()
		return ErrServerClosed
	}
	a := netx.Acceptor{Limit: int64(s.maxConns()), Closing: s.life.Closing,
		Serve: func(nc net.Conn, done func()) {
			if tc, ok := nc.(*tls.Conn); ok {
				go s.serveTLS(tc, framing, done)
				return
			}
			s.serveStream(nc, nil, framing, done)
		},
		Refused: func(nc net.Conn) {
			s.logger().Warn("jsonrpc: connection refused: too many connections", "limit", s.maxConns(), "remote", nc.RemoteAddr().String())
		}}
	err := a.Run(l)
	if errors.Is(err, netx.ErrClosed) {
		return ErrServerClosed
	}
	return err
}

// tlsHandshakeTimeout bounds the TLS handshake of a stream connection.
const tlsHandshakeTimeout = 10 * time.Second

// serveTLS completes the handshake of a TLS stream connection (off the
// accept loop, within tlsHandshakeTimeout), then serves it; a failed
// handshake is logged and closes the socket.
func (s *Server) serveTLS(tc *tls.Conn, framing Framing, onDone func()) {
	if err := netx.Handshake(tc, tlsHandshakeTimeout); err != nil {
		s.logger().Info("jsonrpc: TLS handshake failed", "remote", tc.RemoteAddr().String(), "error", err)
		onDone()
		return
	}
	state := tc.ConnectionState()
	c := s.serveStream(tc, &state, framing, onDone)
	// Shutdown may have listed the connections during the handshake.
	if s.life.Closing() {
		c.Shutdown(context.Background())
	}
}

// serveStream serves one accepted stream connection; its handlers see the
// peer (PeerFromContext).
func (s *Server) serveStream(nc net.Conn, state *tls.ConnectionState, framing Framing, onDone func()) *Conn {
	var remote, transport string
	if a := nc.RemoteAddr(); a != nil {
		remote, transport = a.String(), a.Network()
	}
	ctx := withPeer(context.Background(), s, Peer{Transport: transport, RemoteAddr: remote, TLS: state})
	return newConnContext(ctx, NewStream(nc, StreamOptions{Framing: framing}), s, onDone)
}

// Shutdown stops the server gracefully: listeners stop accepting, every
// request already read is answered (an HTTP request too, whatever
// http.Server serves the handler), then connections close. If ctx ends
// first, the remaining connections are closed at once and ctx's error is
// returned.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.draining.Swap(true) && s.DrainDelay > 0 {
		select {
		case <-time.After(s.DrainDelay):
		case <-ctx.Done():
		}
	}
	errs, conns := s.life.Stop(ctx) // the listeners and HTTP servers first
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.Shutdown(ctx) }) // fails only with ctx's error, returned below
	}
	s.life.Wait(ctx) // HTTP requests being served (on a server of anyone's)
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// ListenOption configures one listener: of [Server.Listen], or of
// [Server.Serve] (a net.Listener of one's own).
type ListenOption func(*listenConfig)

func newListenConfig(opts []ListenOption) *listenConfig {
	cfg := &listenConfig{}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

type listenConfig struct {
	framing    Framing
	tls        *tls.Config
	socketMode fs.FileMode    // unix:// (ListenSocketMode)
	extra      *http.ServeMux // ListenHandler's handlers (nil: none)
	streamable *StreamableHTTPOptions
	wrap       []func(http.Handler) http.Handler
	ws         WebSocketOptions
}

// ListenWebSocket sets the options of ws:// and wss:// listeners (e.g.
// PingInterval: keep the pings under a proxy's idle timeout, which is 60 s
// in nginx by default; the default interval, 30 s, is).
func ListenWebSocket(opts WebSocketOptions) ListenOption {
	return func(c *listenConfig) { c.ws = opts }
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

// ListenHTTPMiddleware wraps the handler of http(s):// and ws(s)://
// listeners (authentication, for one: see package auth). It sees every
// request of the listener's port, before the path is checked, so that it
// can serve paths of its own (such as /.well-known/ documents). The first
// middleware given is the outermost.
func ListenHTTPMiddleware(mw ...func(http.Handler) http.Handler) ListenOption {
	return func(c *listenConfig) { c.wrap = append(c.wrap, mw...) }
}

// ListenStreamableHTTP serves the JSON-RPC path of http:// and https://
// listeners with StreamableHTTPHandler(opts) instead of ServeHTTP (plain
// JSON-RPC clients are served as before); other listeners ignore it.
func ListenStreamableHTTP(opts StreamableHTTPOptions) ListenOption {
	return func(c *listenConfig) { c.streamable = &opts }
}

// ListenTLS sets the TLS configuration of https://, wss:// and tls://
// listeners (required for them): its certificates (Certificates or
// GetCertificate, which can reload them without a restart) and, for mutual
// TLS, ClientAuth and ClientCAs. The configuration is cloned; TLS 1.2 is
// the minimum version whatever it says. Handlers find the client's verified
// certificate in PeerFromContext(ctx).TLS. Package auth builds
// configurations from files.
func ListenTLS(cfg *tls.Config) ListenOption { return func(c *listenConfig) { c.tls = cfg } }

// ListenFraming sets the framing of tcp://, tls://, unix:// and stdio:
// listeners and of [Server.Serve] (default [FramingAuto]: detected from the
// first bytes the peer sends).
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
// A unix socket path never destroys a file: only a stale socket (connecting
// is refused) is replaced; anything else is refused (a live one with
// syscall.EADDRINUSE). Shutdown removes the socket file if still its own.
//
// On stdio the listener stops when its connection ends; Err reports only the
// server's own failures (a failed write), not the peer's end (logged).
//
// Any scheme registered with [RegisterTransport] works too. Shutdown stops
// every listener.
func (s *Server) Listen(rawURL string, opts ...ListenOption) (*Listener, error) {
	cfg := newListenConfig(opts)
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	l := &Listener{done: make(chan struct{})}
	switch u.Scheme {
	case "http", "ws", "https", "wss":
		err = s.listenHTTP(l, u, cfg)
	case "tcp", "tls", "unix":
		err = s.listenStream(l, u, cfg)
	case "stdio":
		l.URL = "stdio:"
		c := newConnContext(withPeer(context.Background(), s, Peer{Transport: "stdio"}), NewStream(stdio{}, StreamOptions{Framing: cfg.framing}), s, nil)
		go func() {
			<-c.Done()
			l.stop(s.stdioEnded(c.Err()))
		}()
	default:
		t := registered(u.Scheme)
		if t.listen == nil {
			return nil, errors.New("jsonrpc: unsupported URL scheme " + u.Scheme + " in " + rawURL + " (want http, https, ws, wss, tcp, tls, unix or stdio" + orRegistered(func(t transport) bool { return t.listen != nil }) + ")")
		}
		if s.life.Closing() {
			return nil, ErrServerClosed
		}
		ep, err := t.listen(s, u)
		if err != nil {
			return nil, err
		}
		return s.ServeEndpoint(ep), nil
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

// listenHTTP makes l serve the http, https, ws or wss URL u.
func (s *Server) listenHTTP(l *Listener, u *url.URL, cfg *listenConfig) error {
	var tlsCfg *tls.Config
	var err error
	switch u.Scheme {
	case "https":
		tlsCfg, err = netx.ServerTLS(cfg.tls, u.Scheme, "h2", "http/1.1")
	case "wss":
		tlsCfg, err = netx.ServerTLS(cfg.tls, u.Scheme, "http/1.1") // WebSocket upgrades are HTTP/1.1
	}
	if err != nil {
		return err
	}
	nl, err := httpx.Listen(u.Host)
	if err != nil {
		return err
	}
	path := cmp.Or(u.Path, "/")
	l.URL = u.Scheme + "://" + nl.Addr().String() + path
	var h http.Handler = s
	if cfg.streamable != nil {
		h = s.StreamableHTTPHandler(*cfg.streamable)
	}
	if u.Scheme == "ws" || u.Scheme == "wss" {
		h, cfg.extra = s.WebSocketHandler(cfg.ws), nil
	}
	h = &httpx.Routes{Path: path, Handler: h, HealthPath: s.healthPath(), Health: s.HealthHandler(), Extra: cfg.extra,
		Limit: int64(s.maxConns()), Draining: s.draining.Load}
	for i := len(cfg.wrap) - 1; i >= 0; i-- {
		h = cfg.wrap[i](h)
	}
	srv := httpx.NewHTTPServer(nl, h, tlsCfg, slog.NewLogLogger(s.logger().Handler(), slog.LevelWarn))
	// Registered before Listen returns, so that a Shutdown right after it
	// stops this listener too.
	if !s.life.OnShutdown(srv.Shutdown) {
		nl.Close()
		return ErrServerClosed
	}
	go func() { l.stop(srv.Serve()) }()
	return nil
}

// listenStream makes l serve the tcp, tls or unix URL u.
func (s *Server) listenStream(l *Listener, u *url.URL, cfg *listenConfig) error {
	nl, publicURL, err := netx.ListenStream(u, cfg.tls, cmp.Or(cfg.socketMode, DefaultSocketMode))
	if err != nil {
		return err
	}
	l.URL = publicURL
	// Registered before Listen returns (acceptStreams registers too, once it runs),
	// so that a Shutdown right after it closes nl, and a unix socket's file
	// is gone when Shutdown returns.
	if !s.life.OnShutdown(func(context.Context) error { return nl.Close() }) {
		nl.Close()
		return ErrServerClosed
	}
	go func() {
		err := s.acceptStreams(nl, cfg.framing)
		nl.Close() // a unix socket file goes with it
		l.stop(err)
	}()
	return nil
}

// stdio is standard input and output as one stream. Close closes standard
// input only, so that a write still in progress is not cut.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }
