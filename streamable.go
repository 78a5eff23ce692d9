package jsonrpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Streamable HTTP: the transport of the Model Context Protocol (revision
// 2025-11-25, basic/transports), for any JSON-RPC service. One endpoint
// takes POSTs; a POST carrying requests is answered with one JSON body, or
// with a Server-Sent Events stream that carries the messages the handler
// sends to the client (notifications, and requests whose answers the client
// POSTs back) and then the response. A handler reaches the client with
// ConnFromContext, exactly as on a stream.

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
}

// Defaults of StreamableHTTPOptions.
const (
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultMaxSessions        = 10000
)

const (
	sessionHeader  = "Mcp-Session-Id"
	versionHeader  = "Mcp-Protocol-Version"
	eventStream    = "text/event-stream"
	maxPostStreams = 1 << 31 // keys of live POST streams: the high bits of our call ids
)

// StreamableHTTPHandler returns an http.Handler serving s over Streamable
// HTTP. A POST of notifications or responses only gets 202 Accepted and no
// body; a POST carrying requests gets their reply as application/json or
// as an event stream (see SSEPolicy), each event "event: message" with one
// JSON-RPC message as its data. GET gets 405: there is no stream apart from
// the POSTs' (the specification lets a server decline it). Limits, origin
// checks (403) and body limits (413) are those of ServeHTTP.
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
	return &streamableHandler{srv: s, opts: opts, sessions: map[string]*streamSession{}, posts: map[uint64]*postStream{}}
}

type streamableHandler struct {
	srv  *Server
	opts StreamableHTTPOptions

	mu       sync.Mutex
	sessions map[string]*streamSession
	posts    map[uint64]*postStream // live POSTs with a connection, by key
	next     uint64
}

type streamSession struct {
	id    string
	timer *time.Timer
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
	if v := r.Header.Get(versionHeader); v != "" && len(h.opts.ProtocolVersions) > 0 && !slices.Contains(h.opts.ProtocolVersions, v) {
		http.Error(w, "jsonrpc: unsupported "+versionHeader+" "+strconv.Quote(v)+"; supported: "+strings.Join(h.opts.ProtocolVersions, ", "), http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodDelete:
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
	default:
		allow := http.MethodPost
		if h.opts.Sessions {
			allow += ", " + http.MethodDelete
		}
		w.Header().Set("Allow", allow)
		http.Error(w, "jsonrpc: method "+r.Method+" not allowed: this endpoint has no standalone event stream; POST JSON-RPC messages", http.StatusMethodNotAllowed)
	}
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

	var sc scanner
	var m parsedMessage
	m.limit = s.maxBatchLen()
	parsed := sc.parseMessage(data, s.maxDepth(), &m) == nil
	requests, initialize := 0, false
	var responses []envelope
	if parsed {
		for i := range m.elems {
			e := &m.elems[i]
			switch {
			case e.kind == kindResponse || e.kind == kindBadResponse:
				responses = append(responses, *e)
			case e.kind != kindRequest || e.id.present():
				requests++ // a call, or an invalid element that gets an error
				initialize = initialize || (!m.batch && e.kind == kindRequest && string(e.methodName(data)) == h.opts.InitializeMethod)
			}
		}
	}
	session := ""
	if h.opts.Sessions {
		session = r.Header.Get(sessionHeader)
		switch {
		case session == "" && initialize:
			id, ok := h.newSession()
			if !ok {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "jsonrpc: too many sessions", http.StatusServiceUnavailable)
				return
			}
			session = id
			w.Header().Set(sessionHeader, id)
		case session == "":
			http.Error(w, "jsonrpc: missing "+sessionHeader+" header (initialize first)", http.StatusBadRequest)
			return
		case !h.touchSession(session):
			http.Error(w, "jsonrpc: unknown or ended session", http.StatusNotFound)
			return
		}
	}
	h.route(data, responses, session)
	pi := &peerInfo{peer: Peer{Transport: "http", RemoteAddr: r.RemoteAddr, TLS: r.TLS, Header: r.Header}, srv: s}
	ctx := context.WithValue(r.Context(), peerKey{}, pi)
	client := clientKey(r, session, h.opts.Sessions)
	if s.Convention != ConventionNone {
		ctx = context.WithValue(ctx, cancelRouterKey{}, func(id ID) bool { return h.cancel(client, id) })
	}
	needsReply := !parsed || requests > 0 || (m.batch && (len(m.elems) == 0 || m.n > s.maxBatchLen()))
	if !needsReply {
		// Notifications and responses only: accepted, nothing to answer.
		if len(responses) < len(m.elems) {
			h.notifications(ctx, data)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if !acceptsSSE {
		// A session client that takes JSON only: no connection to call back on.
		st := httpStatePool.Get().(*httpState)
		defer httpStatePool.Put(st)
		reply, refused := s.processInto(ctx, nil, data, &st.sc, &st.msg, nil, 0, nil)
		if refused != nil {
			tooManyRequests(w, refused)
			return
		}
		pi.copyReplyHeader(w.Header())
		w.Header()["Content-Type"] = jsonContentType
		w.Write(reply)
		return
	}
	h.serveStream(ctx, w, data, session, client, requests, pi)
}

// clientKey names the client of a POST, so that a cancel reaches only the
// requests of the client that sent it: its session, or without sessions
// its IP address and credentials.
func clientKey(r *http.Request, session string, sessions bool) string {
	if sessions {
		return session
	}
	host := r.RemoteAddr
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
// client anything before its reply.
func (h *streamableHandler) serveStream(ctx context.Context, w http.ResponseWriter, data []byte, session, client string, requests int, pi *peerInfo) {
	ps := &postStream{
		w:        w,
		pi:       pi,
		session:  session,
		client:   client,
		requests: requests,
		always:   h.opts.SSE == SSEAlways,
		in:       make(chan []byte, 4),
		closed:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	conn := newConnContext(ctx, ps, h.srv, nil)
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
	ps.in <- data
	select {
	case <-ps.done:
	case <-ps.closed: // the session ended
	case <-ctx.Done(): // the client went away
	}
	conn.Close() // handlers still running are cancelled
}

// route hands the responses in a POST to the streams whose calls they answer.
func (h *streamableHandler) route(data []byte, responses []envelope, session string) {
	seen := map[*postStream]bool{}
	for i := range responses {
		n, ok := parseOurID(responses[i].id.of(data))
		if !ok {
			continue
		}
		h.mu.Lock()
		ps := h.posts[n>>32]
		h.mu.Unlock()
		if ps == nil || ps.session != session || seen[ps] {
			continue
		}
		seen[ps] = true
		ps.deliver(data)
	}
}

// notifications serves the notifications of a POST (no reply can go back).
func (h *streamableHandler) notifications(ctx context.Context, data []byte) {
	var sc scanner
	var m parsedMessage
	h.srv.processInto(ctx, nil, data, &sc, &m, nil, 0, nil)
}

func (h *streamableHandler) addPost(ps *postStream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.posts) >= maxPostStreams-1 {
		return false
	}
	for {
		h.next = (h.next + 1) % maxPostStreams
		if h.next != 0 && h.posts[h.next] == nil {
			break
		}
	}
	ps.key = h.next
	h.posts[ps.key] = ps
	return true
}

func (h *streamableHandler) removePost(ps *postStream) {
	h.mu.Lock()
	delete(h.posts, ps.key)
	h.mu.Unlock()
}

func (h *streamableHandler) newSession() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.sessions) >= h.opts.MaxSessions {
		return "", false
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:]) // visible ASCII, 128 random bits
	ss := &streamSession{id: id}
	ss.timer = time.AfterFunc(h.opts.SessionIdleTimeout, func() { h.endSession(id) })
	h.sessions[id] = ss
	return id, true
}

func (h *streamableHandler) touchSession(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := h.sessions[id]
	if ss == nil {
		return false
	}
	ss.timer.Reset(h.opts.SessionIdleTimeout)
	return true
}

// endSession ends a session; its POSTs still in flight are cancelled.
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
	return true
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
	always   bool
	conn     *Conn

	in     chan []byte
	closed chan struct{}
	close  sync.Once

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
	ps.finished = true
	close(ps.done)
}

// startEvents makes the answer an event stream (ps.mu held).
func (ps *postStream) startEvents() {
	ps.sse = true
	h := ps.w.Header()
	ps.pi.copyReplyHeader(h)
	h.Set("Content-Type", eventStream)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	ps.w.WriteHeader(http.StatusOK)
	http.NewResponseController(ps.w).Flush()
}

func (ps *postStream) Recv() ([]byte, error) {
	select {
	case msg := <-ps.in:
		return msg, nil
	case <-ps.closed:
		return nil, io.EOF
	}
}

// deliver passes a POSTed message with answers to our calls to the connection.
func (ps *postStream) deliver(data []byte) {
	select {
	case ps.in <- data:
	case <-ps.closed:
	}
}

func (ps *postStream) Close() error {
	ps.close.Do(func() { close(ps.closed) })
	return nil
}

// Send writes a message of the connection: a call or notification to the
// client goes as an event (the answer becomes an event stream); the reply
// ends the answer.
func (ps *postStream) Send(msg []byte) error {
	reply := !isOutgoingCall(msg)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.finished {
		return ErrClosed
	}
	h := ps.w.Header()
	if !ps.sse && (!reply || ps.always) {
		ps.startEvents()
	}
	var err error
	if ps.sse {
		_, err = writeEvent(ps.w, msg)
		http.NewResponseController(ps.w).Flush()
	} else {
		ps.pi.copyReplyHeader(h)
		h["Content-Type"] = jsonContentType
		h.Set("Content-Length", strconv.Itoa(len(msg)))
		_, err = ps.w.Write(msg)
	}
	if reply {
		ps.finished = true
		close(ps.done)
	}
	return err
}

// writeEvent writes one SSE event carrying msg (a JSON-RPC message has no
// newline, so it is one data line).
func writeEvent(w io.Writer, msg []byte) (int, error) {
	b := make([]byte, 0, len(msg)+24)
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	return w.Write(b)
}

// isOutgoingCall reports whether a message the connection sends is a
// request or notification to the peer (not a reply to the peer's requests).
func isOutgoingCall(msg []byte) bool {
	var sc scanner
	var m parsedMessage
	m.limit = 1
	if sc.parseMessage(msg, DefaultMaxDepth, &m) != nil || len(m.elems) == 0 {
		return false
	}
	return m.elems[0].kind == kindRequest
}
