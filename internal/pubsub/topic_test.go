package pubsub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// countingBroker is a real broker that counts its open subscriptions and
// can make them fail.
type countingBroker struct {
	state.Broker
	open atomic.Int64
	mu   sync.Mutex
	subs []*countedSub
}

type countedSub struct {
	state.Subscription
	b      *countingBroker
	once   sync.Once
	failed chan error
}

func (b *countingBroker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	s, err := b.Broker.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	b.open.Add(1)
	c := &countedSub{Subscription: s, b: b, failed: make(chan error, 1)}
	b.mu.Lock()
	b.subs = append(b.subs, c)
	b.mu.Unlock()
	return c, nil
}

func (s *countedSub) Next(ctx context.Context) ([]byte, error) {
	select {
	case err := <-s.failed:
		return nil, err
	default:
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case err := <-s.failed:
			s.failed <- err
			cancel()
		case <-ctx.Done():
		}
	}()
	data, err := s.Subscription.Next(ctx)
	select {
	case err := <-s.failed:
		return nil, err
	default:
	}
	return data, err
}

func (s *countedSub) Close() error {
	s.once.Do(func() { s.b.open.Add(-1) })
	return s.Subscription.Close()
}

// failAll makes every open subscription's Next fail with err.
func (b *countingBroker) failAll(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		s.failed <- err
	}
	b.subs = nil
}

// member is one subscription of a topic, recording what it is sent.
type member struct {
	Sub
	r *recorder
}

func join(t *testing.T, f *Fanout, policy Policy, buffer int) *member {
	t.Helper()
	m := &member{r: newRecorder()}
	m.Start(t.Context(), "ns_subscription", buffer, policy, fanRecorder{m.r, f, &m.Sub})
	if err := f.Join(t.Context(), "news", &m.Sub); err != nil {
		t.Fatal(err)
	}
	m.Ready()
	t.Cleanup(func() { m.End(nil, false) })
	return m
}

// fanRecorder leaves the topic when its subscription ends, as the root's
// subscription does.
type fanRecorder struct {
	*recorder
	f   *Fanout
	sub *Sub
}

func (r fanRecorder) Ended(err error) { r.recorder.Ended(err); r.f.Leave(r.sub) }

// results returns the events of the messages sent, and the error last.
func results(msgs []string) []string {
	var out []string
	for _, m := range msgs {
		_, after, _ := strings.Cut(m, `,"result":`)
		if after == "" {
			_, after, _ = strings.Cut(m, `,"error":`)
		}
		out = append(out, strings.TrimSuffix(after, "}}"))
	}
	return out
}

func newFanout(b state.Broker) *Fanout {
	f := NewFanout(b, "ns_subscribe ")
	AddTopic[int](f, "news")
	return f
}

func publishN(t *testing.T, fs []*Fanout, n int) []string {
	t.Helper()
	var want []string
	for i := range n {
		if err := fs[i%len(fs)].Publish(t.Context(), "news", i); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(i))
	}
	return want
}

// Without a broker, every subscription receives each event once, in the
// order published; one that left receives nothing more.
func TestFanoutLocal(t *testing.T) {
	f := newFanout(nil)
	a, b := join(t, f, Block, 100), join(t, f, DropOldest, 100)
	want := publishN(t, []*Fanout{f}, 20)
	for _, m := range []*member{a, b} {
		if got := results(m.r.waitSent(t, 20)); !slices.Equal(got, want) {
			t.Fatalf("received %v, want %v", got, want)
		}
	}
	b.End(nil, false)
	publishN(t, []*Fanout{f}, 1)
	if got := a.r.waitSent(t, 1); len(got) != 21 || len(b.r.sent) != 20 {
		t.Fatalf("after b left: a has %d, b %d messages", len(got), len(b.r.sent))
	}
	if err := f.Publish(t.Context(), "news", "not an int"); err == nil || !strings.Contains(err.Error(), "not a int") {
		t.Fatalf("Publish of a string to an int topic: %v", err)
	}
	if err := f.Publish(t.Context(), "other", 1); err == nil {
		t.Fatal("Publish to a topic never added: no error")
	}
}

// Two fan-outs sharing a broker (two instances): each relays the events
// published on either to its subscriptions, with one broker subscription
// while it has subscriptions and none after.
func TestFanoutBroker(t *testing.T) {
	b := &countingBroker{Broker: state.NewMemoryBroker(1000)}
	f1, f2 := newFanout(b), newFanout(b)
	members := []*member{join(t, f1, Block, 100), join(t, f1, Block, 100), join(t, f2, Block, 100)}
	if n := b.open.Load(); n != 2 {
		t.Fatalf("%d broker subscriptions for two instances", n)
	}
	want := publishN(t, []*Fanout{f1, f2}, 30)
	for i, m := range members {
		if got := results(m.r.waitSent(t, 30)); !slices.Equal(got, want) {
			t.Fatalf("member %d received %v, want %v", i, got, want)
		}
	}
	for _, m := range members {
		m.End(nil, false)
	}
	waitFor(t, func() bool { return b.open.Load() == 0 }, "the relays to close")
	m := join(t, f1, Block, 100) // a relay again
	publishN(t, []*Fanout{f2}, 1)
	if got := results(m.r.waitSent(t, 1)); got[0] != "0" {
		t.Fatalf("after a new relay: %v", got)
	}
}

// A failed broker subscription ends the subscriptions it fed, with a
// RelayError after the events they had; the next one relays again.
func TestFanoutBrokerFails(t *testing.T) {
	b := &countingBroker{Broker: state.NewMemoryBroker(1000)}
	f := newFanout(b)
	a := join(t, f, Block, 100)
	publishN(t, []*Fanout{f}, 1)
	a.r.waitSent(t, 1)
	down := errors.New("broker down")
	b.failAll(down)
	got := results(a.r.waitSent(t, 1))
	if got[1] != `{"code":1,"message":"subscription ended: the broker failed; subscribe again"}` {
		t.Fatalf("last message %q", got[1])
	}
	a.r.mu.Lock()
	var re *RelayError
	if len(a.r.ended) != 1 || !errors.As(a.r.ended[0], &re) || !errors.Is(re, down) {
		t.Fatalf("ended with %v", a.r.ended)
	}
	a.r.mu.Unlock()
	waitFor(t, func() bool { return b.open.Load() == 0 }, "the failed relay to close")
	c := join(t, f, Block, 100)
	publishN(t, []*Fanout{f}, 1)
	c.r.waitSent(t, 1)
}

// Under Block, a subscription that cannot send holds the relay back; the
// broker's bound then ends every subscription of the relay with a
// RelayError wrapping ErrSlowSubscriber, after the events relayed before.
func TestFanoutSlowRelay(t *testing.T) {
	f := newFanout(state.NewMemoryBroker(3))
	stuck, fast := join(t, f, Block, 1), join(t, f, Block, 100)
	release := make(chan struct{})
	stuck.r.mu.Lock() // its Send waits for the lock: the relay blocks on it
	go func() { <-release; stuck.r.mu.Unlock() }()
	publishN(t, []*Fanout{f}, 20)
	close(release)
	msgs := results(fast.r.waitSent(t, 1))
	for !strings.Contains(msgs[len(msgs)-1], "fell behind") {
		if len(msgs) > 20 {
			t.Fatalf("no end after the broker's bound: %v", msgs)
		}
		msgs = results(fast.r.waitSent(t, 1))
	}
	if len(msgs) > 10 {
		t.Fatalf("%d messages: more than the buffers could hold before the end", len(msgs))
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
