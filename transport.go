package jsonrpc

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// DialFunc connects a client to u, for Dial.
type DialFunc func(ctx context.Context, u *url.URL, set DialSettings) (Client, error)

// DialSettings are the settings of Dial's options that a registered
// transport may honour (each says which). A transport whose client is a
// connection starts it with NewConn, which honours the rest.
type DialSettings struct {
	Header         http.Header // WithHeader (nil when none)
	TLSConfig      *tls.Config // WithTLSConfig (nil when none)
	MaxMessageSize int64       // WithMaxMessageSize; 0: DefaultMaxMessageSize

	cfg *dialConfig // every option, for NewConn
}

// NewConn starts the client connection over ch that Dial's options
// describe, as Dial does for its own stream transports: the handler of the
// peer's calls and its limits (WithHandler, WithMaxConcurrency, WithAdmit,
// WithLogger, WithConvention, WithProgress), WithMaxMessageSize,
// WithStrictResults and WithInterceptors. A DialFunc whose transport has a
// connection returns it, so that DialConn and Subscribe work.
func (s DialSettings) NewConn(ch Channel) *Conn {
	cfg := s.cfg
	if cfg == nil { // DialSettings{}: the defaults
		cfg = newDialConfig(nil)
	}
	return cfg.newConn(ch)
}

// ListenFunc starts serving s at u in the background, for Server.Listen.
// The Endpoint must process each message with s.Process, so that every limit
// and rule of s applies.
type ListenFunc func(s *Server, u *url.URL) (Endpoint, error)

// Endpoint is a listener started by a registered transport. Server.Listen
// returns it wrapped in a Listener; Server.Shutdown shuts it down.
type Endpoint interface {
	// URL is where clients reach the endpoint (the Listener's URL). It
	// must not carry secrets.
	URL() string
	// Shutdown stops taking new messages, waits until those already taken
	// are answered or ctx ends, then releases the endpoint. It is called at
	// most once.
	Shutdown(ctx context.Context) error
	// Wait blocks until the endpoint has stopped, after Shutdown or on a
	// failure of its own, and returns why (nil after Shutdown).
	Wait() error
}

type transport struct {
	dial   DialFunc
	listen ListenFunc
}

// transports are the registered schemes, guarded by transportsMu.
var (
	transportsMu sync.RWMutex
	transports   = map[string]transport{}
)

// RegisterTransport makes Dial call dial, and Server.Listen call listen, for
// URLs of scheme (lower case, without "://"), usually from the init of a
// package a program imports (import _ "github.com/seedhq/jsonrpc/nats").
// Either may be nil. It panics if scheme is empty, built in (http, https,
// ws, wss, tcp, tls, unix, stdio) or registered already.
func RegisterTransport(scheme string, dial DialFunc, listen ListenFunc) {
	switch scheme {
	case "", "http", "https", "ws", "wss", "tcp", "tls", "unix", "stdio":
		panic("jsonrpc: RegisterTransport: scheme " + scheme + " is built in or empty")
	}
	transportsMu.Lock()
	defer transportsMu.Unlock()
	if _, dup := transports[scheme]; dup {
		panic("jsonrpc: RegisterTransport called twice for scheme " + scheme)
	}
	transports[scheme] = transport{dial, listen}
}

func registered(scheme string) transport {
	transportsMu.RLock()
	defer transportsMu.RUnlock()
	return transports[scheme] // none: a transport with neither function
}

// orRegistered lists the registered schemes that have what has asks for,
// for error messages: "" or ", nats".
func orRegistered(has func(transport) bool) string {
	transportsMu.RLock()
	defer transportsMu.RUnlock()
	var names []string
	for name, t := range transports {
		if has(t) {
			names = append(names, ", "+name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, "")
}

// ServeEndpoint ties an endpoint that a transport started for s (a
// registered one, or one started with that transport's own API and
// options) to s: Shutdown shuts it down with the others, and the Listener
// reports its end. An endpoint given to a Server that is already shutting
// down is shut down at once.
func (s *Server) ServeEndpoint(ep Endpoint) *Listener {
	l := &Listener{URL: ep.URL(), done: make(chan struct{})}
	if !s.life.OnShutdown(ep.Shutdown) {
		ep.Shutdown(context.Background())
	}
	go func() { l.stop(ep.Wait()) }()
	return l
}

// Process serves one message (a request, a notification or a batch) with
// s's handler, limits and error policy, exactly as every built-in transport
// does, and returns the reply to send back: nil when none is due (a
// notification, a batch of notifications only). It is the entry point of
// message transports that carry one message per delivery (a broker, a
// queue). Handlers see ctx; there is no connection to call back on
// (ErrNoConnection), and a response sent to the server is answered with
// -32600. msg must not be modified until Process returns; the reply is the
// caller's.
func (s *Server) Process(ctx context.Context, msg []byte) []byte {
	x := exchangePool.Get().(*exchange)
	defer exchangePool.Put(x)
	x.srv, x.d, x.data = s, s.handlerTimeout(false), msg
	if e, batch, ok := s.dispatch(ctx, &x.inbound, x); ok {
		x.serve(ctx, e, batch)
	}
	reply := x.reply
	x.data, x.sc.Data, x.reply, x.refused = nil, nil, nil, nil // do not pin the message or the reply
	return reply
}

// Exchange carries one message to the server and returns the reply: nil or
// empty when the server sent none. wantReply says whether a response is due
// (false for a notification, or a batch of notifications only). It is safe
// for concurrent use and returns when ctx ends.
type Exchange func(ctx context.Context, msg []byte, wantReply bool) ([]byte, error)

// NewMessageClient returns a Client that sends each call, notification or
// batch as one message through send and matches the reply to it, with the
// HTTP client's checks and errors (see HTTPClient): a transport with
// request/reply of its own (a broker) needs only send. Options:
// WithMaxMessageSize (the bound on a reply, default 10 MiB). Close makes
// further calls fail with ErrClosed; it does not close what send uses.
func NewMessageClient(send Exchange, opts ...DialOption) Client {
	cfg := newDialConfig(opts)
	c := &HTTPClient{send: send, maxSize: orDefault(cfg.maxMessageSize, DefaultMaxMessageSize), strictResults: cfg.strictResults}
	c.inv = cfg.chain(direct{c})
	return c
}
