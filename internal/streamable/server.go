package streamable

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
	"github.com/seedhq/jsonrpc/state"
)

// ServerConfig is the session and stream settings of a server (the root's
// StreamableHTTPOptions, defaults applied).
type ServerConfig struct {
	IdleTimeout             time.Duration // a session unused for that long ends
	MaxSessions             int           // the live sessions; past it New refuses
	Enabled                 bool          // sessions are kept (off: stateless; GET and DELETE get 405)
	Standalone              bool          // sessions have a standalone GET stream
	OutboxSize, OutboxBytes int           // the bounds of a standalone stream's outbox
	StoreSize, StoreBytes   int           // the bounds of a session's event store (StoreSize <= 0: none)
	KeepAlive, Retry        time.Duration // of the event streams (negative: none)
	// WriteTimeout returns the bound of one write of an event stream (0: none).
	WriteTimeout func() time.Duration
	// OnEnd is called when a session ends, before its streams and its
	// connection end (the root ends the session's POSTs there).
	OnEnd func(id string)
	// NewConn makes the connection of session s (see Session.Conn) for the
	// request whose context is ctx; nil when it cannot.
	NewConn func(ctx context.Context, s *Session) io.Closer
	// Shared keeps the events of every session's streams for all the
	// server's instances (nil: each session keeps its own; see shared.go).
	Shared state.EventStore
	// InitializeMethod is the request that starts a session.
	InitializeMethod string
	// Store, when set, shares the sessions with the other instances that
	// use it (see store.go); nil: this table is all there is.
	Store state.SessionStore
	// Staleness is how long a session checked with the Store is served
	// without asking it again (0: every request asks).
	Staleness time.Duration
}

// Sessions is the session table of a server: each session's standalone
// stream, its event store, the event streams of its POSTs still live, and
// its connection; a session unused for IdleTimeout ends, unless its client
// listens on its standalone stream. Its methods may be called
// concurrently.
type Sessions struct {
	cfg      ServerConfig
	stop     chan struct{} // closed at Shutdown: open streams end
	every    time.Duration // with a Store, the period of the sessions' timers
	stopOnce sync.Once

	mu sync.Mutex
	m  map[string]*Session
}

// NewSessions returns an empty table.
func NewSessions(cfg ServerConfig) *Sessions {
	t := &Sessions{cfg: cfg, stop: make(chan struct{}), m: map[string]*Session{}}
	if cfg.Store != nil {
		t.every = max(min(cfg.IdleTimeout/10, 10*time.Second), time.Millisecond)
	}
	return t
}

// Shutdown ends the open standalone and resumed streams (their clients
// reconnect elsewhere), so that an HTTP server's graceful shutdown does not
// wait for them.
func (t *Sessions) Shutdown() { t.stopOnce.Do(func() { close(t.stop) }) }

// Session is one session of a server.
type Session struct {
	ID         string
	Standalone *sse.Stream // nil without a standalone stream
	Store      *sse.Store  // nil without resumption

	t     *Sessions
	timer *time.Timer

	mu      sync.Mutex
	streams map[uint64]*sse.Stream // the POSTs' streams still live
	last    uint64                 // the last stream number given
	conn    io.Closer              // the session's connection, made on first use (Conn)
	ended   bool
	// What its client declared in initialize (capabilities nil: not
	// known), and, with a Store only, the revision the reply negotiated and
	// its Values as the store last told this instance (never modified:
	// replaced).
	client state.Session

	used atomic.Int64 // when (UnixNano) its last request here was served: expire

	// With a Store (store.go): created here, not yet in the store (Commit);
	// the times (UnixNano) of its last check with the store, and of its
	// expiry as the store said then.
	pending            atomic.Bool
	checkedAt, expires atomic.Int64
}

// New starts a session; nil when MaxSessions are live.
func (t *Sessions) New() *Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= t.cfg.MaxSessions {
		return nil
	}
	var b [16]byte
	rand.Read(b[:])
	return t.addLocked(hex.EncodeToString(b[:])) // visible ASCII, 128 random bits
}

// addLocked starts the session id (t.mu held).
func (t *Sessions) addLocked(id string) *Session {
	s := &Session{ID: id, t: t}
	if t.cfg.StoreSize > 0 && t.cfg.Shared == nil {
		s.Store = sse.NewStore(t.cfg.StoreSize, t.cfg.StoreBytes)
	}
	if t.cfg.Standalone {
		s.Standalone = (&sse.Stream{Store: s.Store, Shared: t.shared(id, 0), Retry: t.cfg.Retry, Timeout: t.cfg.WriteTimeout(), KeepAlive: t.cfg.KeepAlive}).
			WithOutbox(t.cfg.OutboxSize, t.cfg.OutboxBytes)
	}
	s.used.Store(time.Now().UnixNano())
	s.timer = time.AfterFunc(cmp.Or(t.every, t.cfg.IdleTimeout), func() { t.expire(s) })
	t.m[id] = s
	return s
}

// expire ends here a session unused here for IdleTimeout, unless its
// client listens on its standalone stream: then, with a Store, the store
// is asked (its timer then fires every tenth of IdleTimeout: every).
func (t *Sessions) expire(s *Session) {
	t.mu.Lock() // after addLocked: s.timer is set
	held := t.m[s.ID] == s
	t.mu.Unlock()
	if !held {
		return
	}
	due := t.cfg.IdleTimeout - time.Since(time.Unix(0, s.used.Load()))
	switch {
	case s.Standalone != nil && s.Standalone.Attached():
		due = t.cfg.IdleTimeout
		if t.cfg.Store == nil {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
		st, err := t.check(ctx, s.ID)
		cancel()
		if err == nil {
			s.seen(st)
		} else if errors.Is(err, state.ErrNoSession) && !s.pending.Load() {
			return // check ended it
		}
	case due <= 0:
		t.end(s, true)
		return
	}
	s.timer.Reset(cmp.Or(t.every, due))
}

// Touch returns the live session id (nil for none) and restarts its idle
// time.
func (t *Sessions) Touch(id string) *Session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[id]
	if s != nil {
		s.used.Store(time.Now().UnixNano())
	}
	return s
}

// End ends a session: OnEnd, then its streams end and its connection
// closes. It reports false when id names no live session.
func (t *Sessions) End(id string) bool {
	t.mu.Lock()
	s := t.m[id]
	t.mu.Unlock()
	return s != nil && t.end(s, true)
}

// end ends s, as End does, and without OnEnd when notify is false; false
// when s has ended already.
func (t *Sessions) end(s *Session, notify bool) bool {
	t.mu.Lock()
	held := t.m[s.ID] == s
	if held {
		delete(t.m, s.ID)
	}
	t.mu.Unlock()
	if !held {
		return false
	}
	s.timer.Stop()
	if notify && t.cfg.OnEnd != nil {
		t.cfg.OnEnd(s.ID)
	}
	s.mu.Lock()
	s.ended = true
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if s.Standalone != nil {
		s.Standalone.End()
	}
	if conn != nil {
		conn.Close()
	}
	return true
}

// Conn returns the session's connection, made with NewConn on first use
// (for the request whose context is ctx); nil once the session ended, or
// when NewConn returns nil.
func (s *Session) Conn(ctx context.Context) io.Closer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return nil
	}
	if s.conn == nil {
		s.conn = s.t.cfg.NewConn(ctx, s)
	}
	return s.conn
}

// DropConn forgets c, the session's connection that closed: the next Conn
// makes another.
func (s *Session) DropConn(c io.Closer) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
}

// Stream returns the session's stream numbered n: the standalone stream,
// a POST's still live, or one that has ended (what is stored of it), or
// nil when the session never had it.
func (s *Session) Stream(n uint64) *sse.Stream {
	if n == 0 {
		return s.Standalone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if es := s.streams[n]; es != nil {
		return es
	}
	if n > s.last || s.t.cfg.Shared != nil {
		return nil // with Shared, the caller follows it (Follow)
	}
	es := &sse.Stream{Num: n, Store: s.Store, Retry: s.t.cfg.Retry, Timeout: s.t.cfg.WriteTimeout()}
	es.End()
	return es
}

// PostStream returns the event stream of the answer to a POST of session
// s (nil: none); in a session it is numbered and kept for resumption while
// it lives.
func (t *Sessions) PostStream(s *Session) *sse.Stream {
	es := &sse.Stream{Timeout: t.cfg.WriteTimeout(), KeepAlive: t.cfg.KeepAlive}
	if s == nil {
		return es
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	es.Num, es.Store, es.Retry = s.last, s.Store, t.cfg.Retry
	if s.streams == nil {
		s.streams = map[uint64]*sse.Stream{}
	}
	s.share(es)
	s.streams[es.Num] = es
	return es
}

// KeepsEvents reports whether the POSTs of session s (nil: none) keep their
// events for the client to resume, in its store or a shared one.
func (s *Session) KeepsEvents() bool { return s != nil && (s.Store != nil || s.t.cfg.Shared != nil) }

// CloseStream ends a POST's event stream (s nil: a POST of no session).
func (s *Session) CloseStream(es *sse.Stream) {
	es.End()
	if s == nil {
		return
	}
	s.mu.Lock()
	delete(s.streams, es.Num)
	s.mu.Unlock()
}

// ForPOST finds (or, for an initialize without one, starts) the session of
// a POST whose message m (nil: it did not parse) is in data. When it
// returns nil it has written the error response: 400 without the session
// header, 404 for a session unknown or ended, 503 when no session can
// start or the Store fails.
func (t *Sessions) ForPOST(w http.ResponseWriter, r *http.Request, data []byte, m *wire.Message) *Session {
	id := r.Header.Get(mcp.SessionHeader)
	initialize := id == "" && m != nil && !m.Batch && m.Elems[0].Kind == wire.KindRequest && m.Elems[0].ID.Present() &&
		string(m.Elems[0].MethodName(data)) == t.cfg.InitializeMethod
	switch {
	case initialize:
		s := t.New()
		if s == nil {
			refuse(w, errTooMany)
			return nil
		}
		if t.cfg.Store != nil {
			s.declare(data, &m.Elems[0])
		}
		w.Header().Set(mcp.SessionHeader, s.ID)
		return s
	case id == "":
		http.Error(w, "jsonrpc: missing "+mcp.SessionHeader+" header (initialize first)", http.StatusBadRequest)
		return nil
	}
	return t.find(w, r, id)
}

// find returns the live session id for a request, or nil when it has
// written its refusal (404, or 503 when the Store fails).
func (t *Sessions) find(w http.ResponseWriter, r *http.Request, id string) *Session {
	if t.cfg.Store != nil {
		s, err := t.lookup(r.Context(), id)
		if err != nil {
			refuse(w, err)
		}
		return s
	}
	s := t.Touch(id)
	if s == nil {
		refuse(w, state.ErrNoSession)
	}
	return s
}

// ServeOther answers a request that is not a POST: with sessions, DELETE
// ends one (ServeDELETE) and GET opens its standalone stream (ServeGET)
// when sessions have one; anything else gets 405 with the Allow header of
// what the endpoint serves.
func (t *Sessions) ServeOther(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodDelete && !t.cfg.Enabled:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "jsonrpc: this server keeps no sessions", http.StatusMethodNotAllowed)
	case r.Method == http.MethodDelete:
		t.ServeDELETE(w, r)
	case r.Method == http.MethodGet && t.cfg.Enabled && t.cfg.Standalone:
		t.ServeGET(w, r)
	default:
		allow, what := http.MethodPost, "POST JSON-RPC messages"
		if t.cfg.Enabled && t.cfg.Standalone {
			allow = "GET, " + allow
		}
		if t.cfg.Enabled {
			allow += ", " + http.MethodDelete
		}
		if r.Method == http.MethodGet {
			what = "this endpoint has no standalone event stream; " + what
		}
		w.Header().Set("Allow", allow)
		http.Error(w, "jsonrpc: method "+r.Method+" not allowed: "+what, http.StatusMethodNotAllowed)
	}
}

// CheckVersion answers 400 to a request whose MCP-Protocol-Version header
// names a revision not among versions, and reports whether the request
// may be served: any revision may when versions is empty, and a request
// without the header may (MCP: assume the oldest). A repeated header names
// no one revision: 400 with HeaderMismatch (-32020), as 2026-07-28 asks.
func CheckVersion(w http.ResponseWriter, r *http.Request, versions []string) bool {
	if len(r.Header.Values(mcp.VersionHeader)) > 1 {
		w.Header()["Content-Type"] = jsonContentType
		w.WriteHeader(http.StatusBadRequest)
		w.Write(repeatedVersion)
		return false
	}
	v := r.Header.Get(mcp.VersionHeader)
	if v == "" || len(versions) == 0 || slices.Contains(versions, v) {
		return true
	}
	http.Error(w, "jsonrpc: unsupported "+mcp.VersionHeader+" "+strconv.Quote(v)+"; supported: "+strings.Join(versions, ", "), http.StatusBadRequest)
	return false
}

// repeatedVersion answers a request whose MCP-Protocol-Version is repeated.
var repeatedVersion = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"Header mismatch: ` + mcp.VersionHeader + ` header repeated"}}`)

// ServeDELETE ends the session a DELETE names.
func (t *Sessions) ServeDELETE(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(mcp.SessionHeader)
	if id == "" {
		http.Error(w, "jsonrpc: DELETE needs the "+mcp.SessionHeader+" header", http.StatusBadRequest)
		return
	}
	if t.cfg.Store != nil {
		if err := t.delete(r.Context(), id); err != nil {
			refuse(w, err)
			return
		}
	} else if !t.End(id) {
		refuse(w, state.ErrNoSession)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ServeGET serves GET: the session's standalone stream, or the resumption
// of one of its streams (Last-Event-ID).
func (t *Sessions) ServeGET(w http.ResponseWriter, r *http.Request) {
	if !AcceptsEventStream(r.Header.Get("Accept")) {
		http.Error(w, "jsonrpc: GET opens an event stream: Accept must list "+sse.ContentType, http.StatusNotAcceptable)
		return
	}
	id := r.Header.Get(mcp.SessionHeader)
	if id == "" {
		http.Error(w, "jsonrpc: GET needs the "+mcp.SessionHeader+" header (initialize first)", http.StatusBadRequest)
		return
	}
	s := t.find(w, r, id)
	if s == nil {
		return
	}
	defer t.Touch(id) // the idle time counts from the stream's end
	es, from := s.Standalone, (*uint64)(nil)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		stream, seq, ok := sse.ParseEventID(last)
		if ok = ok && s.KeepsEvents(); ok { // no stored events: no id is ours
			es = s.Stream(stream)
		}
		if ok && es == nil && t.cfg.Shared != nil {
			t.follow(w, r, s, stream, seq)
			return
		}
		if !ok || es == nil {
			http.Error(w, "jsonrpc: Last-Event-ID "+strconv.Quote(last)+" names no stream of this session", http.StatusBadRequest)
			return
		}
		from = &seq
	}
	// A long stream is not cut by the listener's read timeout.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	out := sse.NewOut(w)
	ended, err := es.Attach(out, from, r.Header.Get(mcp.VersionHeader) >= mcp.Version2025)
	if err != nil {
		attachFailed(w, err)
		return
	}
	if !ended {
		es.Hold(r.Context(), out, t.stop)
	}
}

// AcceptsEventStream reports whether an Accept header lists text/event-stream.
func AcceptsEventStream(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		if isEventStream(part) {
			return true
		}
	}
	return false
}

// isEventStream reports whether a media type, parameters and all, is
// text/event-stream (mime.ParseMediaType, which allocates, is not needed).
func isEventStream(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.EqualFold(strings.TrimSpace(mt), sse.ContentType)
}

// ClientKey names the client of a POST, so that a cancel reaches only the
// requests of the client that sent it: its session, or without one its IP
// address (remote: the forwarded client's behind a trusted proxy) and
// credentials.
func ClientKey(r *http.Request, remote, session string) string {
	if session != "" {
		return session
	}
	host := remote
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		return host + "\x00" + auth
	}
	return host
}
