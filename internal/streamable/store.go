package streamable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
	"github.com/seedhq/jsonrpc/state"
)

// Sessions shared through a state.SessionStore (ServerConfig.Store).
//
// Initialize starts a session here and creates it in the store before its
// reply is written (Commit), with the negotiated revision and the client's
// capabilities and info; a store that fails turns the reply into error
// CodeStoreUnavailable and the session ends. Every request naming a
// session asks the store (one Get): one the store no longer holds is
// refused (404) and ends here; one this instance does not hold is adopted.
// When more than a tenth of IdleTimeout has passed since the store last
// moved its expiry, a Touch moves it to now + IdleTimeout: a session ends
// 0.9 to 1 IdleTimeout after its last request, at one write per tenth.
// DELETE deletes it in the store, then here; other instances end it at
// their next request or check. With Staleness, a session checked less than
// Staleness ago and not due for a Touch is served without asking.
//
// Here, a session unused for IdleTimeout ends, unless its client listens on
// its standalone stream: then it is checked every tenth of IdleTimeout (at
// most 10 s). Its Values travel with it: each check reads
// them, Set writes through the store, then here. A store that fails or
// takes StoreTimeout refuses the request with 503 and a JSON-RPC error.

// StoreTimeout bounds each call to a session Store.
const StoreTimeout = 2 * time.Second

// CodeStoreUnavailable is the JSON-RPC error of a request that a shared
// store (package state) failed.
const CodeStoreUnavailable = -32030

// errTooMany refuses to start or adopt a session past MaxSessions.
var errTooMany = errors.New("jsonrpc: too many sessions")

// Shared reports whether s is kept in a Store (its Values then work).
func (s *Session) Shared() bool { return s != nil && s.t.cfg.Store != nil }

// Value returns the value of key in the Values of s as the Store told
// this instance at its last check (this request's, unless checked less
// than Staleness ago; every tenth of IdleTimeout while its standalone stream is
// held here), or as this instance set it since; nil when it has none.
func (s *Session) Value(key string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client.Values[key]
}

// Set sets key to value in the Values of s in the Store (nil: removes
// it; state.SessionStore.Set), then here.
func (s *Session) Set(ctx context.Context, key string, value json.RawMessage) error {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	if err := s.t.cfg.Store.Set(ctx, s.ID, key, value); err != nil {
		return fmt.Errorf("jsonrpc: the session store failed: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client.Values, _ = state.SetValue(maps.Clone(s.client.Values), key, value)
	return nil
}

// SessionID is the id of s, "" for a nil s.
func (s *Session) SessionID() string {
	if s == nil {
		return ""
	}
	return s.ID
}

// Declared returns what the session's client declared (see Session.client).
func (s *Session) Declared() state.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// SetCapabilities records the capabilities the session's client declared
// in initialize (see DeclaredCapabilities).
func (s *Session) SetCapabilities(caps json.RawMessage) {
	s.mu.Lock()
	s.client.ClientCapabilities = caps
	s.mu.Unlock()
}

// DeclaredCapabilities returns the capabilities object of an initialize
// request's params, {} when it names none.
func DeclaredCapabilities(params []byte) json.RawMessage {
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	if len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return p.Capabilities
}

// declare records the client of s, a session started by the initialize e
// in data, for Commit.
func (s *Session) declare(data []byte, e *wire.Envelope) {
	var p struct {
		Info json.RawMessage `json:"clientInfo"`
	}
	var params []byte
	if e.Params.Present() {
		params = e.Params.Of(data)
		_ = json.Unmarshal(params, &p)
	}
	s.mu.Lock()
	s.client.ClientCapabilities, s.client.ClientInfo = DeclaredCapabilities(params), p.Info
	s.mu.Unlock()
	s.pending.Store(true)
}

// Commit creates s in the Store, once, for the reply to the initialize
// that started it here, before the reply is written: it returns reply,
// or in its place a JSON-RPC error naming the store's failure (then s
// ends here, without OnEnd: the POST that started it is answering, and
// the session's header goes from h, the response's header when not yet
// sent). A reply that is an error creates nothing. Without a Store, for a
// nil s or for any later reply, it returns reply as it is.
func (s *Session) Commit(reply []byte, h http.Header) []byte {
	if s == nil || !s.pending.CompareAndSwap(true, false) {
		return reply
	}
	var r struct {
		ID     json.RawMessage `json:"id"`
		Error  json.RawMessage `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(reply, &r) != nil || len(r.Error) > 0 {
		return reply
	}
	var res struct {
		Version string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(r.Result, &res)
	s.mu.Lock()
	s.client.ProtocolVersion = res.Version
	c := s.client
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	expires := time.Now().Add(s.t.cfg.IdleTimeout)
	err := s.t.cfg.Store.Create(ctx, state.Session{ID: s.ID, ProtocolVersion: c.ProtocolVersion, ClientCapabilities: c.ClientCapabilities,
		ClientInfo: c.ClientInfo, Expires: expires})
	if err == nil {
		s.checked(expires)
		return reply
	}
	s.t.end(s, false)
	if h != nil {
		h.Del(mcp.SessionHeader)
	}
	return storeError(r.ID, fmt.Errorf("creating the session: %w", err))
}

// storeError is the JSON-RPC error response to id (nil: null) of a
// request the session store failed.
func storeError(id json.RawMessage, err error) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal("jsonrpc: the session store failed: " + err.Error())
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, CodeStoreUnavailable, msg)
}

// refuse answers a request whose session lookup failed with err: 404
// for a session the store does not hold, else 503.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "1")
	switch {
	case errors.Is(err, state.ErrNoSession):
		w.Header().Del("Retry-After")
		http.Error(w, "jsonrpc: unknown or ended session", http.StatusNotFound)
	case err == errTooMany:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.Header()["Content-Type"] = jsonContentType
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(storeError(nil, err))
	}
}

// lookup returns the session id as the Store holds it, adopted when this
// instance does not hold it, touched in the store when due; one checked
// less than Staleness ago is served as it is (fresh).
func (t *Sessions) lookup(ctx context.Context, id string) (*Session, error) {
	if s := t.fresh(id); s != nil {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	st, err := t.check(ctx, id)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[id]
	switch {
	case s != nil:
		s.used.Store(time.Now().UnixNano())
	case len(t.m) >= t.cfg.MaxSessions:
		return nil, errTooMany
	default:
		s = t.addLocked(id)
		s.client = st
	}
	s.seen(st)
	return s, nil
}

// checked records that the store holds s, expiring at expires.
func (s *Session) checked(expires time.Time) {
	s.checkedAt.Store(time.Now().UnixNano())
	s.expires.Store(expires.UnixNano())
}

// seen records st, s as the store holds it.
func (s *Session) seen(st state.Session) {
	s.checked(st.Expires)
	s.mu.Lock()
	s.client.Values = st.Values
	s.mu.Unlock()
}

// fresh returns the session id when it was checked with the store less
// than Staleness ago and its expiry is not due for a Touch; nil otherwise.
func (t *Sessions) fresh(id string) *Session {
	if t.cfg.Staleness <= 0 {
		return nil
	}
	t.mu.Lock()
	s := t.m[id]
	t.mu.Unlock()
	now := time.Now().UnixNano()
	if s == nil || now-s.checkedAt.Load() >= int64(t.cfg.Staleness) || s.expires.Load()-now < int64(t.touchAfter()) {
		return nil
	}
	s.used.Store(now)
	return s
}

// touchAfter is the time before its expiry under which a session is
// touched: 0.9 IdleTimeout, a tenth of it having passed.
func (t *Sessions) touchAfter() time.Duration { return t.cfg.IdleTimeout - t.cfg.IdleTimeout/10 }

// check reads the session id from the Store and touches it when due (the
// expiry it returns is then the new one); a session the store does not
// hold ends here.
func (t *Sessions) check(ctx context.Context, id string) (state.Session, error) {
	st, err := t.cfg.Store.Get(ctx, id)
	if now := time.Now(); err == nil && st.Expires.Sub(now) < t.touchAfter() {
		// A failure other than the session's end is tried again on the
		// next request: the Get has answered.
		switch terr := t.cfg.Store.Touch(ctx, id, now.Add(t.cfg.IdleTimeout)); {
		case terr == nil:
			st.Expires = now.Add(t.cfg.IdleTimeout)
		case errors.Is(terr, state.ErrNoSession):
			err = terr
		}
	}
	if errors.Is(err, state.ErrNoSession) {
		t.forget(id)
	}
	return st, err
}

// forget ends here the session id, which the store does not hold (unless
// it is not yet in the store: Commit).
func (t *Sessions) forget(id string) {
	t.mu.Lock()
	s := t.m[id]
	t.mu.Unlock()
	if s != nil && !s.pending.Load() {
		t.end(s, true)
	}
}

// delete ends the session id in the Store, then here.
func (t *Sessions) delete(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	err := t.cfg.Store.Delete(ctx, id)
	if err == nil || errors.Is(err, state.ErrNoSession) {
		t.forget(id)
	}
	return err
}
