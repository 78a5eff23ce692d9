package connrt

import "github.com/seedhq/jsonrpc/internal/codec"

// Calls is the table of our calls in flight, by id and by group, for a
// connection and an HTTP client alike: a response takes its call by id
// (TakeID), and a message takes the calls it left out (Left).
//
// The ids are ours: plain decimal numbers (ParseID). A call's group is the
// message it was sent in: its own id, or its batch's first id. Calls is not
// safe for concurrent use (its owner guards it with a mutex).
type Calls[P any] struct {
	one   waiting[P] // a call kept out of m (id 0: none), so that one call at a time costs no map operation
	m     map[uint64]waiting[P]
	ended bool // no call can be answered any more (TakeAll)
}

// waiting is a call, its id and its group.
type waiting[P any] struct {
	p         P
	id, group uint64
}

// Len is the number of calls waiting.
func (s *Calls[P]) Len() int { return len(s.m) + int(min(s.one.id, 1)) }

// spill moves the call kept out of m into it, for the walks over m.
func (s *Calls[P]) spill() {
	if w := s.one; w.id != 0 {
		s.one = waiting[P]{}
		s.put(w)
	}
}

func (s *Calls[P]) put(w waiting[P]) {
	if s.m == nil {
		s.m = make(map[uint64]waiting[P])
	}
	s.m[w.id] = w
}

// Ended reports whether TakeAll has ended the set.
func (s *Calls[P]) Ended() bool { return s.ended }

// Add adds call p with id, sent in message group.
func (s *Calls[P]) Add(id, group uint64, p P) {
	if s.one.id == 0 {
		s.one = waiting[P]{p, id, group}
	} else {
		s.put(waiting[P]{p, id, group})
	}
}

// Get returns the call with id, and whether there is one.
func (s *Calls[P]) Get(id uint64) (P, bool) {
	s.spill() // (seldom asked: the slot is for Take and TakeID)
	w, ok := s.m[id]
	return w.p, ok
}

// Take removes and returns the call with id, and whether there was one.
func (s *Calls[P]) Take(id uint64) (P, bool) {
	w, ok := s.take(id)
	return w.p, ok
}

func (s *Calls[P]) take(id uint64) (waiting[P], bool) {
	if w := s.one; id != 0 && id == w.id {
		s.one = waiting[P]{}
		return w, true
	}
	w, ok := s.m[id]
	delete(s.m, id)
	return w, ok
}

// TakeAll removes every call, and ends the set.
func (s *Calls[P]) TakeAll() []P {
	s.spill()
	calls := make([]P, 0, len(s.m))
	for _, w := range s.m {
		calls = append(calls, w.p)
	}
	s.m, s.ended = nil, true
	return calls
}

// TakeGroup removes and returns the calls sent in one message.
func (s *Calls[P]) TakeGroup(group uint64) []P {
	s.spill()
	var calls []P
	for n, w := range s.m {
		if w.group == group {
			calls = append(calls, w.p)
			delete(s.m, n)
		}
	}
	return calls
}

// TakeOneGroup removes and returns the calls waiting when they all belong
// to one message; otherwise it takes none.
func (s *Calls[P]) TakeOneGroup() []P {
	s.spill()
	var group uint64
	for _, w := range s.m {
		if group != 0 && w.group != group {
			return nil
		}
		group = w.group
	}
	if group == 0 {
		return nil
	}
	return s.TakeGroup(group)
}

// TakeID removes and returns the call whose id (one we sent: see ParseID)
// reads raw, with its group, and whether there was one.
func (s *Calls[P]) TakeID(raw []byte) (p P, group uint64, ok bool) {
	n, ok := ParseID(raw)
	if !ok {
		return p, 0, false
	}
	w, ok := s.take(n)
	return w.p, w.group, ok
}

// Left removes and returns the calls a message left out once it has been
// read: if it was a batch reply answering group (not 0), the other calls
// of that batch; otherwise, if it held an id-null error (nullErr), the
// calls waiting when they all belong to one message.
func (s *Calls[P]) Left(batch bool, group uint64, nullErr bool) []P {
	switch {
	case batch && group != 0:
		return s.TakeGroup(group)
	case nullErr:
		return s.TakeOneGroup()
	}
	return nil
}

// ParseID reads an id we sent: a plain decimal number of at most 19 digits.
func ParseID(raw []byte) (uint64, bool) {
	if len(raw) > 19 {
		return 0, false
	}
	return codec.ParseUint(raw)
}
