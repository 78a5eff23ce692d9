package nats

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seedhq/jsonrpc/state"
)

// DefaultSessionBucket is the default bucket of a SessionStore.
const DefaultSessionBucket = "jsonrpc_sessions"

// SessionStoreConfig configures a JetStream SessionStore.
type SessionStoreConfig struct {
	// Bucket is the key-value bucket of the sessions (default
	// DefaultSessionBucket), created if missing.
	Bucket string
	// TTL removes an entry not written for that long (default 24h), so
	// that expired sessions do not pile up: keep it above the sessions'
	// idle timeout, as Touch rewrites an entry.
	TTL time.Duration
	// Storage is JetStream's storage (default file), Replicas its copies
	// (default 1).
	Storage  jetstream.StorageType
	Replicas int
}

// SessionStore is a state.SessionStore in a JetStream key-value bucket,
// shared by every instance that opens it: a session created through one
// instance is found through any other, and a Delete or an expiry ends it
// for all. Get is one read from the bucket; Create, Touch, Set and Delete
// a read and a compare-and-set write. Expiry is judged by the reading
// instance's clock against the session's Expires.
//
// Set as jsonrpc.StreamableHTTPOptions.SessionStore, it makes Streamable
// HTTP sessions continue through any instance: every request naming a
// session then costs a Get (about 50 µs to an embedded server on loopback:
// BenchmarkSessionLookup), or one per SessionStaleness.
type SessionStore struct {
	kv jetstream.KeyValue
}

// NewSessionStore opens (creating if missing) the bucket of cfg.
func NewSessionStore(ctx context.Context, js jetstream.JetStream, cfg SessionStoreConfig) (*SessionStore, error) {
	cfg.Bucket = cmp.Or(cfg.Bucket, DefaultSessionBucket)
	if cfg.TTL <= 0 {
		cfg.TTL = 24 * time.Hour
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: cfg.Bucket, History: 1, TTL: cfg.TTL, Storage: cfg.Storage, Replicas: max(1, cfg.Replicas),
	})
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: session bucket %s: %w", cfg.Bucket, err)
	}
	return &SessionStore{kv: kv}, nil
}

func sessionKey(id string) string { return "s" + base64.RawURLEncoding.EncodeToString([]byte(id)) }

// live reads the live session named id and its revision (ErrNoSession).
func (s *SessionStore) live(ctx context.Context, id string) (state.Session, uint64, error) {
	e, err := s.kv.Get(ctx, sessionKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return state.Session{}, 0, state.ErrNoSession
	}
	if err != nil {
		return state.Session{}, 0, fmt.Errorf("jsonrpc/nats: session read: %w", err)
	}
	var x state.Session
	if err := json.Unmarshal(e.Value(), &x); err != nil {
		return state.Session{}, 0, fmt.Errorf("jsonrpc/nats: session %s: %w", id, err)
	}
	if !time.Now().Before(x.Expires) {
		return state.Session{}, e.Revision(), state.ErrNoSession
	}
	return x, e.Revision(), nil
}

// Create implements state.SessionStore.
func (s *SessionStore) Create(ctx context.Context, x state.Session) error {
	body, err := json.Marshal(x)
	if err != nil {
		return err
	}
	_, err = s.kv.Create(ctx, sessionKey(x.ID), body)
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return wrapWrite(err)
	}
	// Held: by a live session, or by an expired one that may be replaced.
	_, rev, err := s.live(ctx, x.ID)
	switch {
	case err == nil:
		return state.ErrSessionExists
	case !errors.Is(err, state.ErrNoSession):
		return err
	}
	if _, err := s.kv.Update(ctx, sessionKey(x.ID), body, rev); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || wrongLast(err) {
			return state.ErrSessionExists // another instance created it first
		}
		return wrapWrite(err)
	}
	return nil
}

func wrapWrite(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("jsonrpc/nats: session write: %w", err)
}

// Get implements state.SessionStore.
func (s *SessionStore) Get(ctx context.Context, id string) (state.Session, error) {
	x, _, err := s.live(ctx, id)
	return x, err
}

// Touch implements state.SessionStore.
func (s *SessionStore) Touch(ctx context.Context, id string, expires time.Time) error {
	return s.update(ctx, id, "touch", func(x *state.Session) error {
		x.Expires = expires
		return nil
	})
}

// Set implements state.SessionStore: a read and a write that succeeds only
// if the entry is still the one read (tried again otherwise), so no
// concurrent Set or Touch is lost.
func (s *SessionStore) Set(ctx context.Context, id, key string, value json.RawMessage) error {
	return s.update(ctx, id, "set", func(x *state.Session) (err error) {
		x.Values, err = state.SetValue(x.Values, key, value)
		return err
	})
}

// update applies change to the live session named id with a
// compare-and-set on its revision, tried again on a conflict.
func (s *SessionStore) update(ctx context.Context, id, what string, change func(*state.Session) error) error {
	for range casAttempts {
		x, rev, err := s.live(ctx, id)
		if err != nil {
			return err
		}
		if err := change(&x); err != nil {
			return err
		}
		body, err := json.Marshal(x)
		if err != nil {
			return err
		}
		_, err = s.kv.Update(ctx, sessionKey(id), body, rev)
		if err == nil || !(errors.Is(err, jetstream.ErrKeyExists) || wrongLast(err)) {
			return wrapWrite(err)
		}
	}
	return fmt.Errorf("jsonrpc/nats: session %s: %d conflicting updates", what, casAttempts)
}

// Delete implements state.SessionStore.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	for range casAttempts {
		_, rev, err := s.live(ctx, id)
		if err != nil {
			return err
		}
		err = s.kv.Delete(ctx, sessionKey(id), jetstream.LastRevision(rev))
		if err == nil || !(errors.Is(err, jetstream.ErrKeyExists) || wrongLast(err)) {
			return wrapWrite(err)
		}
	}
	return fmt.Errorf("jsonrpc/nats: session delete: %d conflicting updates", casAttempts)
}
