package jsonrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// ErrStreamBacklog is the error of a message sent on a Streamable HTTP
// session's connection (SessionConn) while the session's outbox, the
// messages waiting for its standalone GET stream, is full
// (StreamableHTTPOptions.OutboxSize, OutboxBytes): the client has no GET
// stream open, or reads it too slowly. The message is not sent.
var ErrStreamBacklog = sse.ErrBacklog

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
	h := &streamableHandler{srv: s, opts: opts, sessions: map[string]*streamSession{}, posts: map[uint64]*postStream{}, sessionConns: map[uint64]*sessionChannel{}, stop: make(chan struct{})}
	h.rules.Versions, h.rules.SessionVersions, h.rules.ToolInputSchema = opts.StatelessVersions, opts.ProtocolVersions, opts.ToolInputSchema
	// Shutdown ends the open streams (their clients reconnect elsewhere), so
	// that an HTTP server's graceful shutdown does not wait for them.
	s.onShutdown(func(context.Context) error {
		h.stopOnce.Do(func() { close(h.stop) })
		return nil
	})
	return h
}

type streamableHandler struct {
	srv      *Server
	opts     StreamableHTTPOptions
	stop     chan struct{} // closed at the Server's Shutdown: open streams end
	stopOnce sync.Once

	mu           sync.Mutex
	sessions     map[string]*streamSession
	posts        map[uint64]*postStream     // live POSTs with a connection, by key
	sessionConns map[uint64]*sessionChannel // the sessions' connections (SessionConn), by key
	next         uint64

	rules mcp.Stateless // the stateless revisions' checks
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

// streamSession is one session: its standalone stream, its event store,
// the event streams of its POSTs still live, and its connection.
type streamSession struct {
	id         string
	h          *streamableHandler
	timer      *time.Timer
	standalone *sse.Stream // nil with NoStandaloneStream
	store      *sse.Store  // nil without resumption

	mu      sync.Mutex
	streams map[uint32]*sse.Stream // the POSTs' streams still live
	last    uint32                 // the last stream number given
	conn    *Conn                  // SessionConn's, made on first use
	ended   bool
}

func (h *streamableHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.srv
	ok, cors, why := s.checkOrigin(r)
	if !ok {
		http.Error(w, "jsonrpc: "+why+" (see Server.AllowedOrigins, Server.AllowedHosts)", http.StatusForbidden)
		return
	}
	if cors && serveCORS(w, r) {
		return
	}
	if h.rules.Serves(r.Header.Get(versionHeader)) {
		h.serveStateless(w, r)
		return
	}
	if v := r.Header.Get(versionHeader); v != "" && len(h.opts.ProtocolVersions) > 0 && !slices.Contains(h.opts.ProtocolVersions, v) {
		http.Error(w, "jsonrpc: unsupported "+versionHeader+" "+strconv.Quote(v)+"; supported: "+strings.Join(h.opts.ProtocolVersions, ", "), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	case http.MethodGet:
		if !h.opts.Sessions || h.opts.NoStandaloneStream {
			h.notAllowed(w, r)
			return
		}
		h.get(w, r)
	default:
		h.notAllowed(w, r)
	}
}

// delete ends the session a DELETE names.
func (h *streamableHandler) delete(w http.ResponseWriter, r *http.Request) {
	if !h.opts.Sessions {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "jsonrpc: this server keeps no sessions", http.StatusMethodNotAllowed)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		http.Error(w, "jsonrpc: DELETE needs the "+sessionHeader+" header", http.StatusBadRequest)
		return
	}
	if !h.endSession(id) {
		http.Error(w, "jsonrpc: unknown or ended session", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *streamableHandler) notAllowed(w http.ResponseWriter, r *http.Request) {
	allow := http.MethodPost
	if h.opts.Sessions && !h.opts.NoStandaloneStream {
		allow = "GET, " + allow
	}
	if h.opts.Sessions {
		allow += ", " + http.MethodDelete
	}
	w.Header().Set("Allow", allow)
	what := "this endpoint has no standalone event stream; POST JSON-RPC messages"
	if r.Method != http.MethodGet {
		what = "POST JSON-RPC messages"
	}
	http.Error(w, "jsonrpc: method "+r.Method+" not allowed: "+what, http.StatusMethodNotAllowed)
}

// get serves GET: the session's standalone stream, or the resumption of
// one of its streams (Last-Event-ID).
func (h *streamableHandler) get(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Get("Accept")) {
		http.Error(w, "jsonrpc: GET opens an event stream: Accept must list "+eventStream, http.StatusNotAcceptable)
		return
	}
	id := r.Header.Get(sessionHeader)
	if id == "" {
		http.Error(w, "jsonrpc: GET needs the "+sessionHeader+" header (initialize first)", http.StatusBadRequest)
		return
	}
	sess := h.touchSession(id)
	if sess == nil {
		http.Error(w, "jsonrpc: unknown or ended session", http.StatusNotFound)
		return
	}
	defer h.touchSession(id) // the idle time counts from the stream's end
	es, from := sess.standalone, (*uint64)(nil)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		stream, seq, ok := sse.ParseEventID(last)
		if ok && sess.store != nil {
			es = sess.stream(stream)
		}
		if !ok || es == nil {
			http.Error(w, "jsonrpc: Last-Event-ID "+strconv.Quote(last)+" names no stream of this session", http.StatusBadRequest)
			return
		}
		from = &seq
	}
	setReadDeadline(w, time.Time{}) // a long stream is not cut by the listener's read timeout
	out := sse.NewOut(w)
	ended, err := es.Attach(out, nil, from, es != sess.standalone, r.Header.Get(versionHeader) >= "2025-11-25")
	if err == sse.ErrStreamDone {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusGone)
		return
	}
	if !ended {
		es.Hold(r.Context(), out, h.stop)
	}
}

// stream returns the session's stream numbered n: the standalone stream,
// a POST's still live, or one that has ended (what is stored of it), or
// nil when the session never had it.
func (ss *streamSession) stream(n uint32) *sse.Stream {
	if n == 0 {
		return ss.standalone
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if es := ss.streams[n]; es != nil {
		return es
	}
	if n > ss.last {
		return nil
	}
	es := &sse.Stream{Num: n, Store: ss.store, Retry: ss.h.opts.RetryDelay, Timeout: ss.h.writeTimeout()}
	es.End()
	return es
}

// openStream numbers a POST's event stream and keeps it for resumption
// while it lives.
func (ss *streamSession) openStream(es *sse.Stream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.last++
	es.Num, es.Store, es.Retry = ss.last, ss.store, ss.h.opts.RetryDelay
	if ss.streams == nil {
		ss.streams = map[uint32]*sse.Stream{}
	}
	ss.streams[es.Num] = es
}

func (ss *streamSession) closeStream(es *sse.Stream) {
	es.End()
	ss.mu.Lock()
	delete(ss.streams, es.Num)
	ss.mu.Unlock()
}

func (h *streamableHandler) post(w http.ResponseWriter, r *http.Request) {
	s := h.srv
	acceptsSSE := h.opts.SSE != SSENever && acceptsEventStream(r.Header.Get("Accept"))
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
	setReadDeadline(w, time.Time{})

	p := h.scanPOST(data)
	sess, session, ok := h.postSession(w, r, p.initialize)
	if !ok {
		return
	}
	if len(p.responses) > 0 {
		h.route(data, p.responses, session, len(p.responses) < p.elems)
	}
	pi := &peerInfo{peer: s.httpPeer(r, "http"), srv: s}
	client := clientKey(r, pi.peer.RemoteAddr, session, h.opts.Sessions)
	ctx := h.postContext(r.Context(), pi, sess, client)
	switch {
	case !p.needsReply:
		// Notifications and responses only: accepted, nothing to answer.
		if len(p.responses) < p.elems {
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
		h.serveStream(ctx, streamPOST{w: w, data: data, scan: p.scan(), sess: sess, client: client, requests: p.requests, pi: pi, withData: r.Header.Get(versionHeader) >= "2025-11-25"})
	}
}

// postScan is what post learns of a POST's message before it is served.
type postScan struct {
	m          wire.Message
	scanned    bool            // m holds the message's scan (false: a parse error)
	elems      int             // the message's elements
	requests   int             // calls, and invalid elements that get an error
	responses  []wire.Envelope // answers to our calls, routed to the POSTs that made them
	initialize bool            // a single call of the initialize method
	needsReply bool            // something is answered: a request, or an error for the whole message
	admit      bool            // Admit is asked about it here (see admitPOST)
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
	m := &p.m
	p.elems = len(m.Elems)
	for i := range m.Elems {
		e := &m.Elems[i]
		switch {
		case e.Kind == wire.KindResponse || e.Kind == wire.KindBadResponse:
			p.responses = append(p.responses, *e)
		case e.Kind != wire.KindRequest || e.ID.Present():
			p.requests++
			p.initialize = !m.Batch && e.Kind == wire.KindRequest && string(e.MethodName(data)) == h.opts.InitializeMethod
		}
	}
	wholeError := s.batchError(m) != nil // answered whole by the POST's connection
	p.needsReply = p.requests > 0 || wholeError
	p.admit = !wholeError
	return p
}

// postSession finds (or, for an initialize without one, starts) the
// session of a POST when the handler has sessions. When it reports false
// it has written the error response.
func (h *streamableHandler) postSession(w http.ResponseWriter, r *http.Request, initialize bool) (*streamSession, string, bool) {
	if !h.opts.Sessions {
		return nil, "", true
	}
	session := r.Header.Get(sessionHeader)
	switch {
	case session == "" && initialize:
		sess := h.newSession()
		if sess == nil {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "jsonrpc: too many sessions", http.StatusServiceUnavailable)
			return nil, "", false
		}
		w.Header().Set(sessionHeader, sess.id)
		return sess, sess.id, true
	case session == "":
		http.Error(w, "jsonrpc: missing "+sessionHeader+" header (initialize first)", http.StatusBadRequest)
		return nil, "", false
	}
	sess := h.touchSession(session)
	if sess == nil {
		http.Error(w, "jsonrpc: unknown or ended session", http.StatusNotFound)
		return nil, "", false
	}
	return sess, session, true
}

// postContext is the context of a POST's handlers: the peer, the session
// (for SessionConn) and, under a convention, the router of the client's
// cancels.
func (h *streamableHandler) postContext(ctx context.Context, pi *peerInfo, sess *streamSession, client string) context.Context {
	ctx = context.WithValue(ctx, peerKey{}, pi)
	if sess != nil && sess.standalone != nil {
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

// clientKey names the client of a POST, so that a cancel reaches only the
// requests of the client that sent it: its session, or without sessions
// its IP address (remote: the forwarded client's behind a trusted proxy)
// and credentials.
func clientKey(r *http.Request, remote, session string, sessions bool) string {
	if sessions {
		return session
	}
	host := remote
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host + "\x00" + r.Header.Get("Authorization")
}

// cancel routes a cancel from client to the POST serving its request id.
func (h *streamableHandler) cancel(client string, id ID) bool {
	h.mu.Lock()
	var streams []*postStream
	for _, ps := range h.posts {
		if ps.client == client {
			streams = append(streams, ps)
		}
	}
	h.mu.Unlock()
	for _, ps := range streams {
		if ps.conn.cancelIncoming(id) {
			if h.srv.Convention == ConventionMCP {
				ps.cancelled()
			}
			return true
		}
	}
	return false
}

// serveStream serves a POST carrying requests on a connection of its own,
// whose output is this response: JSON, or events once the handler sends the
// client anything before its reply. In a session that keeps events, a
// client that goes away once the events have begun does not cancel the
// call: its events are stored for a GET with Last-Event-ID to resume.
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
	data     []byte         // its message
	scan     *wire.Message  // data's scan (nil: not scanned yet, or it failed)
	sess     *streamSession // its session (nil: none)
	client   string         // see clientKey
	requests int            // the requests in its message
	pi       *peerInfo
	withData bool // the client takes MCP 2025-11-25's priming event
}

func (h *streamableHandler) serveStream(ctx context.Context, p streamPOST) {
	w, sess := p.w, p.sess
	es := &sse.Stream{Timeout: h.writeTimeout(), KeepAlive: h.opts.KeepAlive}
	session, base := "", ctx
	if sess != nil {
		session = sess.id
		sess.openStream(es)
		defer sess.closeStream(es)
		if es.Store != nil {
			base = context.WithoutCancel(ctx) // the call outlives a dropped connection
		}
	}
	out := sse.NewOut(w)
	es.Open(out)
	ps := &postStream{
		w:        w,
		pi:       p.pi,
		events:   es,
		withData: p.withData,
		session:  session,
		client:   p.client,
		requests: p.requests,
		always:   h.opts.SSE == SSEAlways,
		done:     make(chan struct{}),
	}
	ps.inbox.init()
	conn := newConnContext(base, ps, h.srv, nil)
	ps.conn = conn // before addPost: cancel reads it
	if !h.addPost(ps) {
		conn.Close()
		w.Header().Set("Retry-After", "1")
		http.Error(w, "jsonrpc: too many streams", http.StatusServiceUnavailable)
		return
	}
	defer h.removePost(ps)
	// Our calls to this client get ids whose high bits name this POST, so
	// that the client's answers, POSTed separately, find their way back.
	conn.seq.Store(ps.key << 32)
	ps.scanned, ps.scannedData = p.scan, p.data
	ps.in <- p.data
	es.Hold(ctx, out, ps.closed)
	if ps.resumable() {
		// The response went away (the client, a failed write, a resumed
		// stream taking over): serve on, into the store.
		select {
		case <-ps.done:
		case <-ps.closed: // the session ended
		}
	}
	conn.Close() // handlers still running are cancelled
}

// route hands the responses in a POST to the connections whose calls they
// answer. A batch that also holds requests or notifications is served by
// its own POST's connection, and only there: each of its responses is
// routed as a message of its own.
func (h *streamableHandler) route(data []byte, responses []wire.Envelope, session string, mixed bool) {
	seen := map[any]bool{}
	for i := range responses {
		n, ok := parseOurID(responses[i].ID.Of(data))
		if !ok {
			continue
		}
		h.mu.Lock()
		ps, sc := h.posts[n>>32], h.sessionConns[n>>32]
		h.mu.Unlock()
		var deliver func([]byte)
		var target any
		switch {
		case ps != nil && ps.session == session:
			deliver, target = ps.deliver, ps
		case sc != nil && sc.sess.id == session:
			deliver, target = sc.deliver, sc
		default:
			continue
		}
		if !mixed {
			if !seen[target] {
				seen[target] = true
				deliver(data)
			}
			continue
		}
		if msg := singleResponse(data, &responses[i]); msg != nil {
			deliver(msg)
		}
	}
}

// singleResponse returns a response of a POSTed batch as a message of its
// own (nil for a malformed one).
func singleResponse(data []byte, e *wire.Envelope) []byte {
	if e.Kind != wire.KindResponse {
		return nil
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), e.ID.Of(data)...)
	if e.Result.Present() {
		b = append(append(b, `,"result":`...), e.Result.Of(data)...)
	} else {
		b = append(append(b, `,"error":`...), e.ErrObj.Of(data)...)
	}
	return append(b, '}')
}

// notifications serves the notifications of a POST (no reply can go back).
func (h *streamableHandler) notifications(ctx context.Context, data []byte) {
	h.srv.exchangeOnce(ctx, data, 0)
}

func (h *streamableHandler) addPost(ps *postStream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	key, ok := h.newKeyLocked()
	if !ok {
		return false
	}
	ps.key = key
	h.posts[key] = ps
	return true
}

// newKeyLocked returns a free key for the high bits of our call ids (h.mu held).
func (h *streamableHandler) newKeyLocked() (uint64, bool) {
	if len(h.posts)+len(h.sessionConns) >= maxPostStreams-1 {
		return 0, false
	}
	for {
		h.next = (h.next + 1) % maxPostStreams
		if h.next != 0 && h.posts[h.next] == nil && h.sessionConns[h.next] == nil {
			return h.next, true
		}
	}
}

func (h *streamableHandler) removePost(ps *postStream) {
	h.mu.Lock()
	delete(h.posts, ps.key)
	h.mu.Unlock()
}

func (h *streamableHandler) newSession() *streamSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sessions) >= h.opts.MaxSessions {
		return nil
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:]) // visible ASCII, 128 random bits
	ss := &streamSession{id: id, h: h}
	if h.opts.EventStoreSize > 0 {
		ss.store = sse.NewStore(h.opts.EventStoreSize, h.opts.EventStoreBytes)
	}
	if !h.opts.NoStandaloneStream {
		ss.standalone = (&sse.Stream{Store: ss.store, Retry: h.opts.RetryDelay, Timeout: h.writeTimeout(), KeepAlive: h.opts.KeepAlive}).
			WithOutbox(h.opts.OutboxSize, h.opts.OutboxBytes)
	}
	ss.timer = time.AfterFunc(h.opts.SessionIdleTimeout, func() { h.expire(ss) })
	h.sessions[id] = ss
	return ss
}

// expire ends a session idle for SessionIdleTimeout, unless its client
// listens on its standalone stream.
func (h *streamableHandler) expire(ss *streamSession) {
	if ss.standalone != nil && ss.standalone.Attached() {
		ss.timer.Reset(h.opts.SessionIdleTimeout)
		return
	}
	h.endSession(ss.id)
}

// touchSession returns the live session id and restarts its idle time.
func (h *streamableHandler) touchSession(id string) *streamSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := h.sessions[id]
	if ss != nil {
		ss.timer.Reset(h.opts.SessionIdleTimeout)
	}
	return ss
}

// endSession ends a session: its POSTs still in flight are cancelled, its
// streams end and its connection closes.
func (h *streamableHandler) endSession(id string) bool {
	h.mu.Lock()
	ss := h.sessions[id]
	delete(h.sessions, id)
	var streams []*postStream
	for _, ps := range h.posts {
		if ps.session == id {
			streams = append(streams, ps)
		}
	}
	h.mu.Unlock()
	if ss == nil {
		return false
	}
	ss.timer.Stop()
	for _, ps := range streams {
		ps.Close()
	}
	ss.mu.Lock()
	ss.ended = true
	conn := ss.conn
	ss.conn = nil
	ss.mu.Unlock()
	if ss.standalone != nil {
		ss.standalone.End()
	}
	if conn != nil {
		conn.Close()
	}
	return true
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
	if ss, ok := ctx.Value(sessionKey{}).(*streamSession); ok {
		return ss.connection(ctx)
	}
	if c := connFromContext(ctx); c != nil && !c.callScoped() {
		return c
	}
	return nil
}

// connection returns the session's connection, made on first use with the
// peer of the request ctx belongs to.
func (ss *streamSession) connection(ctx context.Context) *Conn {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return nil
	}
	if ss.conn != nil {
		return ss.conn
	}
	h := ss.h
	ch := &sessionChannel{sess: ss}
	ch.inbox.init()
	h.mu.Lock()
	key, ok := h.newKeyLocked()
	if ok {
		ch.key = key
		h.sessionConns[key] = ch
	}
	h.mu.Unlock()
	if !ok {
		return nil
	}
	base := context.Background()
	if pi, ok := ctx.Value(peerKey{}).(*peerInfo); ok {
		base = context.WithValue(base, peerKey{}, &peerInfo{peer: pi.peer, srv: pi.srv})
	}
	c := newConnContext(base, ch, h.srv, nil)
	c.seq.Store(key << 32) // the client's answers find their way back (route)
	ch.conn = c
	ss.conn = c
	return c
}

// sessionChannel is the Channel of a session's connection: what it sends
// goes to the session's outbox, for the standalone stream; it receives the
// client's answers to its calls, POSTed and routed to it by id.
type sessionChannel struct {
	sess *streamSession
	conn *Conn
	key  uint64
	inbox
}

// Send queues msg for the standalone stream; it never waits, and fails
// with ErrStreamBacklog when the outbox is full.
func (c *sessionChannel) Send(msg []byte) error { return closedIfEnded(c.sess.standalone.Enqueue(msg)) }

// Close ends the connection's channel; the session lives on, and the next
// SessionConn makes a new connection.
func (c *sessionChannel) Close() error {
	if c.shut() {
		h := c.sess.h
		h.mu.Lock()
		delete(h.sessionConns, c.key)
		h.mu.Unlock()
		c.sess.mu.Lock()
		if c.sess.conn == c.conn {
			c.sess.conn = nil
		}
		c.sess.mu.Unlock()
	}
	return nil
}

// inbox is the receiving side of the Channels of Streamable HTTP's
// connections (a POST's, a session's): the messages POSTed to them, until
// the channel closes.
type inbox struct {
	in     chan []byte
	closed chan struct{}
	once   sync.Once
}

func (b *inbox) init() { b.in, b.closed = make(chan []byte, 4), make(chan struct{}) }

func (b *inbox) Recv() ([]byte, error) {
	select {
	case msg := <-b.in:
		return msg, nil
	case <-b.closed:
		return nil, io.EOF
	}
}

// deliver passes a POSTed message (with answers to our calls) to the connection.
func (b *inbox) deliver(data []byte) {
	select {
	case b.in <- data:
	case <-b.closed:
	}
}

// shut closes the inbox; it reports whether this call did.
func (b *inbox) shut() (first bool) {
	b.once.Do(func() { close(b.closed); first = true })
	return first
}

func acceptsEventStream(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), eventStream) {
			return true
		}
	}
	return false
}

// postStream is the Channel of one POST's connection: it reads the POST's
// body (and the answers to our calls, routed to it) and writes to the
// POST's response.
type postStream struct {
	key      uint64
	session  string
	client   string // see clientKey
	requests int    // the requests of the POST (see cancelled)
	w        http.ResponseWriter
	pi       *peerInfo
	events   *sse.Stream // the answer's event stream, once it is one
	withData bool        // the client takes MCP 2025-11-25's priming event
	always   bool
	conn     *Conn
	inbox

	// The POST's message and its scan, for the connection's first take
	// (see takeScan): set before the message is delivered, then the
	// connection's reading goroutine's alone.
	scanned     *wire.Message
	scannedData []byte

	mu       sync.Mutex
	sse      bool          // the response is an event stream
	finished bool          // the reply has been written
	done     chan struct{} // closed then
	dropped  int           // requests cancelled by the client (MCP: no answer)
}

// cancelled counts a request of the POST that the client cancelled under
// MCP's convention, where it gets no answer: once every request of the POST
// is cancelled, the answer ends without a response (an event stream with
// no event when nothing was sent yet).
func (ps *postStream) cancelled() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.dropped++
	if ps.finished || ps.dropped < ps.requests {
		return
	}
	if !ps.sse {
		ps.startEvents()
	}
	ps.finish()
}

// finish marks the reply written and ends the answer (ps.mu held).
func (ps *postStream) finish() {
	ps.finished = true
	close(ps.done)
	ps.events.End()
}

// resumable reports whether the call goes on once its response is gone:
// its answer is an event stream whose events are stored.
func (ps *postStream) resumable() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.sse && !ps.finished && ps.events.Store != nil
}

// startEvents makes the answer an event stream (ps.mu held).
func (ps *postStream) startEvents() {
	ps.sse = true
	ps.events.Begin(ps.pi.copyReplyHeader, ps.withData)
}

// takeScan gives the connection the POST's scan of data, once, so that
// its message is not scanned twice: it copies it to m and reports true
// when data is the POST's message and it was scanned.
func (ps *postStream) takeScan(data []byte, m *wire.Message) bool {
	s := ps.scanned
	if s == nil || len(data) == 0 || len(data) != len(ps.scannedData) || &data[0] != &ps.scannedData[0] {
		return false
	}
	ps.scanned, ps.scannedData = nil, nil
	*m = *s
	return true
}

func (ps *postStream) Close() error {
	ps.shut()
	return nil
}

// Send writes a call or notification of the connection to the client: it
// goes as an event (the answer becomes an event stream).
func (ps *postStream) Send(msg []byte) error { return ps.write(msg, false) }

// sendReply writes the reply to the POST's message, which ends the answer.
func (ps *postStream) sendReply(msg []byte) error { return ps.write(msg, true) }

func (ps *postStream) write(msg []byte, reply bool) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.finished {
		return ErrClosed
	}
	if !ps.sse && (!reply || ps.always) {
		ps.startEvents()
	}
	var err error
	if ps.sse {
		err = closedIfEnded(ps.events.Send(msg))
	} else {
		h := ps.w.Header()
		ps.pi.copyReplyHeader(h)
		h.Set("Content-Length", strconv.Itoa(len(msg)))         // gzipped: writeJSON sets the new length
		err = ps.pi.srv.writeJSON(ps.w, ps.pi.peer.Header, msg) // gzipped as plain HTTP replies are
	}
	if reply {
		ps.finish()
	}
	return err
}

// closedIfEnded gives the error of a message sent on an event stream that
// has ended as ErrClosed.
func closedIfEnded(err error) error {
	if err == sse.ErrEnded {
		return ErrClosed
	}
	return err
}
