package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Default limits. Each has a Server field of its own; zero means the default.
const (
	DefaultMaxMessageSize   = 10 << 20 // bytes in one message
	DefaultMaxBatchLen      = 1000     // requests in one batch
	DefaultMaxDepth         = 128      // nesting of JSON arrays and objects
	DefaultMaxMethodLen     = 256      // bytes in a method name
	DefaultMaxResponseBytes = 10 << 20 // bytes of one batch's responses together
	DefaultMaxConns         = 16384    // connections at once per listener
	DefaultMaxQueuedBytes   = 1 << 20  // unwritten reply bytes of one connection
)

// DefaultMaxConcurrency is the default bound on handlers running at once on one connection.
var DefaultMaxConcurrency = 8 * runtime.GOMAXPROCS(0)

// Server holds a Handler and the rules that every transport applies to the
// messages it serves: limits, error policy and logging. Its zero value is
// not usable: set Handler. A Server is safe for concurrent use and may serve
// many connections and transports at once; do not change its fields while it
// serves.
type Server struct {
	// Handler answers requests; usually a *Mux.
	Handler Handler

	// MaxMessageSize bounds one incoming message (default 10 MiB). Over it:
	// -32600 "message too large" with id null.
	MaxMessageSize int64
	// MaxBatchLen bounds the requests in one batch (default 1000). Over it:
	// one -32600 error object, nothing is run.
	MaxBatchLen int
	// MaxResponseBytes bounds the responses of one batch together (default
	// 10 MiB). Responses past it are replaced by -32603 errors.
	MaxResponseBytes int
	// MaxDepth bounds the nesting of arrays and objects (default 128). Over
	// it: -32600 with id null, rejected while scanning.
	MaxDepth int
	// MaxMethodLen bounds the length of a method name (default 256). Over
	// it: -32600.
	MaxMethodLen int
	// MaxConcurrency bounds the handlers running at once on one connection
	// (default 8×GOMAXPROCS). Further requests wait; the connection stops
	// reading until a handler finishes.
	MaxConcurrency int

	// MaxConns bounds what each listener started with Serve or Listen
	// serves at once (default 16384): connections on tcp:// and unix://
	// (over it a socket is closed as soon as it is accepted), requests on
	// http:// and sockets on ws:// (over it: HTTP 503 with Retry-After).
	MaxConns int

	// WriteTimeout bounds how long a write to a stream (tcp, unix, stdio, a
	// NewStream channel given to ServeConn or NewConn) may make no
	// progress, the peer accepting no bytes at all, before that connection
	// closes. Zero means 30 s on sockets and none on stdio,
	// whose peer is the parent process; negative means none. A slow but
	// moving reader is never cut.
	WriteTimeout time.Duration
	// MaxQueuedBytes bounds the reply bytes of a connection that are
	// rendered but not yet written (default 1 MiB). Past it the connection
	// takes no new request until the peer has read enough of them: it stops
	// reading, so a peer that does not read its answers is held back by its
	// transport's flow control, and the server's memory for it stays near
	// MaxQueuedBytes plus MaxConcurrency replies. Nothing is dropped.
	MaxQueuedBytes int64

	// HandlerTimeout bounds how long a request may run, from the moment
	// its message is dispatched (for a batch: the whole batch). Past it the
	// handler's context is cancelled and the request is answered at once
	// with CodeRequestTimeout (-32002) "request timed out"; in a batch the
	// elements answered by then keep their responses. Zero means
	// DefaultHandlerTimeout (30 s) for HTTP requests and none on streams
	// and WebSocket, where long calls are normal; a positive value applies
	// on every transport; negative means none.
	HandlerTimeout time.Duration
	// HTTPBodyTimeout bounds how long an HTTP request body may take to
	// arrive, from the moment the handler sees the request (default 30 s;
	// negative: none). A body still trickling in then gets 408 Request
	// Timeout and the connection closes. It holds also when the Server is
	// mounted on an http.Server of the user's.
	HTTPBodyTimeout time.Duration
	// HTTPCompressMinSize is the size from which an HTTP reply is sent
	// gzip-compressed to a client whose Accept-Encoding admits gzip
	// (default DefaultHTTPCompressMinSize, 1 KiB; negative: never); a
	// streamed reply (Stream) written in chunks is compressed whatever its
	// size, unless negative. A gzip request body is accepted whatever this says; its decompressed
	// size counts against MaxMessageSize (over it: 413), and another
	// Content-Encoding gets 415.
	HTTPCompressMinSize int

	// Convention selects the cancellation and progress messages the server
	// and its connections understand and send (see cancel.go): none (the
	// default), LSP's or MCP's, never both. Under one, a cancel notification
	// from the peer cancels the context of the handler serving the request
	// it names (on a connection: streams, WebSocket, Streamable HTTP);
	// LSP's request is then answered with CodeLSPRequestCancelled if the
	// handler returns an error, MCP's is not answered. Cancels of unknown
	// or finished requests are ignored. A call made on a connection of the
	// server whose context ends sends the peer the matching cancel, and
	// ReportProgress sends progress. The other convention's messages go to
	// Handler like any others.
	Convention Convention
	// OnProgress, when set with a Convention, receives the progress
	// notifications of the convention that the peer sends (typically to
	// a client: see WithProgress); they do not reach Handler. On a
	// connection it is called on the goroutine that reads, in the order
	// the reports arrive: it must return quickly and not call the peer.
	OnProgress func(ctx context.Context, p Progress)

	// ExposeInternalErrors sends the text of handler errors that are not
	// *Error as the message of the -32603 response. Off by default: the
	// text is logged and the peer sees "internal error".
	ExposeInternalErrors bool

	// NotificationStatus is the HTTP status sent when a POST needs no
	// response (a notification, or a batch of notifications only): 0 means
	// 204 No Content; set http.StatusAccepted (202) for MCP-style clients.
	// The body is empty either way. Other transports ignore it.
	NotificationStatus int

	// Authorize, when set, is asked before each request's handler runs, on
	// every transport and for each element of a batch on its own. A non-nil
	// error refuses the call: a *Error is sent as is, any other error as
	// CodeForbidden with the error's text; the handler does not run, and the
	// denial is logged (method, peer, reason). The caller's identity is in
	// ctx (see package auth and PeerFromContext). Authorized asks it too.
	Authorize func(ctx context.Context, method string) error

	// Admit, when set, is asked once per incoming message, before anything
	// in it runs, with the number of requests in it (each element of a batch
	// counts). A non-nil error refuses them all: HTTP answers 429 Too Many
	// Requests with Retry-After (see LimitError); streams answer each request
	// with CodeLimitExceeded "limit exceeded" (or the *Error returned) and go on.
	Admit func(ctx context.Context, n int) error

	// AllowedOrigins lists the origins (path.Match patterns of the host, or
	// of scheme://host when the pattern has "://"; "*" for any) from which
	// browsers may call the server, over HTTP, Streamable HTTP and WebSocket
	// alike (one function matches them for all three). Requests
	// without an Origin header and same-origin requests always pass; other
	// cross-origin requests get 403 and never reach a handler. Allowed ones
	// get CORS headers, and their OPTIONS preflight is answered.
	AllowedOrigins []string
	// AllowedHosts, when set, lists the Host headers (path.Match patterns,
	// with or without the port) that HTTP and WebSocket requests may carry;
	// others get 403. Set it on a server bound to localhost to stop DNS
	// rebinding ("localhost", "127.0.0.1", "[::1]"); behind a reverse proxy
	// that rewrites Host, list the names the proxy sends.
	AllowedHosts []string

	// HealthPath is where the HTTP servers that Listen starts (http, https,
	// ws, wss) answer health checks with HealthHandler: 200 while serving,
	// 503 once Shutdown has begun. Default DefaultHealthPath ("/healthz");
	// "-" turns it off. The JSON-RPC path wins if they are the same.
	HealthPath string
	// DrainDelay is how long Shutdown keeps the listeners open after it has
	// begun draining (health checks answer 503, every HTTP response carries
	// Connection: close) before it stops them, so that a load balancer's
	// health checks take the instance out of rotation first. Default 0.
	DrainDelay time.Duration
	// TrustedProxies lists the reverse proxies (CIDR prefixes, e.g.
	// 127.0.0.1/32 or 10.0.0.0/8) whose X-Forwarded-For header is believed:
	// for HTTP and WebSocket requests that come from one of them,
	// Peer.RemoteAddr (logs, rate limits) is the client's IP address as the
	// proxies recorded it, without a port. Default none: the header is ignored.
	TrustedProxies []netip.Prefix

	// Logger receives server events (handler panics, write failures,
	// protocol errors). Nil means slog.Default(). Protocol errors (parse
	// errors, invalid requests, messages too large) and connection ends are
	// logged once each, where they are found, at debug level.
	Logger *slog.Logger

	// Middleware wraps every request the server dispatches, the first one
	// outermost, whether or not a handler has its method: for a method a
	// Mux does not have, the innermost handler returns -32601. Logging,
	// tracing and metrics go here (LogCalls, the otel module); Mux.Use
	// wraps registered methods only. Panics inside it become -32603 errors
	// that the middleware sees returned.
	Middleware []Middleware
	mwOnce     sync.Once // builds mwChain: Middleware around each request's handler
	mwChain    Handler

	life     connrt.Group[*Conn] // the listeners and connections Shutdown stops
	draining atomic.Bool         // Shutdown has begun (HealthHandler, Connection: close)
}

func (s *Server) maxMessageSize() int64 { return orDefault(s.MaxMessageSize, DefaultMaxMessageSize) }
func (s *Server) maxBatchLen() int      { return orDefault(s.MaxBatchLen, DefaultMaxBatchLen) }
func (s *Server) maxDepth() int         { return orDefault(s.MaxDepth, DefaultMaxDepth) }
func (s *Server) maxMethodLen() int     { return orDefault(s.MaxMethodLen, DefaultMaxMethodLen) }
func (s *Server) maxConcurrency() int   { return orDefault(s.MaxConcurrency, DefaultMaxConcurrency) }
func (s *Server) maxConns() int         { return orDefault(s.MaxConns, DefaultMaxConns) }
func (s *Server) maxQueuedBytes() int64 { return orDefault(s.MaxQueuedBytes, DefaultMaxQueuedBytes) }

func orDefault[T ~int | ~int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (s *Server) logger() *slog.Logger {
	if s != nil && s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// errMessageTooLarge is the error of a message over limit bytes.
func errMessageTooLarge(limit int64) *Error {
	return &Error{Code: CodeInvalidRequest, Message: framing.TooLargeMessage(limit)}
}

// parseError is the error object for a message that could not be scanned.
func parseError(err error) *Error {
	var de *wire.DepthError
	if errors.As(err, &de) {
		return &Error{Code: CodeInvalidRequest, Message: "invalid request: " + de.Error()}
	}
	return &Error{Code: CodeParseError, Message: "parse error: " + err.Error()}
}

// serveElem serves one element, whose id is in req.ID, and returns its
// response appended to out (or out unchanged). Its steps: the rules before
// a handler (vet); under a Convention, the id in flight, so that the
// peer's cancel reaches the handler's context; the handler (run: a panic
// becomes an error); the response, which a cancel may have changed.
func (s *Server) serveElem(ctx context.Context, conn *Conn, data []byte, e *wire.Envelope, req *Request, out []byte) []byte {
	id := req.ID
	name, rerr, stop := s.vet(ctx, conn, data, e, &id)
	if stop {
		if rerr == nil || id.IsZero() {
			return out
		}
		return appendResponse(out, id, nil, rerr)
	}
	*req = Request{ID: id, Params: paramsOf(data, e), stream: req.stream}
	r := s.startRequest(ctx, conn, id, req.Params)
	if r != nil {
		ctx = r
	}
	var v any
	entry, h := s.handler(req, name)
	if h == nil {
		rerr = methodNotFound(string(name))
	} else if res, err := s.run(ctx, h, req); err != nil {
		rerr = s.toError(req, err)
	} else {
		v = res
	}
	if id.IsZero() {
		return out
	}
	if r != nil && r.in.endRequest(id) { // the peer cancelled it while it ran
		if s.Convention == ConventionMCP {
			return out // MCP: a cancelled request is not answered
		}
		if rerr != nil {
			rerr = errLSPCancelled // LSP: RequestCancelled (a result, partial, is kept)
		}
	}
	if rerr != nil {
		return appendResponse(out, id, nil, rerr)
	}
	if st, ok := v.(streamer); ok {
		return s.appendStream(out, id, req, st)
	}
	return s.appendResult(out, id, v, entry, req)
}

// vet applies the rules an element meets before its handler runs, and
// returns the method's name. When it reports stop, the element is not
// served: rerr is its answer (nil, or an absent id: none). An invalid
// element is answered even without an id (*id becomes null).
func (s *Server) vet(ctx context.Context, conn *Conn, data []byte, e *wire.Envelope, id *ID) (name []byte, rerr *Error, stop bool) {
	var invalid *Error
	switch e.Kind {
	case wire.KindResponse, wire.KindBadResponse: // (a Conn takes its responses before they get here)
		invalid = &Error{Code: CodeInvalidRequest, Message: "invalid request: a response was sent to a server"}
	case wire.KindInvalid:
		invalid = &Error{Code: CodeInvalidRequest, Message: e.Err.Msg}
	default:
		if name = e.MethodName(data); len(name) > s.maxMethodLen() {
			invalid = &Error{Code: CodeInvalidRequest, Message: "invalid request: method name longer than " + strconv.Itoa(s.maxMethodLen()) + " bytes"}
		}
	}
	if invalid != nil {
		if id.IsZero() {
			*id = NullID
		}
		s.logProtocol(ctx, "jsonrpc: "+protocolMessage(invalid.Code), invalid, nil)
		return nil, invalid, true
	}
	switch {
	case e.ParamsDup:
		return nil, invalidParams("", "duplicate member name"), true
	case id.IsZero() && s.Convention != ConventionNone && s.conventionMessage(ctx, conn, name, paramsOf(data, e)):
		return nil, nil, true // a cancel or progress notification of the convention, handled
	case ctx.Err() != nil:
		return nil, &Error{Code: CodeRequestCanceled, Message: "request canceled: the server is shutting down"}, true
	}
	if rerr := s.authorize(ctx, name); rerr != nil {
		return nil, rerr, true
	}
	return name, nil, false
}

// appendResult appends the response carrying the handler's result v,
// encoded in place after the response's head.
func (s *Server) appendResult(out []byte, id ID, v any, entry *methodEntry, req *Request) (reply []byte) {
	start := len(out)
	out = appendHead(out, id, `,"result":`)
	var hint *atomic.Int64
	if entry != nil {
		hint = &entry.resultSize
	}
	defer func() {
		if p := recover(); p != nil { // a MarshalJSON of the handler's
			reply = s.unencodable(out[:start], id, req, fmt.Errorf("encoding panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	out, err := codec.AppendJSON(out, v, hint)
	if err != nil {
		return s.unencodable(out[:start], id, req, err)
	}
	return append(out, '}')
}

// unencodable appends the response of a request whose result cannot be
// encoded: -32603, the cause logged.
func (s *Server) unencodable(out []byte, id ID, req *Request, err error) []byte {
	s.logger().Error("jsonrpc: result cannot be encoded as JSON", "method", req.Method, "error", err)
	return appendResponse(out, id, nil, &Error{Code: CodeInternalError, Message: "internal error: the result cannot be encoded as JSON"})
}

func paramsOf(data []byte, e *wire.Envelope) []byte {
	if !e.Params.Present() {
		return nil
	}
	return e.Params.Of(data)
}

// handler finds the handler of method name and sets req.Method: the Mux
// entry that has it (nil: none), and the handler to run, wrapped in the
// middleware (nil: the method is not found, and there is no middleware to
// see it).
func (s *Server) handler(req *Request, name []byte) (*methodEntry, Handler) {
	var entry *methodEntry
	h := s.Handler
	if mux, ok := h.(*Mux); ok {
		// Fast path: find the method without converting its name, and use
		// the registered name as Method (no allocation).
		if entry = mux.lookup(name); entry != nil {
			req.Method, h = entry.info.Name, entry.handler
		} else if len(s.Middleware) == 0 {
			return nil, nil
		} else {
			req.Method, h = string(name), notFound
		}
	} else {
		req.Method = string(name)
	}
	if len(s.Middleware) > 0 {
		req.target, h = h, s.chain()
	}
	return entry, h
}

// run calls h, turning a panic into an error.
func (s *Server) run(ctx context.Context, h Handler, req *Request) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger().Error("jsonrpc: handler panicked", "method", req.Method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			v, err = nil, &Error{Code: CodeInternalError, Message: "internal error: the handler panicked"}
		}
	}()
	return h.ServeRPC(ctx, req)
}

// toError converts a handler error to the error object sent to the peer.
func (s *Server) toError(req *Request, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e != nil {
			return e
		}
		// A nil *Error in a non-nil error interface (the typed-nil trap):
		// there is no error object to send, so it is an internal error.
		s.logger().Error("jsonrpc: handler returned a nil *Error as a non-nil error", "method", req.Method)
		return &Error{Code: CodeInternalError, Message: "internal error"}
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeRequestCanceled, Message: "request canceled: " + err.Error()}
	case s.ExposeInternalErrors:
		return &Error{Code: CodeInternalError, Message: err.Error()}
	}
	s.logger().Debug("jsonrpc: handler error", "method", req.Method, "error", err)
	return &Error{Code: CodeInternalError, Message: "internal error"}
}

// serveBatch serves a batch's elements and appends their responses, in one
// array, to out. Elements are served in turn while quick; once one has run
// for batchWatch, the rest are served beside it on up to MaxConcurrency
// workers (as the connection has capacity), each rendering to a pooled
// buffer of its own. Under a timeout (ts: see timedServe.start) the responses
// go to ts and serveBatch returns nil.
func (s *Server) serveBatch(ctx context.Context, conn *Conn, data []byte, elems []wire.Envelope, ts *timedServe, out []byte) []byte {
	b := &batchRun{s: s, ctx: ctx, conn: conn, data: data, elems: elems, ts: ts, workers: max(1, min(len(elems), s.maxConcurrency()))}
	b.bs = newBatchState(len(elems), b.workers)
	readIDs(data, elems, b.bs.reqs)
	if b.workers > 1 {
		b.mu.Lock()
		b.timer = time.AfterFunc(batchWatch, b.watch)
		b.mu.Unlock()
	}
	b.work(0)
	b.stop()
	b.wg.Wait()
	if ts != nil {
		return nil // ts's responses keep the buffers: bs is left to the collector
	}
	out = s.joinBatch(out, data, elems, b.bs.resps, nil)
	b.bs.release()
	return out
}

// batchWatch is how long an element of a batch served in turn may run
// before the rest are served beside it (see serveBatch). Longer than
// quickRequest: on a busy machine a quick element's goroutine can wait
// that long for a core, and starting the workers for nothing costs more.
const batchWatch = 500 * time.Microsecond

// batchRun is a batch being served (see serveBatch).
type batchRun struct {
	s       *Server
	ctx     context.Context
	conn    *Conn // nil: a message transport
	data    []byte
	elems   []wire.Envelope
	ts      *timedServe // nil: no deadline
	bs      *batchState
	workers int          // at most, the first included
	next    atomic.Int64 // the next element to serve

	mu      sync.Mutex // guards timer, seen and stopped
	timer   *time.Timer
	seen    int64 // next when watch last looked
	stopped bool  // the first worker is done: no other starts any more
	wg      sync.WaitGroup
}

// work serves elements until none is left, as worker w.
func (b *batchRun) work(w int) {
	buf := wire.GetBuf()
	b.bs.bufs[w] = buf
	for {
		i := int(b.next.Add(1) - 1)
		if i >= len(b.elems) {
			return
		}
		start := len(*buf)
		*buf = b.s.serveElem(b.ctx, b.conn, b.data, &b.elems[i], &b.bs.reqs[i], *buf)
		r := (*buf)[start:len(*buf):len(*buf)] // later appends never touch it
		if b.ts != nil {
			b.ts.record(i, r)
		} else {
			b.bs.resps[i] = r
		}
	}
}

// watch looks every batchWatch at the batch served in turn: when no
// element was taken since it last looked, the one being served is slow,
// and the other workers start.
func (b *batchRun) watch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	if n := b.next.Load(); n != b.seen {
		b.seen = n
		b.timer.Reset(batchWatch)
		return
	}
	for w := 1; w < b.workers; w++ {
		if b.conn != nil && !b.conn.tokens.TryTake(b.s.maxConcurrency()) {
			break
		}
		b.wg.Add(1) // before stop: serveBatch's Wait sees it
		connrt.Go(func() {
			defer b.wg.Done()
			if b.conn != nil {
				defer b.conn.giveToken()
			}
			b.work(w)
		})
	}
}

// stop ends the watch once the first worker is done.
func (b *batchRun) stop() {
	b.mu.Lock()
	b.stopped = true
	if b.timer != nil {
		b.timer.Stop()
	}
	b.mu.Unlock()
}

// batchState is where a batch's responses are rendered: a pooled buffer
// per worker, and each element's response in one of them; and the
// elements' Requests, which handlers must not keep.
type batchState struct {
	resps [][]byte
	bufs  []*[]byte
	reqs  []Request
}

var batchStatePool = sync.Pool{New: func() any { return new(batchState) }}

func newBatchState(elems, workers int) *batchState {
	bs := batchStatePool.Get().(*batchState)
	bs.resps = slices.Grow(bs.resps[:0], elems)[:elems]
	bs.bufs = slices.Grow(bs.bufs[:0], workers)[:workers]
	bs.reqs = slices.Grow(bs.reqs[:0], elems)[:elems]
	return bs
}

// readIDs sets reqs[i].ID to the id of elems[i], all read into one string
// (one allocation for the batch, not one per id).
func readIDs(data []byte, elems []wire.Envelope, reqs []Request) {
	n := 0
	for i := range elems {
		if elems[i].ID.Present() {
			n += len(elems[i].ID.Of(data))
		}
	}
	var all strings.Builder
	all.Grow(n)
	for i := range elems {
		if elems[i].ID.Present() {
			all.Write(elems[i].ID.Of(data))
		}
	}
	ids := all.String()
	for i := range elems {
		reqs[i].ID = ID{}
		if elems[i].ID.Present() {
			l := len(elems[i].ID.Of(data))
			reqs[i].ID.raw, ids = ids[:l], ids[l:]
		}
	}
}

// release gives the buffers back, once the responses are joined.
func (bs *batchState) release() {
	for i, b := range bs.bufs {
		if b != nil {
			wire.PutBuf(b)
		}
		bs.bufs[i] = nil
	}
	clear(bs.resps)
	clear(bs.reqs)
	if cap(bs.resps) > 1024 {
		bs.resps, bs.reqs = nil, nil // a huge batch's slices are not kept
	}
	batchStatePool.Put(bs)
}

// joinBatch appends to out the responses of a batch's elements as one
// array (nil when there are none: all notifications),
// replacing those past MaxResponseBytes with errors. With done (not nil),
// a request whose element is not done gets the timeout error.
func (s *Server) joinBatch(out, data []byte, elems []wire.Envelope, resps [][]byte, done []bool) []byte {
	limit := orDefault(s.MaxResponseBytes, DefaultMaxResponseBytes)
	size := 2
	for _, r := range resps {
		size += len(r) + 1
	}
	start := len(out)
	out = append(slices.Grow(out, min(size+len(elems)*64, limit+1024)), '[')
	for i, r := range resps {
		if done != nil && !done[i] {
			if id := idOf(&elems[i], data); elems[i].Kind == wire.KindRequest && !id.IsZero() {
				r = appendResponse(nil, id, nil, errRequestTimeout)
			}
		}
		if len(r) == 0 {
			continue
		}
		if len(out)-start+len(r) > limit {
			r = appendResponse(nil, idOf(&elems[i], data), nil, &Error{Code: CodeInternalError, Message: "response dropped: the batch's responses exceed " + strconv.Itoa(limit) + " bytes"})
		}
		if len(out)-start > 1 {
			out = append(out, ',')
		}
		out = append(out, r...)
	}
	if len(out)-start == 1 {
		return nil // all notifications: no reply at all
	}
	return append(out, ']')
}
