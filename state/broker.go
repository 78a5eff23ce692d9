package state

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// ErrSlowSubscriber ends a subscription whose reader fell more than its
// bound of events behind: Next returns the events queued before, then
// this error, and no event after.
var ErrSlowSubscriber = errors.New("jsonrpc/state: the subscriber fell too far behind; subscribe again")

// Broker carries events on topics to every subscriber of every instance
// sharing it. A subscription receives each event published on its topic
// after Subscribe returned once, in the topic's publish order: one order,
// the same for every subscriber, that keeps the order of the Publishes of
// any one caller. Publish returns once the broker has accepted the event.
type Broker interface {
	Publish(ctx context.Context, topic string, data []byte) error
	Subscribe(ctx context.Context, topic string) (Subscription, error)
}

// Subscription is one subscriber's feed of a topic.
type Subscription interface {
	// Next returns the next event, waiting for it until ctx ends;
	// ErrClosed after Close, ErrSlowSubscriber when the reader fell behind.
	// Any error but ctx's ends the subscription (a shared broker that lost
	// its backing service returns one rather than wait for it): events
	// published after may not reach it, and the caller subscribes again.
	Next(ctx context.Context) ([]byte, error)
	// Close ends the subscription.
	Close() error
}

// MemoryBroker is the in-memory Broker of one process. Each subscription
// queues at most its bound of unread events (NewMemoryBroker).
type MemoryBroker struct {
	pending int

	mu   sync.Mutex
	subs map[string][]*memSub
}

// NewMemoryBroker returns a broker whose subscriptions queue at most
// pending unread events (at least 1) before they end with
// ErrSlowSubscriber.
func NewMemoryBroker(pending int) *MemoryBroker {
	return &MemoryBroker{pending: max(1, pending), subs: map[string][]*memSub{}}
}

type memSub struct {
	b     *MemoryBroker
	topic string
	ready chan struct{} // has a value when queue or err changed

	mu    sync.Mutex
	queue [][]byte
	err   error
}

// Publish implements Broker.
func (b *MemoryBroker) Publish(ctx context.Context, topic string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data = slices.Clone(data)
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs[topic] {
		s.push(data, b.pending)
	}
	return nil
}

// Subscribe implements Broker.
func (b *MemoryBroker) Subscribe(ctx context.Context, topic string) (Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &memSub{b: b, topic: topic, ready: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[topic] = append(b.subs[topic], s)
	return s, nil
}

func (s *memSub) push(data []byte, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if len(s.queue) >= limit {
		s.err = ErrSlowSubscriber // after the queued events
	} else {
		s.queue = append(s.queue, data)
	}
	s.signal()
}

func (s *memSub) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next implements Subscription.
func (s *memSub) Next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			data := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return data, nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close implements Subscription.
func (s *memSub) Close() error {
	s.b.mu.Lock()
	s.b.subs[s.topic] = slices.DeleteFunc(s.b.subs[s.topic], func(o *memSub) bool { return o == s })
	if len(s.b.subs[s.topic]) == 0 {
		delete(s.b.subs, s.topic)
	}
	s.b.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err, s.queue = ErrClosed, nil
	s.signal()
	return nil
}
