package statetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// MakeBroker returns a fresh broker whose subscriptions can each queue at
// least 1000 unread events; it registers with t.Cleanup whatever must be closed.
type MakeBroker func(t *testing.T) state.Broker

// TestBroker checks the Broker contract: each event once, in order, to
// every subscriber of its topic and no other; one order for concurrent
// publishers; Close; Next's context.
func TestBroker(t *testing.T, mk MakeBroker) {
	t.Run("Fanout", func(t *testing.T) { b := mk(t); testFanout(t, b, b) })
	t.Run("Concurrent", func(t *testing.T) { testBrokerConcurrent(t, mk(t)) })
	t.Run("Close", func(t *testing.T) { testBrokerClose(t, mk(t)) })
}

// TestSharedBroker checks that a and b, two handles on one broker (two
// instances), carry each other's events: subscribers on both receive the
// events published on both, each once, in one order.
func TestSharedBroker(t *testing.T, a, b state.Broker) { testFanout(t, a, b) }

func subscribe(t *testing.T, b state.Broker, topic string) state.Subscription {
	t.Helper()
	s, err := b.Subscribe(ctxOf(t), topic)
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", topic, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// receive reads n events from s, each within a few seconds.
func receive(t *testing.T, s state.Subscription, n int) []string {
	t.Helper()
	var got []string
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		data, err := s.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Next after %d events: %v", len(got), err)
		}
		got = append(got, string(data))
	}
	return got
}

// wantQuiet checks that s has no further event for a short while.
func wantQuiet(t *testing.T, s state.Subscription) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if data, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing more published: %q, %v; want the deadline", data, err)
	}
}

func publish(t *testing.T, b state.Broker, topic, data string) {
	t.Helper()
	if err := b.Publish(ctxOf(t), topic, []byte(data)); err != nil {
		t.Fatalf("Publish(%s): %v", topic, err)
	}
}

func testFanout(t *testing.T, a, b state.Broker) {
	const n = 50
	subs := []state.Subscription{subscribe(t, a, "t"), subscribe(t, b, "t"), subscribe(t, a, "t")}
	other := subscribe(t, b, "t.other")
	var want []string
	for i := range n {
		pub := []state.Broker{a, b}[i%2]
		want = append(want, fmt.Sprint("e", i))
		publish(t, pub, "t", want[i])
		if i%10 == 0 {
			publish(t, pub, "t.other", fmt.Sprint("o", i))
		}
	}
	for i, s := range subs {
		if got := receive(t, s, n); !slices.Equal(got, want) {
			t.Fatalf("subscriber %d received %v, want %v", i, got, want)
		}
		wantQuiet(t, s)
	}
	if got := receive(t, other, 5); got[0] != "o0" || got[4] != "o40" {
		t.Fatalf("the other topic's subscriber received %v", got)
	}
	wantQuiet(t, other)
}

func testBrokerConcurrent(t *testing.T, b state.Broker) {
	const writers, each = 4, 25
	subs := []state.Subscription{subscribe(t, b, "c"), subscribe(t, b, "c")}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := b.Publish(ctxOf(t), "c", fmt.Appendf(nil, "w%d-%03d", w, i)); err != nil {
					t.Errorf("Publish: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	first := receive(t, subs[0], writers*each)
	if second := receive(t, subs[1], writers*each); !slices.Equal(first, second) {
		t.Fatalf("two subscribers received different orders:\n%v\n%v", first, second)
	}
	last := map[byte]string{}
	for _, e := range first {
		if e <= last[e[1]] {
			t.Fatalf("writer %c's events out of order or twice: %s after %s", e[1], e, last[e[1]])
		}
		last[e[1]] = e
	}
}

func testBrokerClose(t *testing.T, b state.Broker) {
	s := subscribe(t, b, "x")
	kept := subscribe(t, b, "x")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	publish(t, b, "x", "after close")
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := s.Next(ctx); !errors.Is(err, state.ErrClosed) {
		t.Fatalf("Next after Close: %v, want ErrClosed", err)
	}
	if got := receive(t, kept, 1); got[0] != "after close" {
		t.Fatalf("the other subscriber received %v", got)
	}
}
