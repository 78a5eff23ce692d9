package state

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// MemoryEventStore is the in-memory EventStore of one process; it is a
// Follower.
type MemoryEventStore struct {
	lim Limits
	now func() time.Time

	mu     sync.Mutex
	events []memEvent // oldest first
	bytes  int64
	seq    uint64
	lost   map[string]uint64 // the highest evicted seq of each stream
	floor  uint64            // the highest seq of the lost records dropped to bound lost
	wait   map[string]*waiters
}

// waiters are the Waits on one stream: ch closes at its next Append.
type waiters struct {
	ch chan struct{}
	n  int
}

type memEvent struct {
	stream string
	at     time.Time
	Event
}

// NewMemoryEventStore returns an empty store bounded by lim, whose clock is
// now (nil: time.Now).
func NewMemoryEventStore(lim Limits, now func() time.Time) *MemoryEventStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryEventStore{lim: lim, now: now, lost: map[string]uint64{}, wait: map[string]*waiters{}}
}

// Append implements EventStore.
func (s *MemoryEventStore) Append(ctx context.Context, stream string, data []byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.seq++
	s.events = append(s.events, memEvent{stream: stream, at: now, Event: Event{Seq: s.seq, Data: slices.Clone(data)}})
	s.bytes += int64(len(data))
	s.evictLocked(now)
	if w := s.wait[stream]; w != nil {
		close(w.ch)
		delete(s.wait, stream)
	}
	return s.seq, nil
}

// Wait implements Follower.
func (s *MemoryEventStore) Wait(ctx context.Context, stream string, seq uint64) error {
	for {
		s.mu.Lock()
		from, _ := slices.BinarySearchFunc(s.events, seq+1, func(e memEvent, t uint64) int { return cmp.Compare(e.Seq, t) })
		if slices.ContainsFunc(s.events[from:], func(e memEvent) bool { return e.stream == stream }) {
			s.mu.Unlock()
			return nil
		}
		w := s.wait[stream]
		if w == nil {
			w = &waiters{ch: make(chan struct{})}
			s.wait[stream] = w
		}
		w.n++
		s.mu.Unlock()
		select {
		case <-w.ch: // an append to stream: look again
		case <-ctx.Done():
			s.mu.Lock()
			if w.n--; w.n == 0 && s.wait[stream] == w {
				delete(s.wait, stream)
			}
			s.mu.Unlock()
			return fmt.Errorf("jsonrpc/state: waiting for an event: %w", ctx.Err())
		}
	}
}

// After implements EventStore.
func (s *MemoryEventStore) After(ctx context.Context, stream string, seq uint64) ([]Event, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evictLocked(s.now())
	lost, ok := s.lost[stream]
	if !ok {
		lost = s.floor
	}
	var out []Event
	from, _ := slices.BinarySearchFunc(s.events, seq+1, func(e memEvent, t uint64) int { return cmp.Compare(e.Seq, t) })
	for _, e := range s.events[from:] {
		if e.stream == stream {
			out = append(out, e.Event)
		}
	}
	return out, seq >= lost, nil
}

// evictLocked drops the events past the bounds at now (s.mu held).
func (s *MemoryEventStore) evictLocked(now time.Time) {
	for len(s.events) > 0 && s.over(now) {
		e := s.events[0]
		s.events[0] = memEvent{}
		s.events = s.events[1:]
		s.bytes -= int64(len(e.Data))
		s.lost[e.stream] = e.Seq
		s.boundLostLocked(e.stream)
	}
}

// over reports whether the oldest event must go.
func (s *MemoryEventStore) over(now time.Time) bool {
	n := len(s.events)
	if s.lim.MaxAge > 0 && now.Sub(s.events[0].at) >= s.lim.MaxAge {
		return true
	}
	return n > 1 && ((s.lim.MaxEvents > 0 && n > s.lim.MaxEvents) || (s.lim.MaxBytes > 0 && s.bytes > s.lim.MaxBytes))
}

// boundLostLocked keeps the eviction records as many as the events bound
// (or 4096): one forgotten leaves its seq as a floor for every stream.
func (s *MemoryEventStore) boundLostLocked(keep string) {
	limit := s.lim.MaxEvents
	if limit <= 0 {
		limit = 4096
	}
	for k, v := range s.lost {
		if len(s.lost) <= limit {
			return
		}
		if k != keep {
			s.floor = max(s.floor, v)
			delete(s.lost, k)
		}
	}
}

// MemoryKeyRing is the in-memory KeyRing of one process.
type MemoryKeyRing struct {
	retain int
	mu     sync.Mutex
	keys   []Key // newest first
}

// NewMemoryKeyRing returns a ring keeping the retain newest keys (at least
// 1), holding keys (newest first).
func NewMemoryKeyRing(retain int, keys ...Key) (*MemoryKeyRing, error) {
	r := &MemoryKeyRing{retain: max(1, retain)}
	for _, k := range slices.Backward(keys) {
		if err := r.Rotate(context.Background(), k); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Keys implements KeyRing.
func (r *MemoryKeyRing) Keys(ctx context.Context) ([]Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys), nil
}

// Rotate implements KeyRing.
func (r *MemoryKeyRing) Rotate(ctx context.Context, k Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next, err := RotateKeys(r.keys, k, r.retain)
	if err == nil {
		r.keys = next
	}
	return err
}

// Remove implements KeyRing.
func (r *MemoryKeyRing) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next, err := RemoveKey(r.keys, id)
	if err == nil {
		r.keys = next
	}
	return err
}

// RotateKeys returns keys with k first, keeping retain keys: the rule of
// Rotate, for implementations (keys is not modified).
func RotateKeys(keys []Key, k Key, retain int) ([]Key, error) {
	if err := CheckKey(k); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(keys, func(o Key) bool { return o.ID == k.ID }) {
		return nil, ErrKeyExists
	}
	next := append([]Key{{ID: k.ID, Secret: slices.Clone(k.Secret)}}, keys...)
	return next[:min(len(next), max(1, retain))], nil
}

// RemoveKey returns keys without the key named id: the rule of Remove, for
// implementations (keys is not modified).
func RemoveKey(keys []Key, id string) ([]Key, error) {
	i := slices.IndexFunc(keys, func(o Key) bool { return o.ID == id })
	if i < 0 {
		return nil, ErrNoKey
	}
	return slices.Delete(slices.Clone(keys), i, i+1), nil
}
