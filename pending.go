package jsonrpc

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Responses are matched to our calls here, by the same rules for Conn and
// HTTPClient (and NewMessageClient):
//
//   - a response goes to the call with its id, as a result, an *Error, or
//     ErrInvalidResponse when the response or its error object is malformed;
//   - an error response with id null (the peer could not read one of our
//     messages) answers the calls waiting when they all belong to one
//     message; otherwise it matches none;
//   - once a batch reply has been read, the calls of that batch it left out
//     get its id-null error if it held one, and ErrNoResponse otherwise;
//   - anything else matches no call: a Conn logs and drops it (it may answer
//     a call that was given up on), an HTTP client rejects the reply.

// pendingCall is a call of ours waiting for its response.
type pendingCall struct {
	ch    chan callResult // buffered: receives exactly one result
	group uint64          // the message it was sent in: its own id, or a batch's first id
	iter  bool            // a CallIter call: its response may be lent (calliter.go)
}

type callResult struct {
	result []byte
	err    error
	msg    []byte       // the message, when it was this one response alone: its reader may give it back (Conn.giveBack)
	lent   *lentMessage // or the response, lent by the connection's reader (calliter.go)
}

// pendingPool recycles the records of calls that received their response.
var pendingPool = sync.Pool{New: func() any { return &pendingCall{ch: make(chan callResult, 1)} }}

func newPending(group uint64) *pendingCall {
	p := pendingPool.Get().(*pendingCall)
	p.group, p.iter = group, false
	return p
}

// pendingSet is the calls waiting for a response, by id. It is not safe for
// concurrent use (a [Conn] guards its set with its mutex).
type pendingSet struct {
	m     map[uint64]*pendingCall
	ended bool // no call can be answered any more (takeAll)
}

func (s *pendingSet) len() int { return len(s.m) }

func (s *pendingSet) add(id uint64, p *pendingCall) {
	if s.m == nil {
		s.m = make(map[uint64]*pendingCall)
	}
	s.m[id] = p
}

// take removes and returns the call with id, or nil.
func (s *pendingSet) take(id uint64) *pendingCall {
	p := s.m[id]
	if p != nil {
		delete(s.m, id)
	}
	return p
}

// takeAll removes every call, and ends the set.
func (s *pendingSet) takeAll() map[uint64]*pendingCall {
	m := s.m
	s.m, s.ended = nil, true
	return m
}

// answer delivers the responses among elems (the elements of message data,
// requests included) to the calls they answer, by the rules above, and
// reports what matched no call: how many responses, the id of the first,
// and an id-null error that answered nothing.
func (s *pendingSet) answer(data []byte, elems []wire.Envelope, batch bool) (unmatched int, firstID string, nullErr *Error) {
	var group uint64 // the batch of ours this message answers
	for i := range elems {
		e := &elems[i]
		if e.Kind != wire.KindResponse && e.Kind != wire.KindBadResponse {
			continue
		}
		raw := e.ID.Of(data)
		if !e.ID.Present() || string(raw) == "null" {
			if err := nullIDError(data, e); err != nil && nullErr == nil {
				nullErr = err
				continue
			}
		} else if n, ok := parseOurID(raw); ok {
			if p := s.take(n); p != nil {
				group = p.group // read before p is handed back: its caller may recycle it
				r := outcome(data, e)
				if !batch && r.err == nil {
					r.msg = data // an error's data may point into it: only a result's message goes back
				}
				p.ch <- r
				continue
			}
		}
		if unmatched++; unmatched == 1 {
			firstID = string(raw)
		}
	}
	var left []*pendingCall
	switch {
	case batch && group != 0:
		left = s.takeGroup(group)
	case nullErr != nil:
		left = s.takeOneGroup()
	}
	if len(left) > 0 && nullErr != nil {
		for _, p := range left {
			p.ch <- callResult{err: nullErr}
		}
		return unmatched, firstID, nil
	}
	for _, p := range left {
		p.ch <- callResult{err: ErrNoResponse}
	}
	return unmatched, firstID, nullErr
}

// takeGroup removes and returns the calls sent in one message.
func (s *pendingSet) takeGroup(group uint64) []*pendingCall {
	var calls []*pendingCall
	for n, p := range s.m {
		if p.group == group {
			calls = append(calls, p)
			delete(s.m, n)
		}
	}
	return calls
}

// takeOneGroup removes and returns the calls waiting when they all belong
// to one message; otherwise it takes none.
func (s *pendingSet) takeOneGroup() []*pendingCall {
	var group uint64
	for _, p := range s.m {
		if group != 0 && p.group != group {
			return nil
		}
		group = p.group
	}
	if group == 0 {
		return nil
	}
	return s.takeGroup(group)
}

// outcome is what response e of data says about its call.
func outcome(data []byte, e *wire.Envelope) callResult {
	switch {
	case e.Kind == wire.KindBadResponse:
		return callResult{err: fmt.Errorf("%w: not a valid response object", ErrInvalidResponse)}
	case e.ErrObj.Present():
		rpcErr, ok := parseErrorObject(e.ErrObj.Of(data))
		if !ok {
			return callResult{err: fmt.Errorf("%w: invalid error object: %s", ErrInvalidResponse, truncate(string(e.ErrObj.Of(data)), 200))}
		}
		return callResult{err: rpcErr}
	}
	return callResult{result: e.Result.Of(data)}
}

// nullIDError returns the error of an error response with id null (or no
// id), or nil when e is not one.
func nullIDError(data []byte, e *wire.Envelope) *Error {
	if e.Kind != wire.KindResponse || !e.ErrObj.Present() {
		return nil
	}
	if e.ID.Present() && string(e.ID.Of(data)) != "null" {
		return nil
	}
	rpcErr, _ := parseErrorObject(e.ErrObj.Of(data))
	return rpcErr
}

// parseOurID reads an id we sent: a plain decimal number.
func parseOurID(raw []byte) (uint64, bool) {
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

// batchCall is a call of a batch being sent, with its id and record.
type batchCall struct {
	*BatchCall
	id uint64
	p  *pendingCall
}

// encodeBatch appends b to dst as one batch message. Each call gets the next
// id of seq and a pending record whose group is the batch's first id.
func encodeBatch(dst []byte, b *Batch, seq *atomic.Uint64) ([]byte, []batchCall, error) {
	if len(b.elems) == 0 {
		return dst, nil, errEmptyBatchCall
	}
	calls := make([]batchCall, 0, len(b.elems))
	var first uint64
	var idBuf [20]byte
	dst = append(dst, '[')
	for i, e := range b.elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		var idText []byte
		if !e.notify {
			n := seq.Add(1)
			if first == 0 {
				first = n
			}
			idText = strconv.AppendUint(idBuf[:0], n, 10)
			calls = append(calls, batchCall{e, n, newPending(first)})
		}
		var err error
		if dst, err = wire.AppendRequest(dst, idText, e.Method, e.Params, nil); err != nil {
			return dst, nil, err
		}
	}
	return append(dst, ']'), calls, nil
}

var errEmptyBatchCall = fmt.Errorf("jsonrpc: empty batch")

// wait waits for the result of every call and records it. It returns
// ctx's error if ctx ends first (results already there are still taken).
func wait(ctx context.Context, calls []batchCall, strict bool) error {
	for _, c := range calls {
		var r callResult
		select {
		case r = <-c.p.ch:
		default:
			select {
			case r = <-c.p.ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		pendingPool.Put(c.p) // nothing else can send on it now
		c.finish(r.result, r.err, strict)
	}
	return nil
}
