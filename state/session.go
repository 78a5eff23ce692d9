package state

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// ErrNoSession is the error of a session id the store does not hold: never
// created, deleted, or expired.
var ErrNoSession = errors.New("jsonrpc/state: no such session (unknown, ended or expired)")

// ErrSessionExists refuses to create a session whose id the store holds.
var ErrSessionExists = errors.New("jsonrpc/state: a session with this id exists")

// Session is what a server keeps of an MCP 2025 session between requests.
type Session struct {
	ID                 string          `json:"id"`
	ProtocolVersion    string          `json:"protocolVersion"`              // the negotiated revision
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"` // as initialize declared them
	ClientInfo         json.RawMessage `json:"clientInfo,omitempty"`         // as initialize declared it
	Expires            time.Time       `json:"expires"`                      // the session ends at this time unless touched
	// Values are what the server set for the session since (Set), by key.
	Values map[string]json.RawMessage `json:"values,omitempty"`
}

// SessionValues are the Values of one session as a server instance sees
// them: Value as the store last told it (or as it set them since), Set
// through the store (SessionStore.Set), then there.
type SessionValues interface {
	Value(key string) json.RawMessage
	Set(ctx context.Context, key string, value json.RawMessage) error
}

// MaxSessionValues bounds the bytes of a session's Values, keys and values
// together.
const MaxSessionValues = 64 << 10

// ErrSessionValuesFull refuses a Set past MaxSessionValues.
var ErrSessionValuesFull = errors.New("jsonrpc/state: the session's values would exceed MaxSessionValues bytes")

// SetValue sets key to value in values (nil or empty value: removes it),
// the Values of a session, and returns them; ErrSessionValuesFull past
// MaxSessionValues. values is modified: pass a copy.
func SetValue(values map[string]json.RawMessage, key string, value json.RawMessage) (map[string]json.RawMessage, error) {
	if len(value) == 0 {
		delete(values, key)
		return values, nil
	}
	n := len(key) + len(value)
	for k, v := range values {
		if k != key {
			n += len(k) + len(v)
		}
	}
	if n > MaxSessionValues {
		return values, ErrSessionValuesFull
	}
	if values == nil {
		values = map[string]json.RawMessage{}
	}
	values[key] = slices.Clone(value)
	return values, nil
}

// SessionStore keeps sessions by id. A session is gone, everywhere the
// store is shared, once deleted or once its Expires has passed: Get, Touch
// and Delete then return ErrNoSession.
type SessionStore interface {
	// Create stores a new session (ErrSessionExists when its id is held).
	Create(ctx context.Context, s Session) error
	// Get returns the live session named id (its Values are not to be
	// modified).
	Get(ctx context.Context, id string) (Session, error)
	// Touch moves the expiry of the live session named id to expires.
	Touch(ctx context.Context, id string, expires time.Time) error
	// Delete ends the session named id.
	Delete(ctx context.Context, id string) error
	// Set sets the value of key in the Values of the live session named
	// id (nil: removes it), keeping its other values (SetValue).
	Set(ctx context.Context, id, key string, value json.RawMessage) error
}

// MemorySessionStore is the in-memory SessionStore of one process.
type MemorySessionStore struct {
	now func() time.Time

	mu       sync.Mutex
	sessions map[string]Session
	creates  int
}

// NewMemorySessionStore returns an empty store whose clock is now (nil:
// time.Now).
func NewMemorySessionStore(now func() time.Time) *MemorySessionStore {
	if now == nil {
		now = time.Now
	}
	return &MemorySessionStore{now: now, sessions: map[string]Session{}}
}

// Create implements SessionStore.
func (m *MemorySessionStore) Create(ctx context.Context, s Session) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.creates++; m.creates%64 == 0 {
		maps.DeleteFunc(m.sessions, func(_ string, o Session) bool { return !now.Before(o.Expires) })
	}
	if o, ok := m.sessions[s.ID]; ok && now.Before(o.Expires) {
		return ErrSessionExists
	}
	s = cloneSession(s)
	s.Values = maps.Clone(s.Values)
	for k, v := range s.Values {
		s.Values[k] = slices.Clone(v)
	}
	m.sessions[s.ID] = s
	return nil
}

// liveLocked returns the live session named id (m.mu held).
func (m *MemorySessionStore) liveLocked(id string) (Session, error) {
	s, ok := m.sessions[id]
	if !ok {
		return Session{}, ErrNoSession
	}
	if !m.now().Before(s.Expires) {
		delete(m.sessions, id)
		return Session{}, ErrNoSession
	}
	return s, nil
}

// Get implements SessionStore.
func (m *MemorySessionStore) Get(ctx context.Context, id string) (Session, error) {
	if err := ctx.Err(); err != nil {
		return Session{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.liveLocked(id)
	return cloneSession(s), err
}

// Touch implements SessionStore.
func (m *MemorySessionStore) Touch(ctx context.Context, id string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.liveLocked(id)
	if err == nil {
		s.Expires = expires
		m.sessions[id] = s
	}
	return err
}

// Set implements SessionStore.
func (m *MemorySessionStore) Set(ctx context.Context, id, key string, value json.RawMessage) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.liveLocked(id)
	if err == nil {
		s.Values, err = SetValue(maps.Clone(s.Values), key, value)
		m.sessions[id] = s
	}
	return err
}

// Delete implements SessionStore.
func (m *MemorySessionStore) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.liveLocked(id)
	delete(m.sessions, id)
	return err
}

func cloneSession(s Session) Session {
	s.ClientCapabilities = slices.Clone(s.ClientCapabilities)
	s.ClientInfo = slices.Clone(s.ClientInfo)
	return s // Values are shared: never modified in place (Set replaces the map)
}
