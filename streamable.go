package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/streamable"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Streamable HTTP: the transport of the Model Context Protocol (revision
// 2025-11-25, basic/transports), for any JSON-RPC service. One endpoint
// takes POSTs; a POST carrying requests is answered with one JSON body, or
// with a Server-Sent Events stream that carries the messages the handler
// sends to the client (notifications, and requests whose answers the client
// POSTs back) and then the response. A handler reaches the client with
// ConnFromContext, exactly as on a stream. With sessions, GET opens the
// session's standalone stream, which carries what is sent on the session's
// connection (SessionConn) outside any POST, and every stream can be
// resumed after a dropped connection (GET with Last-Event-ID).

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
	// with ErrStreamBacklog (nothing waits).
	OutboxSize, OutboxBytes int
	// EventStoreSize and EventStoreBytes bound the events a session keeps
	// so that a client can resume a stream cut off (default 256 events,
	// 256 KiB, per session); past either, the oldest go. A negative
	// EventStoreSize keeps none: events carry no ids and nothing resumes.
	EventStoreSize, EventStoreBytes int
	// KeepAlive is the interval of the comment lines written on an open
	// event stream so that proxies do not cut it as idle (default 15 s;
	// negative: none).
	KeepAlive time.Duration
	// RetryDelay is sent as the retry: field at the start of every event
	// stream of a session: how long a client waits before reconnecting
	// (default 1 s; negative: no retry field).
	RetryDelay time.Duration
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

const (
	sessionHeader  = mcp.SessionHeader
	versionHeader  = mcp.VersionHeader
	eventStream    = sse.ContentType
	maxPostStreams = 1 << 31 // keys of live POST streams: the high bits of our call ids
)

// StreamableHTTPHandler returns an http.Handler serving s over Streamable
// HTTP. A POST of notifications or responses only gets 202 Accepted and no
// body; a POST carrying requests gets their reply as application/json or
// as an event stream (see SSEPolicy), each event "event: message" with one
// JSON-RPC message as its data. Limits, origin checks (403) and body
// limits (413) are those of ServeHTTP.
//
// With Sessions, GET (Accept: text/event-stream, the session's header)
// opens the session's standalone stream: it carries the requests and
// notifications sent on SessionConn, never a response. A session has one
// standalone stream: a new GET takes it over and the older response ends.
// Messages sent while none is open wait in the session's outbox (OutboxSize).
// Every event of a session has an id, "<stream>-<n>", unique in the
// session; each stream starts with a retry: field and an id naming its
// start (MCP's priming event, with an empty data field for clients of
// revision 2025-11-25 and later). A dropped connection neither cancels a
// POST's call nor loses its events: GET with Last-Event-ID writes the
// stored events of that stream after the id, then goes on with the stream
// (a POST's stream whose response was already sent: the rest, then the
// end). A Last-Event-ID that is malformed or names no stream of the session
// gets 400; one whose missed events were evicted from the store
// (EventStoreSize) gets 410 for a POST's stream, while the standalone stream
// resumes with what is left. GET gets 405 without sessions (a stateless
// server has no one to push to) or with NoStandaloneStream; 406 without
// text/event-stream in Accept. An idle keep-alive comment (": keep-alive")
// is written every KeepAlive; a session whose standalone stream is open
// does not expire.
//
// Stateless (Sessions off), every POST is served on its own, by any
// instance behind a load balancer: no session header, GET and DELETE get
// 405, events carry no ids. The stateless revision of MCP (2026-07-28: no
// sessions, no GET stream, each request naming its version in _meta) fits
// beside it as a mode chosen by the request's protocol version: the POST
// path (post, serveStream) already serves each request on its own.
func (s *Server) StreamableHTTPHandler(opts StreamableHTTPOptions) http.Handler {
	if opts.InitializeMethod == "" {
		opts.InitializeMethod = "initialize"
	}
	if opts.SessionIdleTimeout <= 0 {
		opts.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	opts.OutboxSize = orDefault(opts.OutboxSize, DefaultOutboxSize)
	opts.OutboxBytes = orDefault(opts.OutboxBytes, DefaultOutboxBytes)
	if opts.EventStoreSize == 0 {
		opts.EventStoreSize = DefaultEventStoreSize
	}
	opts.EventStoreBytes = orDefault(opts.EventStoreBytes, DefaultEventStoreBytes)
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.RetryDelay == 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	h := &streamableHandler{srv: s, opts: opts}
	h.rules.Versions, h.rules.SessionVersions, h.rules.ToolInputSchema = opts.StatelessVersions, opts.ProtocolVersions, opts.ToolInputSchema
	h.sessions = streamable.NewSessions(streamable.ServerConfig{
		IdleTimeout: opts.SessionIdleTimeout, MaxSessions: opts.MaxSessions, Enabled: opts.Sessions, Standalone: !opts.NoStandaloneStream,
		OutboxSize: opts.OutboxSize, OutboxBytes: opts.OutboxBytes, StoreSize: opts.EventStoreSize, StoreBytes: opts.EventStoreBytes,
		KeepAlive: opts.KeepAlive, Retry: opts.RetryDelay, WriteTimeout: h.writeTimeout,
		OnEnd: h.endPOSTs, NewConn: h.sessionConn,
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
	routes   streamable.Routes[streamable.Target] // the connections that call the client (a POST's, a session's), by the high bits of their call ids
	rules    mcp.Stateless                        // the stateless revisions' checks
}

// writeTimeout bounds one write of an event stream: Server.WriteTimeout,
// as on sockets.
func (h *streamableHandler) writeTimeout() time.Duration {
	switch d := h.srv.WriteTimeout; {
	case d < 0:
		return 0
	case d == 0:
		return defaultStreamWriteTimeout
	default:
		return d
	}
}

const defaultStreamWriteTimeout = 30 * time.Second

func (h *streamableHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.srv
	ok, cors, why := s.checkOrigin(r)
	if !ok {
		http.Error(w, "jsonrpc: "+why+" (see Server.AllowedOrigins, Server.AllowedHosts)", http.StatusForbidden)
		return
	}
	if cors && httpx.ServeCORS(w, r) {
		return
	}
	if h.rules.Serves(r.Header.Get(versionHeader)) {
		h.serveStateless(w, r)
		return
	}
	if !streamable.CheckVersion(w, r, h.opts.ProtocolVersions) {
		return
	}
	if r.Method != http.MethodPost {
		h.sessions.ServeOther(w, r) // GET and DELETE with sessions, else 405
		return
	}
	h.post(w, r)
}

func (h *streamableHandler) post(w http.ResponseWriter, r *http.Request) {
	s := h.srv
	acceptsSSE := h.opts.SSE != SSENever && streamable.AcceptsEventStream(r.Header.Get("Accept"))
	if !acceptsSSE && !h.opts.Sessions {
		s.ServeHTTP(w, r) // a plain JSON-RPC client: exactly as ServeHTTP
		return
	}
	data, ok := s.readPOST(w, r, nil)
	if !ok {
		return
	}
	// The body is in: a long answer (an event stream) is not cut by the
	// listener's read timeout.
	httpx.SetReadDeadline(w, time.Time{})

	p := h.scanPOST(data)
	var sess *streamable.Session
	session := ""
	if h.opts.Sessions {
		if sess, ok = h.sessions.ForPOST(w, r, p.Initialize); !ok {
			return
		}
		session = sess.ID
	}
	if len(p.Responses) > 0 {
		streamable.Route(&h.routes, data, p.Responses, session, len(p.Responses) < p.Elems)
	}
	pi := &peerInfo{peer: s.httpPeer(r, "http"), srv: s}
	client := streamable.ClientKey(r, pi.peer.RemoteAddr, session, h.opts.Sessions)
	ctx := h.postContext(r.Context(), pi, sess, client)
	switch {
	case !p.needsReply:
		// Notifications and responses only: accepted, nothing to answer.
		if len(p.Responses) < p.Elems {
			h.notifications(ctx, data)
		}
		w.WriteHeader(http.StatusAccepted)
	case !acceptsSSE:
		// A session client that takes JSON only: no connection to call back on.
		s.answerJSON(ctx, w, data, pi)
	default:
		if p.admit {
			if ctx, ok = h.admitPOST(ctx, w, data, &p.m); !ok {
				return
			}
		}
		h.serveStream(ctx, streamPOST{w: w, data: data, scan: p.scan(), sess: sess, client: client, requests: p.Requests, pi: pi, withData: r.Header.Get(versionHeader) >= "2025-11-25"})
	}
}

// postScan is what post learns of a POST's message before it is served.
type postScan struct {
	streamable.Post
	m          wire.Message
	scanned    bool // m holds the message's scan (false: a parse error)
	needsReply bool // something is answered: a request, or an error for the whole message
	admit      bool // Admit is asked about it here (see admitPOST)
}

// scan is the message's scan, nil when it failed.
func (p *postScan) scan() *wire.Message {
	if !p.scanned {
		return nil
	}
	return &p.m
}

// scanPOST scans a POST's message with the inbound path's scan and batch
// rules (dispatch.go).
func (h *streamableHandler) scanPOST(data []byte) *postScan {
	s := h.srv
	p := new(postScan)
	var in inbound
	in.data = data
	if s.scan(&in) != nil {
		p.needsReply = true // a parse error
		return p
	}
	p.m, p.scanned = in.m, true
	p.Post = streamable.ClassifyPOST(data, &p.m, h.opts.InitializeMethod)
	wholeError := s.batchError(&p.m) != nil // answered whole by the POST's connection
	p.needsReply = p.Requests > 0 || wholeError
	p.admit = !wholeError
	return p
}

// postContext is the context of a POST's handlers: the peer, the session
// (for SessionConn) and, under a convention, the router of the client's
// cancels.
func (h *streamableHandler) postContext(ctx context.Context, pi *peerInfo, sess *streamable.Session, client string) context.Context {
	ctx = context.WithValue(ctx, peerKey{}, pi)
	if sess != nil && sess.Standalone != nil {
		ctx = context.WithValue(ctx, sessionKey{}, sess)
	}
	if h.srv.Convention != ConventionNone {
		ctx = context.WithValue(ctx, cancelRouterKey{}, func(id ID) bool { return h.cancel(client, id) })
	}
	return ctx
}

// admitPOST asks Server.Admit about the requests of a POST that its own
// connection serves (its answer may become an event stream), before
// anything is written: a refusal is answered as ServeHTTP answers it, 429
// with Retry-After, on every HTTP flavour. The returned context tells the
// POST's connection that the message was admitted (it does not ask again).
func (h *streamableHandler) admitPOST(ctx context.Context, w http.ResponseWriter, data []byte, m *wire.Message) (context.Context, bool) {
	if h.srv.Admit == nil {
		return ctx, true
	}
	if ok, _, err := h.srv.admit(ctx, data, m.Elems, m.Batch); !ok {
		tooManyRequests(w, err)
		return ctx, false
	}
	return context.WithValue(ctx, admittedKey{}, true), true
}

// cancel routes a cancel from client to the POST serving its request id.
func (h *streamableHandler) cancel(client string, id ID) bool {
	for _, ps := range h.posts(func(ps *postStream) bool { return ps.client == client }) {
		if ps.conn.cancelIncoming(id) {
			if h.srv.Convention == ConventionMCP {
				ps.Cancelled()
			}
			return true
		}
	}
	return false
}

// answerJSON serves a POST's messages with one JSON answer (no event
// stream): a refusal by Admit is 429, as on plain HTTP.
func (s *Server) answerJSON(ctx context.Context, w http.ResponseWriter, data []byte, pi *peerInfo) {
	reply, refused := s.exchangeOnce(ctx, data, 0)
	if refused != nil {
		tooManyRequests(w, refused)
		return
	}
	pi.copyReplyHeader(w.Header())
	s.writeJSON(w, pi.peer.Header, reply) // gzipped as plain HTTP replies are
}

// streamPOST is a POST that serveStream serves.
type streamPOST struct {
	w        http.ResponseWriter
	data     []byte              // its message
	scan     *wire.Message       // data's scan (nil: not scanned yet, or it failed)
	sess     *streamable.Session // its session (nil: none)
	client   string              // see streamable.ClientKey
	requests int                 // the requests in its message
	pi       *peerInfo
	withData bool // the client takes MCP 2025-11-25's priming event
}

// serveStream serves a POST carrying requests on a connection of its own,
// whose output is this response: JSON, or events once the handler sends the
// client anything before its reply. In a session that keeps events, a
// client that goes away once the events have begun does not cancel the
// call: its events are stored for a GET with Last-Event-ID to resume.
func (h *streamableHandler) serveStream(ctx context.Context, p streamPOST) {
	w, sess := p.w, p.sess
	es := h.sessions.PostStream()
	session, base := "", ctx
	if sess != nil {
		session = sess.ID
		sess.OpenStream(es)
		defer sess.CloseStream(es)
		if es.Store != nil {
			base = context.WithoutCancel(ctx) // the call outlives a dropped connection
		}
	}
	out := sse.NewOut(w)
	es.Open(out)
	ps := &postStream{session: session, client: p.client}
	ps.Answer.Init(w, streamable.AnswerConfig{
		Events: es, Reply: p.pi, WithData: p.withData,
		Always: h.opts.SSE == SSEAlways, Requests: p.requests,
	})
	ps.Inbox.Init()
	conn := newConnContext(base, ps, h.srv, nil)
	ps.conn = conn // before it is routed: cancel reads it
	key, ok := h.routes.Add(ps)
	if !ok {
		conn.Close()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "jsonrpc: too many streams", http.StatusServiceUnavailable)
		return
	}
	defer h.routes.Remove(key)
	// Our calls to this client get ids whose high bits name this POST, so
	// that the client's answers, POSTed separately, find their way back.
	conn.seq.Store(key << 32)
	ps.scan.Set(p.data, p.scan)
	ps.Put(p.data)
	es.Hold(ctx, out, ps.Closed())
	if ps.Resumable() {
		// The response went away (the client, a failed write, a resumed
		// stream taking over): serve on, into the store.
		select {
		case <-ps.Done():
		case <-ps.Closed(): // the session ended
		}
	}
	conn.Close() // handlers still running are cancelled
}

// notifications serves the notifications of a POST (no reply can go back).
func (h *streamableHandler) notifications(ctx context.Context, data []byte) {
	h.srv.exchangeOnce(ctx, data, 0)
}

// posts returns the live POSTs that keep keeps.
func (h *streamableHandler) posts(keep func(*postStream) bool) []*postStream {
	var out []*postStream
	for _, t := range h.routes.Filter(func(t streamable.Target) bool { ps, ok := t.(*postStream); return ok && keep(ps) }) {
		out = append(out, t.(*postStream))
	}
	return out
}

// endPOSTs cancels the POSTs of a session that ends.
func (h *streamableHandler) endPOSTs(session string) {
	for _, ps := range h.posts(func(ps *postStream) bool { return ps.session == session }) {
		ps.Close()
	}
}

type sessionKey struct{}

// SessionConn returns the connection of the client whose request ctx
// belongs to, one that outlives the request, so that a handler (or code it
// hands the connection to) can notify or call that client later: on a
// stream transport (TCP, unix, stdio, WebSocket) it is ConnFromContext's;
// over Streamable HTTP with sessions it is the session's, whose messages go
// on the session's standalone GET stream (waiting in the session's outbox
// while no GET stream is open; see StreamableHTTPOptions.OutboxSize and
// ErrStreamBacklog), and whose calls are answered by the client's POSTs. It
// closes when the session ends. It returns nil where no connection
// outlives the request: plain HTTP, stateless Streamable HTTP, or
// NoStandaloneStream.
func SessionConn(ctx context.Context) *Conn {
	if ss, ok := ctx.Value(sessionKey{}).(*streamable.Session); ok {
		c, _ := ss.Conn(ctx).(*Conn)
		return c
	}
	if c := connFromContext(ctx); c != nil && !c.callScoped() {
		return c
	}
	return nil
}

// sessionConn makes the connection of session s (SessionConn), with the
// peer of the request ctx belongs to.
func (h *streamableHandler) sessionConn(ctx context.Context, s *streamable.Session) io.Closer {
	ch := &sessionChannel{sess: s, h: h}
	ch.Inbox.Init()
	key, ok := h.routes.Add(ch)
	if !ok {
		return nil
	}
	ch.key = key
	base := context.Background()
	if pi, ok := ctx.Value(peerKey{}).(*peerInfo); ok {
		base = context.WithValue(base, peerKey{}, &peerInfo{peer: pi.peer, srv: pi.srv})
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

// SessionID is the session's id (streamable.Target).
func (c *sessionChannel) SessionID() string { return c.sess.ID }

// Send queues msg for the standalone stream; it never waits, and fails
// with ErrStreamBacklog when the outbox is full.
func (c *sessionChannel) Send(msg []byte) error { return closedIfEnded(c.sess.Standalone.Enqueue(msg)) }

// Close ends the connection's channel; the session lives on, and the next
// SessionConn makes a new connection.
func (c *sessionChannel) Close() error {
	if c.Shut() {
		c.h.routes.Remove(c.key)
		c.sess.DropConn(c.conn)
	}
	return nil
}

// postStream is the Channel of one POST's connection: it reads the POST's
// body (and the answers to our calls, routed to it) and writes to the
// POST's answer.
type postStream struct {
	streamable.Answer
	session string
	client  string // see streamable.ClientKey
	conn    *Conn
	streamable.Inbox

	scan streamable.FirstScan // the POST's scan of its message, for the connection's first take
}

// SessionID is the POST's session's id, "" for none (streamable.Target).
func (ps *postStream) SessionID() string { return ps.session }

func (ps *postStream) Close() error {
	ps.Shut()
	return nil
}

// Send writes a call or notification of the connection to the client: it
// goes as an event (the answer becomes an event stream).
func (ps *postStream) Send(msg []byte) error { return closedIfEnded(ps.Write(msg, false)) }

// sendReply writes the reply to the POST's message, which ends the answer.
func (ps *postStream) sendReply(msg []byte) error { return closedIfEnded(ps.Write(msg, true)) }

// ReplyHeader adds the headers handlers set to h (streamable.Replier).
func (pi *peerInfo) ReplyHeader(h http.Header) { pi.copyReplyHeader(h) }

// WriteJSON writes msg as a JSON answer, gzipped as plain HTTP replies are
// (streamable.Replier).
func (pi *peerInfo) WriteJSON(w http.ResponseWriter, msg []byte) error {
	return pi.srv.writeJSON(w, pi.peer.Header, msg)
}

// closedIfEnded gives the error of a message sent on an event stream that
// has ended as ErrClosed.
func closedIfEnded(err error) error {
	if err == sse.ErrEnded {
		return ErrClosed
	}
	return err
}
