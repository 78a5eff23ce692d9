package state

import (
	"context"
	"errors"
	"time"
)

// Errors of the stores.
var (
	// ErrKeyShort refuses a key with fewer than MinKeyBytes bytes of secret
	// or an empty id.
	ErrKeyShort = errors.New("jsonrpc/state: a key needs an id and a secret of 16 bytes or more")
	// ErrKeyExists refuses to rotate in a key whose id the ring holds.
	ErrKeyExists = errors.New("jsonrpc/state: the key ring already holds a key with this id")
	// ErrNoKey is the error of Remove for an id the ring does not hold.
	ErrNoKey = errors.New("jsonrpc/state: no key with this id in the key ring")
	// ErrClosed is the error of a store used after Close.
	ErrClosed = errors.New("jsonrpc/state: the store is closed")
)

// MinKeyBytes is the shortest secret a KeyRing accepts.
const MinKeyBytes = 16

// Event is one stored event of a stream.
type Event struct {
	Seq  uint64 // strictly increasing within a stream
	Data []byte
}

// Limits bound an EventStore (a zero field is no bound).
type Limits struct {
	MaxEvents int           // events kept, all streams together
	MaxBytes  int64         // bytes of data kept, all streams together
	MaxAge    time.Duration // how long an event is kept
}

// EventStore keeps the recent events of named streams (see the package doc).
type EventStore interface {
	// Append stores data as the next event of stream and returns its Seq.
	Append(ctx context.Context, stream string, data []byte) (uint64, error)
	// After returns the retained events of stream with Seq above seq,
	// oldest first, and whether none of those was evicted.
	After(ctx context.Context, stream string, seq uint64) (events []Event, complete bool, err error)
}

// Follower is an EventStore that can wait for a stream's next event, so
// that a reader following a stream another instance appends to learns of
// each event as it comes (see the package doc). A reader of a store
// without it polls.
type Follower interface {
	EventStore
	// Wait returns nil once stream holds an event with Seq above seq (at
	// once when it does), or the context's error, wrapped. It may return
	// nil early, as an event is about to be stored (or refused): a reader
	// calls After, and Wait again when it finds nothing new.
	Wait(ctx context.Context, stream string, seq uint64) error
}

// Key is one requestState key: its id and its secret.
type Key struct {
	ID     string
	Secret []byte
}

// KeyRing holds the keys of requestState, newest first (see the package doc).
type KeyRing interface {
	// Keys returns the keys, newest first: the first signs, any verifies.
	Keys(ctx context.Context) ([]Key, error)
	// Rotate makes k the newest key (ErrKeyShort, ErrKeyExists).
	Rotate(ctx context.Context, k Key) error
	// Remove drops the key named id (ErrNoKey when there is none).
	Remove(ctx context.Context, id string) error
}

// Secrets returns the secrets of keys in their order: the form of
// jsonrpc.InputRounds.Keys.
func Secrets(keys []Key) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = k.Secret
	}
	return out
}

// CheckKey reports whether k may enter a ring (nil, or ErrKeyShort).
func CheckKey(k Key) error {
	if k.ID == "" || len(k.Secret) < MinKeyBytes {
		return ErrKeyShort
	}
	return nil
}
