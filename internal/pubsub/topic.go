package pubsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/state"
)

// RelayError ends the subscriptions of a topic whose events could not be
// relayed: the broker failed (unreachable: Err wraps its error) or this
// instance fell behind it (Err wraps state.ErrSlowSubscriber). Events
// published after the failure may not reach them, so they end, with this
// error in their last notification, rather than go on with a gap. Its
// message is meant for the client; the cause, for the server's log, is
// Unwrap's.
type RelayError struct {
	Subscribe bool // the subscribe call failed: no subscription was made
	Err       error
}

func (e *RelayError) Error() string {
	switch {
	case e.Subscribe:
		return "subscribe failed: the broker is unreachable; try again"
	case errors.Is(e.Err, state.ErrSlowSubscriber):
		return "subscription ended: the server fell behind the broker's events; subscribe again"
	}
	return "subscription ended: the broker failed; subscribe again"
}

func (e *RelayError) Unwrap() error { return e.Err }

// Fanout carries the events of a namespace's topics (kinds whose events
// are published, not made per subscription) to their subscriptions. Without
// a broker, Publish hands an event to this process's subscriptions itself,
// one Publish at a time (under Block it waits for room, as Sink.Send). With
// one, Publish gives the event to the broker, and each topic that has
// subscriptions here holds one broker subscription, a relay, whose events
// one goroutine hands to them in the broker's order; the relay is made by
// the first subscription and closed with the last. When it fails, every
// subscription it fed ends with a *RelayError (after the events it had), and
// the next subscription makes a new relay.
type Fanout struct {
	broker state.Broker
	prefix string // of the broker's topic names

	mu     sync.Mutex
	topics map[string]*topic
}

type topic struct {
	name   string                    // on the broker
	encode func(any) ([]byte, error) // an event of the topic's type
	join   sync.Mutex                // held while a relay is made (the broker's Subscribe)
	pub    sync.Mutex                // without a broker, held by Publish: one order

	mu    sync.Mutex
	relay *relay // feeding the topic's subscriptions; nil when none
}

// relay is the set of subscriptions one broker subscription feeds (without
// a broker, the topic's one set).
type relay struct {
	bs     state.Subscription // nil without a broker
	cancel context.CancelFunc // stops the relay's goroutine
	subs   []*Sub             // copied on write, under topic.mu
}

// NewFanout returns the fan-out of a namespace's topics through b (nil:
// this process only); prefix starts the name of each topic on b.
func NewFanout(b state.Broker, prefix string) *Fanout {
	return &Fanout{broker: b, prefix: prefix, topics: map[string]*topic{}}
}

// AddTopic adds the topic kind, whose events are Es.
func AddTopic[E any](f *Fanout, kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.topics[kind] = &topic{name: f.prefix + kind, encode: func(ev any) ([]byte, error) {
		if e, ok := ev.(E); ok {
			return codec.Marshal(e)
		}
		return nil, fmt.Errorf("jsonrpc: Publish(%q): the event is a %T, not a %v", kind, ev, reflect.TypeFor[E]())
	}}
}

func (f *Fanout) topic(kind string) *topic {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.topics[kind]
}

// Publish sends event to every subscription of kind: with a broker, once
// the broker accepted it; without, once each subscription here has taken
// it.
func (f *Fanout) Publish(ctx context.Context, kind string, event any) error {
	t := f.topic(kind)
	if t == nil {
		return fmt.Errorf("jsonrpc: Publish: no topic %q (AddTopic) for %s", kind, strings.TrimSpace(f.prefix))
	}
	raw, err := t.encode(event)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.broker != nil {
		return f.broker.Publish(ctx, t.name, raw)
	}
	t.pub.Lock()
	defer t.pub.Unlock()
	t.mu.Lock()
	var subs []*Sub
	if t.relay != nil {
		subs = t.relay.subs
	}
	t.mu.Unlock()
	for _, s := range subs {
		s.Push(raw)
	}
	return nil
}

// Join makes s a subscription of kind: it receives the events published
// after Join returned. With a broker, the first subscription of kind here
// subscribes to the broker (a failure is a *RelayError with Subscribe set).
// A subscription leaves when it ends (Leave).
func (f *Fanout) Join(ctx context.Context, kind string, s *Sub) error {
	t := f.topic(kind)
	s.topic.Store(t)
	t.join.Lock()
	t.mu.Lock()
	if t.relay == nil {
		if err := f.startRelay(ctx, t); err != nil {
			t.mu.Unlock()
			t.join.Unlock()
			return err
		}
	}
	if r := t.relay; !s.left {
		r.subs = append(slices.Clip(r.subs), s)
		s.relay = r
	} else {
		t.closeIdle(r)
	}
	t.mu.Unlock()
	t.join.Unlock()
	if s.isEnded() { // it ended before it joined: its Leave may have found nothing to take out
		f.Leave(s)
	}
	return nil
}

// startRelay makes t's relay; t.mu and t.join are held, and t.mu is let go
// while the broker subscribes.
func (f *Fanout) startRelay(ctx context.Context, t *topic) error {
	r := &relay{cancel: func() {}}
	if f.broker != nil {
		t.mu.Unlock()
		bs, err := f.broker.Subscribe(ctx, t.name)
		t.mu.Lock()
		if err != nil {
			return &RelayError{Subscribe: true, Err: err}
		}
		var rctx context.Context
		rctx, r.cancel = context.WithCancel(context.Background())
		r.bs = bs
		go f.run(rctx, t, r)
	}
	t.relay = r
	return nil
}

// Leave takes s out of its topic, if it joined one; the last subscription
// of a relay closes it. It is called once s has ended, with its Outbox's
// lock held (the lock order is the Outbox's, then the topic's).
func (f *Fanout) Leave(s *Sub) {
	t := s.topic.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s.left = true
	r := s.relay
	if r == nil {
		return
	}
	s.relay = nil
	if i := slices.Index(r.subs, s); i >= 0 {
		r.subs = slices.Delete(slices.Clone(r.subs), i, i+1)
	}
	t.closeIdle(r)
}

// closeIdle closes r, t's relay, when it feeds no subscription; t.mu is held.
func (t *topic) closeIdle(r *relay) {
	if len(r.subs) == 0 && r.bs != nil && t.relay == r {
		t.relay = nil
		r.cancel()
	}
}

// run hands the events of r's broker subscription to its subscriptions, in
// order, until r is closed (ctx ends) or fails.
func (f *Fanout) run(ctx context.Context, t *topic, r *relay) {
	defer r.bs.Close()
	for {
		data, err := r.bs.Next(ctx)
		if err == nil && !jsontext.Value(data).IsValid() {
			err = errors.New("jsonrpc: the broker carried an event that is not JSON")
		}
		if ctx.Err() != nil {
			return
		}
		t.mu.Lock()
		subs := r.subs
		if err != nil {
			r.subs = nil
			if t.relay == r {
				t.relay = nil
			}
		}
		t.mu.Unlock()
		if err != nil {
			slog.Warn("jsonrpc: the broker subscription of a topic failed; its subscriptions end", "topic", t.name, "subscriptions", len(subs), "err", err)
			for _, s := range subs {
				s.End(&RelayError{Err: err}, true)
			}
			return
		}
		for _, s := range subs {
			s.Push(data)
		}
	}
}
