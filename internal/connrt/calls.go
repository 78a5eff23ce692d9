package connrt

import "github.com/seedhq/jsonrpc/internal/wire"

// Outcomes is the owner's side of Calls.Answer: the results it sends to its
// calls.
type Outcomes[P any] interface {
	// Answer sends response e of data to p; alone reports that data is
	// this one response (not a batch).
	Answer(p P, data []byte, e *wire.Envelope, alone bool)
	// NullError is the error of e when e is an error response with id null
	// (or no id), and nil otherwise.
	NullError(data []byte, e *wire.Envelope) error
	// Fail sends err (an id-null error) to p.
	Fail(p P, err error)
	// NoResponse tells p that the batch reply left it out.
	NoResponse(p P)
}

// Calls is the table of our calls in flight, by id, and the rules that
// match responses to them (the same for a connection and an HTTP
// client):
//
//   - a response goes to the call with its id (Outcomes.Answer makes its
//     result: a result, an error object, or a malformed response);
//   - an error response with id null (the peer could not read one of our
//     messages) answers the calls waiting when they all belong to one
//     message; otherwise it matches none;
//   - once a batch reply has been read, the calls of that batch it left out
//     get its id-null error if it held one, and Outcomes.NoResponse
//     otherwise;
//   - anything else matches no call, and is reported to the owner.
//
// The ids are ours: plain decimal numbers (ParseID). A call's group is the
// message it was sent in: its own id, or its batch's first id. A batch is
// written with AppendBatch (ids from a counter, the group of its calls),
// and its results awaited with Wait. Calls is not safe for concurrent use
// (its owner guards it with a mutex).
type Calls[P any] struct {
	m     map[uint64]waiting[P]
	ended bool // no call can be answered any more (TakeAll)
}

// waiting is a call and its group.
type waiting[P any] struct {
	p     P
	group uint64
}

// Len is the number of calls waiting.
func (s *Calls[P]) Len() int { return len(s.m) }

// Ended reports whether TakeAll has ended the set.
func (s *Calls[P]) Ended() bool { return s.ended }

// Add adds call p with id, sent in message group.
func (s *Calls[P]) Add(id, group uint64, p P) {
	if s.m == nil {
		s.m = make(map[uint64]waiting[P])
	}
	s.m[id] = waiting[P]{p, group}
}

// Get returns the call with id, and whether there is one.
func (s *Calls[P]) Get(id uint64) (P, bool) {
	w, ok := s.m[id]
	return w.p, ok
}

// Take removes and returns the call with id, and whether there was one.
func (s *Calls[P]) Take(id uint64) (P, bool) {
	w, ok := s.m[id]
	if ok {
		delete(s.m, id)
	}
	return w.p, ok
}

// TakeAll removes every call, and ends the set.
func (s *Calls[P]) TakeAll() []P {
	calls := make([]P, 0, len(s.m))
	for _, w := range s.m {
		calls = append(calls, w.p)
	}
	s.m, s.ended = nil, true
	return calls
}

// TakeGroup removes and returns the calls sent in one message.
func (s *Calls[P]) TakeGroup(group uint64) []P {
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

// Answer delivers the responses among elems (the elements of message data,
// requests included) to the calls they answer, by the rules of the package,
// and reports what matched no call: how many responses, the id of the
// first, and an id-null error that answered nothing.
func (s *Calls[P]) Answer(data []byte, elems []wire.Envelope, batch bool, o Outcomes[P]) (unmatched int, firstID string, nullErr error) {
	var group uint64 // the batch of ours this message answers
	for i := range elems {
		e := &elems[i]
		if e.Kind != wire.KindResponse && e.Kind != wire.KindBadResponse {
			continue
		}
		raw := e.ID.Of(data)
		if !e.ID.Present() || string(raw) == "null" {
			if err := o.NullError(data, e); err != nil && nullErr == nil {
				nullErr = err
				continue
			}
		} else if n, ok := ParseID(raw); ok {
			if w, ok := s.m[n]; ok {
				delete(s.m, n)
				group = w.group
				o.Answer(w.p, data, e, !batch)
				continue
			}
		}
		if unmatched++; unmatched == 1 {
			firstID = string(raw)
		}
	}
	return unmatched, firstID, s.answerLeft(batch, group, nullErr, o)
}

// answerLeft answers the calls that a message (a batch reply answering
// group, if batch) left out: those of the batch, or with an id-null error
// nullErr the calls waiting when they all belong to one message. It returns
// nullErr if that answered no call, and nil otherwise.
func (s *Calls[P]) answerLeft(batch bool, group uint64, nullErr error, o Outcomes[P]) error {
	var left []P
	switch {
	case batch && group != 0:
		left = s.TakeGroup(group)
	case nullErr != nil:
		left = s.TakeOneGroup()
	}
	if len(left) > 0 && nullErr != nil {
		for _, p := range left {
			o.Fail(p, nullErr)
		}
		return nil
	}
	for _, p := range left {
		o.NoResponse(p)
	}
	return nullErr
}

// ParseID reads an id we sent: a plain decimal number.
func ParseID(raw []byte) (uint64, bool) {
	if len(raw) == 0 || len(raw) > 19 || (raw[0] == '0' && len(raw) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}
