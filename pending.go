package jsonrpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/wire"
)

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

	batch    []byte // a result's message when it was a batch reply (see sentBatch.whole)
	batchLen int    // and its number of elements
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
type pendingSet struct{ connrt.Calls[*pendingCall] }

// answer delivers the responses among elems (message data's elements) to
// their calls, and reports what matched none: how many responses, the first
// one's id, and an id-null error that answered nothing. A response goes to
// the call with its id; an id-null error (the peer could not read a message
// of ours) to the calls waiting when they all belong to one message (see
// connrt.Calls.Left); a batch reply's left-out calls get its id-null error,
// else ErrNoResponse.
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
		} else if p, g, ok := s.TakeID(raw); ok {
			group = g
			p.ch <- resultOf(data, e, batch, len(elems))
			continue
		}
		if unmatched++; unmatched == 1 {
			firstID = string(raw)
		}
	}
	left := s.Left(batch, group, nullErr != nil)
	r := callResult{err: ErrNoResponse}
	if len(left) > 0 && nullErr != nil {
		r, nullErr = callResult{err: nullErr}, nil // the id-null error answered them
	}
	for _, p := range left {
		p.ch <- r
	}
	return unmatched, firstID, nullErr
}

// resultOf is the result of the call that response e of data answers,
// from a message of elems elements (a batch reply, if batch).
func resultOf(data []byte, e *wire.Envelope, batch bool, elems int) callResult {
	r := outcome(data, e)
	switch {
	case r.err != nil: // an error's data may point into it: only a result's message goes back
	case !batch:
		r.msg = data
	default:
		r.batch, r.batchLen = data, elems
	}
	return r
}

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
func parseOurID(raw []byte) (uint64, bool) { return connrt.ParseID(raw) }

type batchCall struct {
	*BatchCall
	id uint64
	p  *pendingCall
}

// sentBatch is a client's batch in flight: its calls with their ids and
// records, and the records alone (for readFor). It is pooled: release it
// once the batch is done.
type sentBatch struct {
	calls []batchCall
	ps    []*pendingCall

	reply    []byte // the batch reply of the results noted (see whole)
	replyLen int    // its number of elements
	mixed    bool   // a result came otherwise, or a call failed
}

// note notes where the result of one of the calls came from.
func (sb *sentBatch) note(r callResult) {
	switch {
	case len(r.batch) == 0:
		sb.mixed = true
	case sb.reply == nil:
		sb.reply, sb.replyLen = r.batch, r.batchLen
	case &r.batch[0] != &sb.reply[0]:
		sb.mixed = true
	}
}

// whole returns the message that answered every call of the batch with a
// result and held nothing else (ids are unique), or nil: once the results
// are decoded, its reader may reuse its memory.
func (sb *sentBatch) whole() []byte {
	if sb.mixed || sb.replyLen != len(sb.calls) {
		return nil
	}
	return sb.reply
}

var sentBatchPool = sync.Pool{New: func() any { return new(sentBatch) }}

func (sb *sentBatch) records() []*pendingCall {
	sb.ps = sb.ps[:0]
	for _, w := range sb.calls {
		sb.ps = append(sb.ps, w.p)
	}
	return sb.ps
}

func (sb *sentBatch) release() {
	clear(sb.calls)
	clear(sb.ps)
	sb.reply, sb.replyLen, sb.mixed = nil, 0, false
	if cap(sb.calls) > 1024 {
		sb.calls, sb.ps = nil, nil // a huge batch's slices are not kept
	}
	sb.calls, sb.ps = sb.calls[:0], sb.ps[:0]
	sentBatchPool.Put(sb)
}

// encodeBatch appends b to dst as one batch message. Each call gets the next
// id of seq and a pending record whose group is the batch's first id.
func encodeBatch(dst []byte, b *Batch, seq *atomic.Uint64) ([]byte, *sentBatch, error) {
	if len(b.elems) == 0 {
		return dst, nil, errors.New("jsonrpc: empty batch") // JSON-RPC has none
	}
	sb := sentBatchPool.Get().(*sentBatch)
	sb.calls = slices.Grow(sb.calls[:0], len(b.elems))
	var group uint64
	var idBuf [20]byte
	sep := byte('[')
	for _, e := range b.elems {
		dst, sep = append(dst, sep), ','
		var id []byte
		if !e.notify {
			n := seq.Add(1)
			group = cmp.Or(group, n)
			id = strconv.AppendUint(idBuf[:0], n, 10)
			sb.calls = append(sb.calls, batchCall{e, n, newPending(group)})
		}
		var err error
		if dst, err = codec.AppendRequest(dst, id, e.Method, e.Params, nil); err != nil {
			sb.release()
			return dst, nil, err
		}
	}
	return append(dst, ']'), sb, nil
}

// wait waits for the result of every call and records it. It returns
// ctx's error if ctx ends first (results already there are still taken).
func wait(ctx context.Context, sb *sentBatch, strict bool) error {
	for _, w := range sb.calls {
		var r callResult
		select {
		case r = <-w.p.ch:
		default: // (ctx.Done only when a result is not there yet: it may make a channel)
			select {
			case r = <-w.p.ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		pendingPool.Put(w.p) // nothing else can send on it now
		w.finish(r.result, r.err, strict)
		sb.note(r)
	}
	return nil
}

// failUnparsed fails with ErrInvalidResponse (wrapping err) the call, or
// the batch, that the unparsable message data still shows it answers
// (wire.ResponseID). A last message cut short by the end of input is left
// to the connection's end.
func (c *Conn) failUnparsed(data []byte, err error) {
	if u, ok := c.ch.(interface{ Unterminated() bool }); ok && u.Unterminated() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending.Len() == 0 {
		return
	}
	raw, batch, ok := wire.ResponseID(data)
	if !ok {
		return
	}
	p, group, ok := c.pending.TakeID(raw)
	if !ok {
		return
	}
	r := callResult{err: fmt.Errorf("%w: the response to call %s does not parse: %w", ErrInvalidResponse, raw, err)}
	p.ch <- r
	if batch {
		for _, p := range c.pending.TakeGroup(group) {
			p.ch <- r
		}
	}
}
