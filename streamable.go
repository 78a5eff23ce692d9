package jsonrpc

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/streamable"
	"github.com/seedhq/jsonrpc/internal/wire"
	"github.com/seedhq/jsonrpc/state"
)

// Streamable HTTP (MCP 2025-11-25, basic/transports), the server side; the
// contract is in doc.go.

// SSEPolicy says when a POST is answered with an event stream.
type SSEPolicy uint8

const (
	// SSEAuto answers with JSON unless the handler sends the client a
	// message before its response; then the answer becomes an event
	// stream. A client that does not accept text/event-stream gets JSON and
	// no connection to call back on (ConnFromContext is nil), as from
	// ServeHTTP.
	SSEAuto SSEPolicy = iota
	// SSEAlways answers every POST carrying requests with an event stream
	// when the client accepts one.
	SSEAlways
	// SSENever always answers with JSON (ServeHTTP's behaviour).
	SSENever
)

// StreamableHTTPOptions configures StreamableHTTPHandler.
type StreamableHTTPOptions struct {
	// Sessions issues an MCP-Session-Id header with the response to the
	// initialization request; every later request must then carry it (400
	// without it, 404 for an unknown or ended session) and DELETE ends it.
	// Off, the handler is stateless: any instance behind a load balancer
	// can serve any POST.
	Sessions bool
	// InitializeMethod is the request that starts a session (default "initialize").
	InitializeMethod string
	// SessionIdleTimeout ends a session unused for that long (default 30 minutes).
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the live sessions (default 10000); an
	// initialization over it gets 503 with Retry-After.
	MaxSessions int
	// SSE is when a POST is answered with an event stream (default SSEAuto).
	SSE SSEPolicy
	// ProtocolVersions, when set, are the values of the MCP-Protocol-Version
	// request header the server accepts; a request with another gets 400.
	// A request without the header is accepted (MCP: assume the oldest).
	ProtocolVersions []string
	// StatelessVersions are the MCP revisions served statelessly, request
	// by request (2026-07-28 on; see MCPMetaFromContext): a request whose
	// MCP-Protocol-Version names one is served on its own, with no
	// session, whatever Sessions says. Its POST holds one message (a batch
	// gets -32600), its Mcp-Method and Mcp-Name headers and its
	// _meta protocol version must match the body (else HTTP 400, -32020),
	// its _meta must name the client's capabilities (else 400, -32602); an
	// unknown method's answer is 404; closing the answer cancels the call.
	// With StatelessVersions set, a revision in neither list gets 400 with
	// -32022 listing both.
	StatelessVersions []string
	// ToolInputSchema returns the inputSchema of the tool named (nil when
	// there is none), for the Mcp-Param-* header rules of the stateless
	// revisions: a tools/call argument whose property the schema marks
	// with "x-mcp-header": NAME must come in the header Mcp-Param-NAME too,
	// once, equal after decoding (integers compared as numbers), and a
	// header for an argument the body lacks is refused (else HTTP 400,
	// -32020). nil: Mcp-Param-* headers are not checked.
	ToolInputSchema func(tool string) json.RawMessage

	// NoStandaloneStream answers GET with 405: no stream apart from the
	// POSTs', and SessionConn returns nil. Without Sessions there is no
	// standalone stream either (GET gets 405).
	NoStandaloneStream bool
	// OutboxSize and OutboxBytes bound the messages of a session waiting
	// for its standalone stream (default 256 messages, 256 KiB): sent on
	// SessionConn while no GET stream is open, or faster than the client
	// reads it. A message over either bound is refused: its send fails
	// with ErrStreamBacklog (nothing waits). With EventStore the store is
	// the outbox, shared by the instances (see docs/streamable-http-mcp.md).
	OutboxSize, OutboxBytes int
	// EventStoreSize and EventStoreBytes bound the events a session keeps
	// so that a client can resume a stream cut off (default 256 events,
	// 256 KiB, per session); past either, the oldest go. A negative
	// EventStoreSize keeps none: events carry no ids and nothing resumes.
	EventStoreSize, EventStoreBytes int
	// EventStore, when set, keeps the events of every session's streams in
	// place of each session's own store (EventStoreSize and EventStoreBytes
	// then do not apply: the store's Limits do), shared by the instances
	// that share it: a stream cut off resumes with Last-Event-ID through any
	// of them, and a POST's stream still written on another instance is
	// followed there until its response (see docs/streamable-http-mcp.md,
	// which says what each event costs and how a dead instance's calls end).
	EventStore state.EventStore
	// KeepAlive is the interval of the comment lines written on an open
	// event stream so that proxies do not cut it as idle (default 15 s;
	// negative: none).
	KeepAlive time.Duration
	// RetryDelay is sent as the retry: field at the start of every event
	// stream of a session: how long a client waits before reconnecting
	// (default 1 s; negative: no retry field).
	RetryDelay time.Duration
	// SessionStore, with Sessions, shares them with the instances using
	// the same store: a session initialised through one continues through
	// any other, and DELETE or expiry ends it on all (404). Every request
	// naming a session asks the store (503 with error -32030 when it fails
	// or takes 2 s; docs/streamable-http-mcp.md). nil: this process only.
	SessionStore state.SessionStore
	// SessionStaleness serves a session checked with the SessionStore less
	// than that long ago without asking again: a DELETE through another
	// instance reaches this one within it (default 0: every request asks).
	SessionStaleness time.Duration
}

// Defaults of StreamableHTTPOptions.
const (
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultMaxSessions        = 10000
	DefaultOutboxSize         = 256
	DefaultOutboxBytes        = 256 << 10
	DefaultEventStoreSize     = 256
	DefaultEventStoreBytes    = 256 << 10
	DefaultKeepAlive          = 15 * time.Second
	DefaultRetryDelay         = time.Second
)

// StreamableHTTPHandler returns an http.Handler serving s over Streamable
// HTTP. A POST of notifications or responses only gets 202 Accepted and no
// body; a POST carrying requests gets their reply as application/json or
// as an event stream (see SSEPolicy), each event "event: message" with one
// JSON-RPC message as its data. Limits, origin checks (403) and body
// limits (413) are those of ServeHTTP. A POST whose requests must be
// routed (under a Convention, in a session, or under a handler timeout
// with a client that takes event streams) gets 503 with Retry-After: 1,
// none of them served, while 2^31-1 POSTs and session connections are
// routed.
//
// With Sessions, GET (Accept: text/event-stream, else 406) opens the
// session's one standalone stream (a new GET takes it over): it carries
// what SessionConn sends, never a response. Every event has an id unique in
// the session, "<stream>-<n>"; each stream starts with a retry: field and
// an id naming its start (MCP's priming event, with empty data for clients
// of 2025-11-25 on). A dropped connection neither cancels a POST's call nor
// loses its events: GET with Last-Event-ID writes the stored events after
// the id, then goes on with the stream (400 for an id of no stream of the
// session; 410 for a POST's stream whose events were evicted, while the
// standalone stream resumes with what is left). A ": keep-alive" comment
// is written every KeepAlive; a session whose standalone stream is open
// does not expire.
//
// Stateless (Sessions off), every POST is served on its own, by any
// instance: no session header, GET and DELETE get 405, events carry no
// ids. StatelessVersions adds MCP 2026-07-28's stateless mode, chosen by
// each request's protocol version.
func (s *Server) StreamableHTTPHandler(opts StreamableHTTPOptions) http.Handler {
	opts.InitializeMethod = cmp.Or(opts.InitializeMethod, "initialize")
	opts.SessionIdleTimeout = orDefault(opts.SessionIdleTimeout, DefaultSessionIdleTimeout)
	opts.MaxSessions = orDefault(opts.MaxSessions, DefaultMaxSessions)
	opts.OutboxSize = orDefault(opts.OutboxSize, DefaultOutboxSize)
	opts.OutboxBytes = orDefault(opts.OutboxBytes, DefaultOutboxBytes)
	opts.EventStoreSize = cmp.Or(opts.EventStoreSize, DefaultEventStoreSize) // negative: none
	opts.EventStoreBytes = orDefault(opts.EventStoreBytes, DefaultEventStoreBytes)
	opts.KeepAlive, opts.RetryDelay = cmp.Or(opts.KeepAlive, DefaultKeepAlive), cmp.Or(opts.RetryDelay, DefaultRetryDelay)
	h := &streamableHandler{srv: s, opts: opts}
	h.rules.Versions, h.rules.SessionVersions, h.rules.ToolInputSchema = opts.StatelessVersions, opts.ProtocolVersions, opts.ToolInputSchema
	h.sessions = streamable.NewSessions(streamable.ServerConfig{
		IdleTimeout: opts.SessionIdleTimeout, MaxSessions: opts.MaxSessions, Enabled: opts.Sessions, Standalone: !opts.NoStandaloneStream,
		OutboxSize: opts.OutboxSize, OutboxBytes: opts.OutboxBytes, StoreSize: opts.EventStoreSize, StoreBytes: opts.EventStoreBytes,
		KeepAlive: opts.KeepAlive, Retry: opts.RetryDelay, WriteTimeout: func() time.Duration { return max(cmp.Or(s.WriteTimeout, DefaultWriteTimeout), 0) },
		OnEnd: h.endPOSTs, NewConn: h.sessionConn, Shared: opts.EventStore,
		InitializeMethod: opts.InitializeMethod, Store: opts.SessionStore, Staleness: opts.SessionStaleness,
	})
	// Shutdown ends the open streams (their clients reconnect elsewhere), so
	// that an HTTP server's graceful shutdown does not wait for them.
	s.life.OnShutdown(func(context.Context) error {
		h.sessions.Shutdown()
		return nil
	})
	return h
}

// streamableHandler is Streamable HTTP's http.Handler: the JSON-RPC side;
// the sessions and their streams are internal/streamable's.
type streamableHandler struct {
	srv      *Server
	opts     StreamableHTTPOptions
	sessions *streamable.Sessions
	routes   streamable.Routes // the connections that call the client (a POST's, a session's), by the high bits of their call ids
	rules    mcp.Stateless     // the stateless revisions' checks
	opening  func(*Conn)       // a test's: runs in open once the connection is made, before it begins (nil: none)
}

// ServeHTTP reads a POST's body and hands it to Server.dispatch once, with
// the POST as its sink (postSink), in either era, then serves the requests
// at once, as plain HTTP does: the answer is JSON unless a handler reaches
// its client (ConnFromContext opens the POST's event stream and
// connection: open). A POST that may become an event stream is served on
// a goroutine of its own (serveAside) in a session that keeps its events,
// or under a handler timeout: its call may outlive its response. Nothing
// answered by then (notifications and responses only, or notifications
// Admit refused) is accepted: 202.
func (h *streamableHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := postSinkPool.Get().(*postSink)
	defer p.release()
	if !h.route(w, r, p) {
		return
	}
	s := h.srv
	var ok bool
	if p.data, ok = s.readPOST(w, r, p.data); !ok {
		return
	}
	// The body is in: a long answer (an event stream) is not cut by the
	// listener's read timeout.
	httpx.SetReadDeadline(w, time.Time{})
	p.ctx = &metaContext{Context: r.Context(), pi: peerInfo{peer: s.httpPeer(r, "http"), srv: s}} // and the _meta checkStateless finds
	p.srv, p.d = s, s.handlerTimeout(false)
	e, batch, ok := s.dispatch(p.ctx, &p.inbound, p)
	switch stream := ok && p.acceptsSSE && p.calls > 0; {
	case stream && (p.sess.KeepsEvents() || p.d > 0):
		p.serveAside(e, batch)
	case ok:
		p.serveAtOnce(e, batch, stream)
	}
	if !p.answered {
		p.w.WriteHeader(http.StatusAccepted)
	}
}

// serveAtOnce serves e (or batch) on ServeHTTP's goroutine, as plain HTTP
// does, and answers the POST. With its requests routed (under a
// Convention, or in a session) the client's cancels and the session's end
// reach them: when no route is left it answers 503 before any is served.
// stream says the answer may become an event stream (open).
func (p *postSink) serveAtOnce(e *wire.Envelope, batch []wire.Envelope, stream bool) {
	if stream {
		p.lent = true // as when served aside: a handler may hand its request on (an MCP task keeps its context, whose _meta is in the body)
	}
	routed := p.calls > 0 && (p.srv.Convention != ConventionNone || p.sess != nil)
	if routed && !p.routeAtOnce(e, batch) { // the client's cancels find the requests (cancel), and the session's end (endPOSTs)
		p.tooManyStreams()
		return
	}
	if stream || routed {
		p.ctx.post = p // the handlers' ConnFromContext opens the POST's connection (open), its requests are kept in flight (startRequest)
	}
	p.srv.life.Enter() // Shutdown answers it first
	defer p.srv.life.Leave()
	p.serve(e, batch)
}

// serve serves e (or batch) and answers the POST, unless answerLate did;
// then what waits for the reply runs (afterReply).
func (p *postSink) serve(e *wire.Envelope, batch []wire.Envelope) {
	p.exchange.serve(p.ctx, e, batch)
	p.ctx.mu.Lock()
	p.ctx.post = nil // nothing opens any more
	after := p.after
	p.ctx.mu.Unlock()
	if !p.late {
		p.answer(p.reply)
	} else if p.ps != nil {
		p.end(p.ps)
	}
	for _, f := range after {
		f()
	}
}

// afterReply runs f once the POST c belongs to is answered (see the
// function afterReply); false where c serves none.
func (c *metaContext) afterReply(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.post == nil {
		return false
	}
	c.post.after = append(c.post.after, f)
	return true
}

// serveAside serves e (or batch) as serveAtOnce does but on a goroutine
// of its own, while ServeHTTP's holds the POST's answer (keep-alives of its
// event stream) until it ends. Its call may outlive the response: a client
// that goes away once the events have begun does not cancel it, nor does
// CloseEventStream, nor a reply sent at the handler timeout (answerLate).
// ServeHTTP returns, and in a session that keeps events the call's events
// are stored for a GET with Last-Event-ID to resume; where nothing would
// resume, the call is cancelled (drop).
func (p *postSink) serveAside(e *wire.Envelope, batch []wire.Envelope) {
	p.aside, p.lent = true, true // its goroutine holds p, the body and the reply
	p.ctx.Context = context.WithoutCancel(p.ctx.Context)
	if !p.routeAtOnce(e, batch) {
		p.tooManyStreams()
		return
	}
	ps := p.ps
	out := p.newAnswer(ps)
	if es := ps.Events; es.Shared != nil {
		es.Shared.Head = streamable.Head(p.data, e, batch) // the calls a Follow answers if this instance dies
	}
	p.ctx.post = p
	p.srv.life.Enter()
	connrt.Go(func() {
		defer p.srv.life.Leave()
		p.serve(e, batch)
	})
	ps.Events.Hold(p.r.Context(), out, ps.Closed())
	if ps.LetGo() {
		ps.drop() // nothing would resume it
	}
}

// route answers every request but a Streamable HTTP POST (refused, a GET
// or DELETE of a session, a plain JSON-RPC client's POST served as by
// ServeHTTP) and reports false; for a POST it sets up p and reports true.
func (h *streamableHandler) route(w http.ResponseWriter, r *http.Request, p *postSink) bool {
	if !h.srv.checkOrigin(w, r) {
		return false
	}
	p.h, p.w, p.r, p.stateless = h, w, r, h.rules.Serves(r.Header.Get(mcp.VersionHeader))
	switch {
	case p.stateless && r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "jsonrpc: method "+r.Method+" not allowed: MCP "+r.Header.Get(mcp.VersionHeader)+" has no GET stream and no sessions; POST each message", http.StatusMethodNotAllowed)
		return false
	case p.stateless:
		p.status.ResponseWriter = w
		p.w = &p.status // a single error's answer gets its HTTP status
	case !streamable.CheckVersion(w, r, h.opts.ProtocolVersions):
		return false
	case r.Method != http.MethodPost:
		h.sessions.ServeOther(w, r) // GET and DELETE with sessions, else 405
		return false
	}
	p.acceptsSSE = h.opts.SSE != SSENever && streamable.AcceptsEventStream(r.Header.Get("Accept"))
	// A handler may keep its request's context (an MCP task does), and with
	// it the request's _meta: it stays in a body that is lent (one served on
	// an event stream is), else it is copied (checkStateless).
	p.lent = p.stateless && p.acceptsSSE
	if !p.acceptsSSE && !h.opts.Sessions && len(h.rules.Versions) == 0 {
		h.srv.ServeHTTP(w, r) // a plain JSON-RPC client: exactly as ServeHTTP (under a stateless revision, _meta is checked: postSink)
		return false
	}
	return true
}

// postSink is the sink of a Streamable HTTP POST in both eras: it finds the
// POST's session (or checks the stateless rules), routes its responses and
// cancels to their connections, and answers the rest (answer).
type postSink struct {
	exchange // serves what is answered at once
	h        *streamableHandler
	w        http.ResponseWriter
	status   streamable.StatusByError // w under a stateless revision
	r        *http.Request
	sess     *streamable.Session // its session (nil: none)
	client   string              // see streamable.ClientKey
	ctx      *metaContext        // the POST's context, with the stateless revision's _meta
	calls    int                 // the requests answered (take)
	ps       *postStream         // the POST's own, once routed (route) or its answer made (newAnswer)
	conn     *Conn               // its connection, once a handler served at once opened it (open)
	held     chan struct{}       // closed once the keep-alives of conn's event stream stop
	after    []func()            // run once the POST is answered (afterReply)

	acceptsSSE, stateless bool
	opened                bool // begin has run
	answered              bool // a response was written (else: 202)
	late                  bool // answered at the handler timeout (answerLate)
	aside                 bool // served on a goroutine of its own (serveAside)
	noConn                bool // open made no connection: Shutdown had begun
	lent                  bool // the body or the reply may outlive the POST (routed responses, an event stream, a connection)
}

var postSinkPool = sync.Pool{New: func() any {
	p := new(postSink)
	p.exchange.late = p.answerLate
	return p
}}

// release gives p back to postSinkPool, keeping its scanner's buffers and,
// as ServeHTTP does, the body's and the reply's when the POST was served at
// once and they are small: nothing holds p once its POST is answered.
func (p *postSink) release() {
	if p.aside {
		return // its goroutine still holds it
	}
	sc, body, out, late := p.scanState, p.data[:0], p.reply[:0], p.exchange.late
	if p.lent || cap(body) > maxPooledBody || cap(out) > maxPooledBody {
		body, out = nil, nil
	}
	sc.sc.Data = nil
	*p = postSink{}
	p.scanState, p.data, p.out, p.exchange.late = sc, body, out, late
	postSinkPool.Put(p)
}

// begin finds the POST's session, or applies the stateless revision's
// checks to its message m (nil: it did not parse); false when it has
// answered the POST with an error.
func (p *postSink) begin(data []byte, m *wire.Message) bool {
	h := p.h
	p.opened = true
	switch {
	case p.stateless:
		if m != nil && !p.checkStateless(data, m) {
			return false
		}
	case m != nil && !p.checkMetaVersion(data, m):
		return false
	case h.opts.Sessions:
		if p.sess = h.sessions.ForPOST(p.w, p.r, data, m); p.sess == nil {
			p.answered = true
			return false
		}
		if p.sess.Standalone != nil {
			p.ctx.Context = context.WithValue(p.ctx.Context, sessionKey{}, p.sess) // SessionConn
		}
	}
	p.client = streamable.ClientKey(p.r, p.ctx.pi.peer.RemoteAddr, p.sess.SessionID())
	return true
}

// take routes the responses in the POST's message to the connections whose
// calls they answer (streamable.Route) and its cancels to the POSTs serving
// the requests they name (cancel); it returns the rest, to serve.
func (p *postSink) take(data []byte, m *wire.Message) ([]wire.Envelope, bool) {
	if !p.begin(data, m) {
		return nil, false
	}
	responses, cancels := 0, 0
	for i := range m.Elems {
		switch e := &m.Elems[i]; {
		case e.Kind == wire.KindResponse || e.Kind == wire.KindBadResponse:
			responses++
		case e.Kind != wire.KindRequest || e.ID.Present():
			p.calls++ // answered: a call, or an invalid element
		default:
			if id, ok := p.srv.cancelledID(e.MethodName(data), paramsOf(data, e)); ok {
				cancels++
				if !id.IsZero() {
					p.h.cancel(p.client, id)
				}
			}
		}
	}
	if responses > 0 {
		p.lent = true // delivered to the connections that wait for them
		streamable.Route(&p.h.routes, data, m.Elems, p.sess.SessionID(), responses < len(m.Elems))
	}
	switch {
	case !m.Batch:
		return m.Elems, responses+cancels == 0
	case responses == 0:
		return m.Elems, true
	}
	return slices.DeleteFunc(slices.Clone(m.Elems), func(e wire.Envelope) bool {
		return e.Kind == wire.KindResponse || e.Kind == wire.KindBadResponse
	}), true
}

// early answers what is decided before any handler runs: a refusal by
// Admit is 429, as on plain HTTP (notifications refused are accepted); an
// error, under the stateless revision, gets HTTP 400.
func (p *postSink) early(reply []byte, refused error) {
	if !p.opened && !p.begin(p.data, nil) {
		return // the message did not parse: its session is checked all the same
	}
	switch {
	case refused != nil && len(reply) == 0:
	case refused != nil:
		p.answered = true
		tooManyRequests(p.w, refused)
	case p.stateless:
		p.fail(http.StatusBadRequest, reply)
	default:
		p.answer(reply)
	}
}

// fail answers the POST with reply, a JSON-RPC error, and an HTTP status.
func (p *postSink) fail(status int, reply []byte) {
	p.answered = true
	p.w.Header()["Content-Type"] = jsonContentType
	p.w.WriteHeader(status)
	p.w.Write(reply)
}

// writeJSON answers the POST with reply as one JSON body, gzipped as
// plain HTTP replies are.
func (p *postSink) writeJSON(reply []byte) {
	p.answered = true
	p.ctx.pi.ReplyHeader(p.w.Header())
	p.ctx.pi.WriteJSON(p.w, reply)
}

// answer answers the POST with reply (its requests' replies, or an early
// error) once nothing of it is served any more: as JSON, unless a handler
// opened its answer (open), SSEAlways makes it an event stream, or all its
// requests were cancelled (MCP: no reply; an event stream with no
// message); then what the POST opened closes.
func (p *postSink) answer(reply []byte) {
	ps, always := p.ps, p.acceptsSSE && p.h.opts.SSE == SSEAlways
	if !always && (ps == nil || ps.Events == nil && (len(reply) > 0 || !p.acceptsSSE)) { // ps: routed for cancels only
		if len(reply) > 0 {
			p.writeJSON(p.sess.Commit(reply, p.w.Header()))
		}
		if ps != nil {
			p.end(ps)
		}
		return
	}
	if ps == nil {
		ps = new(postStream)
	}
	if ps.Events == nil {
		p.newAnswer(ps)
	}
	if len(reply) > 0 {
		ps.sendReply(reply) // it ends the answer
	} else {
		ps.Unanswered()
	}
	p.end(ps)
}

// answerLate answers, at the handler timeout, a POST whose handlers still
// run (timedServe's late). One served aside gets its reply on its answer,
// which ends, and ServeHTTP returns; else the reply goes as JSON, complete
// once flushed, with Connection: close, since a handler still holds the
// request.
func (p *postSink) answerLate(reply []byte) {
	if len(reply) == 0 {
		return // notifications: accepted once they return
	}
	if p.aside {
		p.late = true
		p.ps.sendReply(reply)
		return
	}
	h := p.w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Length", strconv.Itoa(len(reply)))
	p.writeJSON(p.sess.Commit(reply, h))
	http.NewResponseController(p.w).Flush()
	p.late = true
}

// routeAtOnce routes the POST before its requests, e (or batch), are
// served at once: the client's cancels find them, those not started yet
// too (ids), and, in a session or served aside, the session's end cancels
// them all (drop), under any Convention. False: no route is left.
func (p *postSink) routeAtOnce(e *wire.Envelope, batch []wire.Envelope) bool {
	ps := &postStream{client: p.client}
	if (p.sess != nil || p.aside) && p.srv.Convention == ConventionNone { // else each request's context is cancelled (drop)
		p.ctx.Context, ps.cancel = context.WithCancelCause(p.ctx.Context)
	}
	if p.srv.Convention != ConventionNone {
		ps.ids = atOnceIDs{data: p.data, e: e, batch: batch}
	}
	if p.route(ps) == nil {
		if ps.cancel != nil {
			ps.cancel(nil)
		}
		return false
	}
	return true
}

// tooManyStreams answers 503, with Retry-After, a POST whose requests
// would be routed when no route is left; none has been served.
func (p *postSink) tooManyStreams() {
	p.answered = true
	p.w.Header().Set("Retry-After", "1")
	http.Error(p.w, "jsonrpc: too many streams", http.StatusServiceUnavailable)
}

// route routes ps, the POST's postStream: the client's cancels find the
// requests served at once (cancel), its answers to the calls of the POST's
// connection find it (streamable.Route). nil: no route is left.
func (p *postSink) route(ps *postStream) *postStream {
	ps.Inbox.Init(p.sess.SessionID())
	key, ok := p.h.routes.Add(ps)
	if !ok {
		return nil
	}
	ps.key, p.ps = key, ps
	return ps
}

// newAnswer makes ps the POST's answer (streamable.Answer): JSON until
// something is sent before the reply, on an event stream of the POST's
// session.
func (p *postSink) newAnswer(ps *postStream) *sse.Out {
	es, out := p.h.sessions.PostStream(p.sess), sse.NewOut(p.w)
	es.Open(out)
	ps.Answer = streamable.Answer{W: p.w, Events: es, Reply: &p.ctx.pi, WithData: !p.stateless && p.r.Header.Get(mcp.VersionHeader) >= mcp.Version2025,
		Always: p.h.opts.SSE == SSEAlways, Session: p.sess}
	p.answered, p.lent = true, true
	return out
}

// open opens, for a handler served at once (ConnFromContext), the
// connection of the POST c belongs to, on its answer: what it sends goes
// as events, and the client's answers to its calls, POSTed apart, are
// routed to it; while it is open, Shutdown waits for the POST. nil once
// the POST is answered, or when Shutdown found the connection idle before
// it began: the POST, accepted, is served all the same, its reply as JSON.
func (c *metaContext) open() *Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.post
	switch {
	case p == nil || !p.acceptsSSE: // a client that takes no event stream has no connection
		return nil
	case p.conn != nil || p.noConn:
		return p.conn // opened before
	}
	ps := p.ps
	if ps == nil {
		if ps = p.route(&postStream{client: p.client}); ps == nil {
			return nil
		}
	}
	var out *sse.Out // the POST's answer, unless it has one (serveAside)
	if ps.Events == nil {
		out = p.newAnswer(ps)
	}
	conn := newConnContext(detached{c}, ps, p.srv, nil)
	if p.h.opening != nil {
		p.h.opening(conn)
	}
	if !conn.begin() { // Shutdown found it idle: the handler reaches no client, its reply goes as JSON (the POST, counted, is answered first)
		conn.Close()
		p.noConn = true
		return nil
	}
	conn.seq.Store(ps.key << 32) // our calls' ids name the route (streamable.Route)
	p.conn = conn
	if out != nil && p.h.opts.KeepAlive > 0 {
		es, ctx, held := ps.Events, p.r.Context(), make(chan struct{})
		p.held = held
		connrt.Go(func() { es.Hold(ctx, out, ps.Closed()); close(held) }) // the keep-alives
	}
	return conn
}

// end closes what the POST opened once it is answered: its route, its
// connection, its event stream.
func (p *postSink) end(ps *postStream) {
	if ps.key != 0 {
		p.h.routes.Remove(ps.key)
		ps.Shut()
	}
	ps.mu.Lock()
	ps.ids = atOnceIDs{} // the POST's body and envelopes go back to its pool; a cancel may still find ps
	ps.mu.Unlock()
	if p.conn != nil {
		p.conn.end()
		p.conn.Close()
	}
	if ps.Events != nil {
		p.sess.CloseStream(ps.Events)
	}
	if p.held != nil {
		<-p.held
	}
}

// startRequest keeps request id, served at once, in flight on the POST c
// belongs to, where the client's cancel finds it (nil: the POST is not
// routed).
func (c *metaContext) startRequest(ctx context.Context, id ID, params []byte) *callCtx {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.post == nil || c.post.ps == nil {
		return nil
	}
	ps := c.post.ps
	k := id.key()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.inflight.get(k) != nil {
		return nil
	}
	r := newRequestCtx(ctx, c.pi.srv.Convention, ps, params)
	switch {
	case ps.closed:
		r.cancel(ErrClosed) // its session has ended
	case ps.cancelled[k]:
		r.cancel(errPeerCancelled) // cancelled before it started
	}
	ps.inflight.add(k, r)
	return r
}

// CloseEventStream ends the response carrying the events of the Streamable
// HTTP POST whose request ctx serves (the POST's, or a GET's that resumed
// them) before its reply, as MCP's SSE polling does: the call goes on, and
// the client, after RetryDelay, resumes with GET and Last-Event-ID and gets
// the rest of its events, the reply too, from the event store. It reports
// false, doing nothing, where nothing would resume: no session or event
// store, a client that takes no event stream, the reply sent.
func CloseEventStream(ctx context.Context) bool {
	c, ok := ctx.Value(connKey{}).(*metaContext)
	if !ok {
		return false
	}
	c.mu.Lock()
	p := c.post
	c.mu.Unlock()
	return p != nil && p.aside && p.ps.EndResponse() // served on ServeHTTP's goroutine, a POST keeps no events: nothing would resume
}

// cancel routes a cancel from client to the POST serving its request id.
func (h *streamableHandler) cancel(client string, id ID) {
	for _, t := range h.routes.All() {
		if ps, ok := t.(*postStream); ok && ps.client == client && ps.cancelIncoming(id) {
			return
		}
	}
}

// cancelIncoming cancels request id of the POST c belongs to, served at
// once and routed (see postStream.cancelIncoming); false where it is not.
func (c *metaContext) cancelIncoming(id ID) bool {
	c.mu.Lock()
	var ps *postStream
	if c.post != nil {
		ps = c.post.ps
	}
	c.mu.Unlock()
	return ps != nil && ps.cancelIncoming(id)
}

// cancelIncoming cancels the POST's request id if it is being served, or
// makes it start cancelled if it is not yet; it reports whether that
// cancelled it. The request goes unanswered, under MCP, when its handler
// returns (answer).
func (ps *postStream) cancelIncoming(id ID) bool {
	k := id.key()
	ps.mu.Lock()
	r := ps.inflight.get(k)
	early := r == nil && !ps.cancelled[k] && ps.ids.has(k) // not started yet: it starts cancelled (startRequest)
	if early {
		if ps.cancelled == nil {
			ps.cancelled = make(map[string]bool)
		}
		ps.cancelled[k] = true
	}
	ps.mu.Unlock()
	return early || r.cancelByPeer()
}

// drop shuts the POST's channel and cancels its requests: its session has
// ended (endPOSTs), or its client went away where nothing resumes
// (serveAside). Its connection's close does not (the Channel's Close is
// Inbox's): one opened for a handler that Shutdown closes before it begins
// leaves the POST's requests, accepted, to be answered (open).
func (ps *postStream) drop() {
	ps.Shut()
	if ps.cancel != nil {
		ps.cancel(ErrClosed) // every request of a session's POST, under any Convention
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.closed = true
	ps.inflight.each(func(r *callCtx) { r.cancel(ErrClosed) })
}

// endRequest forgets request id, served at once (see inflight).
func (ps *postStream) endRequest(id ID) (cancelled bool) {
	ps.mu.Lock()
	r := ps.inflight.remove(id.key())
	ps.mu.Unlock()
	return r.end()
}

// endPOSTs cancels the POSTs of a session that ends.
func (h *streamableHandler) endPOSTs(session string) {
	for _, t := range h.routes.All() {
		if ps, ok := t.(*postStream); ok && ps.SessionID() == session {
			ps.drop()
		}
	}
}

// sessionConn makes the connection of session s (SessionConn), with the
// peer of the request ctx belongs to.
func (h *streamableHandler) sessionConn(ctx context.Context, s *streamable.Session) io.Closer {
	ch := &sessionChannel{sess: s, h: h}
	ch.Inbox.Init(s.ID)
	key, ok := h.routes.Add(ch)
	if !ok {
		return nil
	}
	ch.key = key
	base := context.Background()
	if pi, ok := ctx.Value(peerKey{}).(*peerInfo); ok {
		base = withPeer(base, pi.srv, pi.peer)
	}
	c := newConnContext(base, ch, h.srv, nil)
	c.seq.Store(key << 32) // the client's answers find their way back (streamable.Route)
	ch.conn = c
	return c
}

// sessionChannel is the Channel of a session's connection: what it sends
// goes to the session's outbox, for the standalone stream; it receives the
// client's answers to its calls, POSTed and routed to it by id.
type sessionChannel struct {
	sess *streamable.Session
	h    *streamableHandler
	conn *Conn
	key  uint64
	streamable.Inbox
}

// Send queues msg for the standalone stream; it never waits, and fails
// with ErrStreamBacklog when the outbox is full. With an EventStore it
// appends msg there (2 s at most) for whichever instance holds the GET.
func (c *sessionChannel) Send(msg []byte) error { return c.sess.Standalone.Enqueue(msg) }

// Close ends the connection's channel; the session lives on, and the next
// SessionConn makes a new connection.
func (c *sessionChannel) Close() error {
	if c.Shut() {
		c.h.routes.Remove(c.key)
		c.sess.DropConn(c.conn)
	}
	return nil
}

// postStream is the Channel of one POST's connection: it receives the
// client's answers to its calls, POSTed and routed to it by id, and writes
// to the POST's answer. It keeps the POST's requests' contexts in
// inflight, for the client's cancels (cancel).
type postStream struct {
	streamable.Answer
	client           string                  // see streamable.ClientKey
	key              uint64                  // its route (0: none)
	cancel           context.CancelCauseFunc // cancels the context of a session's POST (or one served aside) under no Convention (nil: none)
	streamable.Inbox                         // the channel's receiving side

	mu        sync.Mutex
	inflight  inflightSet
	ids       atOnceIDs       // the requests served at once, until answered (under a Convention)
	cancelled map[string]bool // the ids of those cancelled before they started (nil: none)
	closed    bool            // its session has ended: requests start cancelled
}

// atOnceIDs are the requests of a POST served at once, e or batch in
// data, whose ids a cancel may name before they start.
type atOnceIDs struct {
	data  []byte
	e     *wire.Envelope
	batch []wire.Envelope
}

// has reports whether k is the key of one of the requests' ids.
func (a *atOnceIDs) has(k string) (found bool) {
	eachID(a.data, a.e, a.batch, func(id string) bool { found = id == k; return !found })
	return found
}

// Send writes a call or notification of the connection to the client: it
// goes as an event (the answer becomes an event stream).
func (ps *postStream) Send(msg []byte) error { return ps.Write(msg, false) }

// sendReply writes the reply to the POST's message, which ends the answer.
func (ps *postStream) sendReply(msg []byte) error { return ps.Write(msg, true) }

// WriteJSON writes msg as a JSON answer, gzipped as plain HTTP replies are
// (streamable.Replier).
func (pi *peerInfo) WriteJSON(w http.ResponseWriter, msg []byte) error {
	if sw, ok := w.(*streamable.StatusByError); ok {
		sw.Reply(msg) // a single error's answer gets its HTTP status
	}
	return pi.srv.writeJSON(w, pi.peer.Header, msg)
}
