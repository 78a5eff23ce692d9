package sse

import (
	"strconv"
	"strings"
	"sync"
)

// Store keeps the recent events of one Streamable HTTP session, so
// that a client whose connection dropped can resume a stream (GET with
// Last-Event-ID) and get the events it missed, exactly once. It is bounded
// by a count of events and by their bytes: past either bound the oldest
// events are evicted, and a stream that lost events it was still owed can
// no longer be resumed exactly (see after).
//
// Events are numbered by one counter per session, so that an event id,
// "<stream>-<seq>", is unique across the session's streams and names the
// stream it belongs to. Stream 0 is the session's standalone (GET) stream;
// POST streams count from 1.
type Store struct {
	maxEvents int
	maxBytes  int

	mu        sync.Mutex
	events    []StoredEvent // oldest first
	bytes     int
	seq       uint64            // the last seq given
	lost      map[uint64]uint64 // the highest evicted seq of each stream
	forgotten uint64            // the highest seq of the lost records dropped to bound lost
}

type StoredEvent struct {
	stream uint64
	seq    uint64
	data   []byte
}

func NewStore(maxEvents, maxBytes int) *Store {
	return &Store{maxEvents: max(1, maxEvents), maxBytes: max(1, maxBytes), lost: map[uint64]uint64{}}
}

// add stores an event of stream (the store keeps data) and returns its seq.
func (s *Store) add(stream uint64, data []byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	s.events = append(s.events, StoredEvent{stream: stream, seq: s.seq, data: data})
	s.bytes += len(data)
	for len(s.events) > s.maxEvents || (s.bytes > s.maxBytes && len(s.events) > 1) {
		e := s.events[0]
		s.events[0] = StoredEvent{}
		s.events = s.events[1:]
		s.bytes -= len(e.data)
		s.lost[e.stream] = e.seq
		if len(s.lost) > s.maxEvents {
			// Bound the records too: forget one, and remember its seq as
			// a floor under which any stream may have lost events.
			for k, v := range s.lost {
				if k != e.stream {
					s.forgotten = max(s.forgotten, v)
					delete(s.lost, k)
					break
				}
			}
		}
	}
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
func (s *Store) after(stream uint64, seq uint64) (events []StoredEvent, complete bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lost, ok := s.lost[stream]
	if !ok {
		lost = s.forgotten
	}
	for _, e := range s.events {
		if e.stream == stream && e.seq > seq {
			events = append(events, e)
		}
	}
	return events, seq >= lost
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
