package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/seedhq/jsonrpc/internal/codec"
)

// ErrOverflow ends a subscription whose buffer overflowed: on the server
// under the Close policy, on the client when events arrive faster than
// they are taken. The root package sets it to its own
// (jsonrpc.ErrSubscriptionOverflow) in init.
var ErrOverflow = errors.New("jsonrpc: subscription buffer overflow")

// Registry routes the events of a client connection's subscriptions to
// their queues. Events are taken on the read goroutine, so they keep their
// order; an event whose id is not known yet (its subscribe call's answer
// was read, but the caller has not claimed the id) is held while a
// subscribe call is in flight.
type Registry struct {
	toError func(*ErrorObject) error

	mu      sync.Mutex
	methods map[string]*clientMethod
	closed  error
}

// ErrorObject is the "error" member of a notification that ends a
// subscription: a JSON-RPC error object.
type ErrorObject struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewRegistry returns an empty registry. toError gives the error a Queue
// reports for an ErrorObject.
func NewRegistry(toError func(*ErrorObject) error) *Registry {
	return &Registry{toError: toError, methods: make(map[string]*clientMethod)}
}

type clientMethod struct {
	subs    map[string]*Queue
	calls   int               // subscribe calls in flight
	early   map[string]*Queue // events for ids not yet claimed
	pending int               // the largest buffer of the calls in flight
}

// Expect announces a subscribe call in flight whose events come as
// notifications of method, to be held in up to buffer events until claimed.
func (r *Registry) Expect(method string, buffer int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	if m == nil {
		m = &clientMethod{subs: make(map[string]*Queue)}
		r.methods[method] = m
	}
	m.calls++
	m.pending = max(m.pending, buffer)
}

// ExpectDone ends what Expect announced: the call has returned (and its
// id is claimed, or it failed).
func (r *Registry) ExpectDone(method string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	m.calls--
	if m.calls == 0 {
		m.early, m.pending = nil, 0 // events for ids nobody claimed
	}
}

// Claim takes the events that arrived for id before its caller could claim
// it, and routes the next ones to its Queue, which holds up to buffer
// events. An event beyond them ends it with ErrOverflow and calls
// onOverflow, on the read goroutine.
func (r *Registry) Claim(method, id string, buffer int, onOverflow func()) *Queue {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	cs := m.early[id]
	delete(m.early, id)
	if cs == nil {
		cs = &Queue{wake: make(chan struct{}, 1)}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.method, cs.id, cs.buffer, cs.onOverflow = method, id, buffer, onOverflow
	switch {
	case errors.Is(cs.err, ErrOverflow):
		onOverflow() // it overflowed before it was claimed
	case r.closed != nil:
		cs.endLocked(r.closed, false)
	case !cs.ended:
		m.subs[id] = cs
	}
	return cs
}

// Forget stops routing events to cs.
func (r *Registry) Forget(cs *Queue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.methods[cs.method]; m != nil {
		delete(m.subs, cs.id)
	}
}

// CloseAll ends every subscription with err (the connection has ended), and
// those claimed later.
func (r *Registry) CloseAll(err error) {
	r.mu.Lock()
	r.closed = err
	var all []*Queue
	for _, m := range r.methods {
		for _, cs := range m.subs {
			all = append(all, cs)
		}
		m.subs = map[string]*Queue{}
	}
	r.mu.Unlock()
	for _, cs := range all {
		cs.Finish(err, false)
	}
}

// eventParams is the params object of a subscription notification.
type eventParams struct {
	Subscription string          `json:"subscription"`
	Result       json.RawMessage `json:"result"`
	Error        *ErrorObject    `json:"error"`
	Dropped      int64           `json:"dropped"`
}

// Take routes a notification of method with params, on the read
// goroutine; it reports whether it was an event of one of the
// subscriptions (or of one no longer held: it is dropped).
func (r *Registry) Take(method, params []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[string(method)]
	if m == nil {
		return false
	}
	var p eventParams
	if err := codec.UnmarshalResult(params, &p, false); err != nil || p.Subscription == "" {
		return false
	}
	cs := m.subs[p.Subscription]
	if cs == nil {
		if m.calls == 0 {
			return true // a subscription we no longer have: dropped
		}
		// Its subscribe call's answer was read; the caller claims the id next.
		if m.early == nil {
			m.early = make(map[string]*Queue)
		}
		cs = m.early[p.Subscription]
		if cs == nil {
			if len(m.early) >= 64 {
				return true
			}
			cs = &Queue{buffer: m.pending, wake: make(chan struct{}, 1)}
			m.early[p.Subscription] = cs
		}
	}
	if cs.add(&p, r.toError) {
		delete(m.subs, p.Subscription)
	}
	return true
}

// Queue holds one subscription's events on the client until they are taken.
type Queue struct {
	method, id string
	buffer     int
	onOverflow func()

	mu      sync.Mutex
	queue   []json.RawMessage
	wake    chan struct{}
	err     error
	ended   bool
	dropped int64
}

// add queues an event; it reports whether the subscription ended.
func (cs *Queue) add(p *eventParams, toError func(*ErrorObject) error) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ended {
		return true
	}
	cs.dropped += p.Dropped
	if p.Error != nil {
		cs.endLocked(toError(p.Error), false)
		return true
	}
	if cs.buffer > 0 && len(cs.queue) >= cs.buffer {
		cs.endLocked(ErrOverflow, false)
		if cs.onOverflow != nil {
			cs.onOverflow()
		}
		return true
	}
	cs.queue = append(cs.queue, append(json.RawMessage(nil), p.Result...))
	cs.signal()
	return false
}

func (cs *Queue) signal() {
	select {
	case cs.wake <- struct{}{}:
	default:
	}
}

// Finish ends the subscription with err, discarding the queued events
// when discard is set (else Next returns them first).
func (cs *Queue) Finish(err error, discard bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.endLocked(err, discard)
}

func (cs *Queue) endLocked(err error, discard bool) {
	if cs.ended {
		return
	}
	cs.ended, cs.err = true, err
	if discard {
		cs.queue = nil
	}
	cs.signal()
}

// Next waits for the next event; once the subscription has ended and its
// queued events are taken, it returns why it ended.
func (cs *Queue) Next(ctx context.Context) (json.RawMessage, error) {
	for {
		cs.mu.Lock()
		if len(cs.queue) > 0 {
			raw := cs.queue[0]
			cs.queue[0] = nil
			cs.queue = cs.queue[1:]
			if len(cs.queue) > 0 {
				cs.signal()
			}
			cs.mu.Unlock()
			return raw, nil
		}
		if cs.ended {
			err := cs.err
			cs.mu.Unlock()
			return nil, err
		}
		cs.mu.Unlock()
		select {
		case <-cs.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Err returns why the subscription ended (nil while it is live).
func (cs *Queue) Err() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.err
}

// Dropped returns how many events the server reported dropped.
func (cs *Queue) Dropped() int64 {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.dropped
}

// NextInto waits for the next event and decodes it into v, ignoring
// unknown members (events come from the server, which may add members).
// Once the subscription has ended and its queued events are taken, it
// returns the reason, as Next.
func (cs *Queue) NextInto(ctx context.Context, v any) error {
	raw, err := cs.Next(ctx)
	if err != nil {
		return err
	}
	if err := codec.UnmarshalResult(raw, v, false); err != nil {
		return errors.Join(errors.New("jsonrpc: cannot decode a subscription event"), err)
	}
	return nil
}
