package jsonrpc_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// breakableBroker is a real broker whose subscriptions can be failed at
// once, as a broker that lost its backing service fails them.
type breakableBroker struct {
	state.Broker
	mu   sync.Mutex
	subs []*breakableSub
}

type breakableSub struct {
	state.Subscription
	broken chan struct{}
	once   sync.Once
}

func (b *breakableBroker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	s, err := b.Broker.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	bs := &breakableSub{Subscription: s, broken: make(chan struct{})}
	b.mu.Lock()
	b.subs = append(b.subs, bs)
	b.mu.Unlock()
	return bs, nil
}

func (b *breakableBroker) breakAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		s.once.Do(func() { close(s.broken) })
	}
	b.subs = nil
}

var errBrokerLost = errors.New("broker connection lost")

func (s *breakableSub) Next(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-s.broken:
			cancel(errBrokerLost)
		case <-ctx.Done():
		}
	}()
	b, err := s.Subscription.Next(ctx)
	if context.Cause(ctx) == errBrokerLost {
		return nil, errBrokerLost
	}
	return b, err
}

// A Resubscription whose subscription the server ended for its broker's
// failure (CodeSubscriptionBroker) subscribes again on the same
// connection: Next reports a *SubscriptionGap naming the cause, then the
// new subscription's events.
func TestResubscribeAfterBrokerEnded(t *testing.T) {
	b := &breakableBroker{Broker: state.NewMemoryBroker(64)}
	in := newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, "tcp://"+in.addr, jsonrpc.WithReconnect())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := jsonrpc.Resubscribe[int](ctx, c.(*jsonrpc.ReconnectClient), jsonrpc.SubscribeOptions{Namespace: "test"}, "news")
	if err != nil {
		t.Fatal(err)
	}
	first := sub.ID()
	if err := in.subs.Publish(ctx, "news", 1); err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Next(ctx); ev != 1 || err != nil {
		t.Fatalf("first event: %v, %v", ev, err)
	}
	b.breakAll()
	_, err = sub.Next(ctx)
	var gap *jsonrpc.SubscriptionGap
	var e *jsonrpc.Error
	if !errors.As(err, &gap) || !errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker || gap.NewID == first {
		t.Fatalf("after the broker failed: %v, want a *SubscriptionGap caused by -32013 with a new id", err)
	}
	// Published until the new subscription sees one: it was made on the
	// same, live connection.
	for i := 2; ; i++ {
		if err := in.subs.Publish(ctx, "news", i); err != nil {
			t.Fatal(err)
		}
		nctx, ncancel := context.WithTimeout(ctx, 200*time.Millisecond)
		ev, err := sub.Next(nctx)
		ncancel()
		if err == nil {
			if ev != i || sub.ID() != gap.NewID {
				t.Fatalf("event %d on %s, want %d on %s", ev, sub.ID(), i, gap.NewID)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no event on the new subscription: %v", err)
		}
	}
}
