package sse

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/state"
)

// Store keeps the recent events of one Streamable HTTP session, so
// that a client whose connection dropped can resume a stream (GET with
// Last-Event-ID) and get the events it missed, exactly once: a
// state.MemoryEventStore bounded by a count of events and by their bytes,
// whose streams are the session's, named by number. Past either bound the
// oldest events are evicted, and a stream that lost events it was still
// owed can no longer be resumed exactly (see after).
//
// The store's seq is one counter for all its streams, so that an event id,
// "<stream>-<seq>", is unique across the session's streams and names the
// stream it belongs to. Stream 0 is the session's standalone (GET) stream;
// POST streams count from 1.
type Store struct {
	mem *state.MemoryEventStore

	mu   sync.Mutex
	seq  uint64 // the last seq given
	num  uint64 // the stream of the last add, named name (no allocation per event)
	name string
}

func NewStore(maxEvents, maxBytes int) *Store {
	return &Store{mem: state.NewMemoryEventStore(state.Limits{MaxEvents: max(1, maxEvents), MaxBytes: int64(max(1, maxBytes))}, nil)}
}

// add stores a copy of data as an event of stream and returns its seq.
func (s *Store) add(stream uint64, data []byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stream != s.num || s.name == "" {
		s.num, s.name = stream, strconv.FormatUint(stream, 10)
	}
	s.seq, _ = s.mem.Append(context.Background(), s.name, data) // in memory: it never fails
	return s.seq
}

// last returns the last seq given (an event id made of it names a point
// before every later event).
func (s *Store) last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// after returns the stored events of stream that follow seq, oldest first,
// and whether they are all of them: false when an event of stream after
// seq was evicted.
func (s *Store) after(stream uint64, seq uint64) (events []state.Event, complete bool) {
	events, complete, _ = s.mem.After(context.Background(), strconv.FormatUint(stream, 10), seq)
	return events, complete
}

// EventID formats the id of event seq of stream.
func EventID(stream, seq uint64) string {
	return strconv.FormatUint(stream, 10) + "-" + strconv.FormatUint(seq, 10)
}

// ParseEventID parses an id made by EventID.
func ParseEventID(id string) (stream, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	stream, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return stream, seq, found && err1 == nil && err2 == nil
}
