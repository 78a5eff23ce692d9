package state_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
	"github.com/seedhq/jsonrpc/state/statetest"
)

func TestMemoryEventStore(t *testing.T) {
	statetest.TestEventStore(t, func(t *testing.T, lim state.Limits) state.EventStore {
		return state.NewMemoryEventStore(lim, nil)
	})
}

func TestMemoryKeyRing(t *testing.T) {
	statetest.TestKeyRing(t, func(t *testing.T, retain int) state.KeyRing {
		r, err := state.NewMemoryKeyRing(retain)
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
	r, _ := state.NewMemoryKeyRing(4)
	statetest.TestSharedKeyRing(t, r, r, time.Second)
}

// TestMemoryEventStoreClock expires events by the store's clock, not the
// wall's: at MaxAge exactly an event is gone, a tick before it is kept.
func TestMemoryEventStoreClock(t *testing.T) {
	now := time.Unix(1000, 0)
	s := state.NewMemoryEventStore(state.Limits{MaxAge: time.Minute}, func() time.Time { return now })
	ctx := context.Background()
	first, _ := s.Append(ctx, "a", []byte("1"))
	now = now.Add(30 * time.Second)
	second, _ := s.Append(ctx, "a", []byte("2"))
	now = now.Add(30*time.Second - 1)
	if ev, complete, _ := s.After(ctx, "a", 0); len(ev) != 2 || !complete {
		t.Fatalf("before MaxAge: %d events, complete %v", len(ev), complete)
	}
	now = now.Add(1)
	ev, complete, _ := s.After(ctx, "a", 0)
	if len(ev) != 1 || ev[0].Seq != second || complete {
		t.Fatalf("at MaxAge of the first: %+v, complete %v", ev, complete)
	}
	if _, complete, _ := s.After(ctx, "a", first); !complete {
		t.Fatal("After the expired seq: complete false")
	}
}

// TestMemoryKeyRingInitial keeps the keys given, newest first, and refuses
// a short one.
func TestMemoryKeyRingInitial(t *testing.T) {
	k := func(id string) state.Key { return state.Key{ID: id, Secret: []byte("0123456789abcdef" + id)} }
	r, err := state.NewMemoryKeyRing(2, k("new"), k("old"), k("older"))
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := r.Keys(context.Background())
	if len(keys) != 2 || keys[0].ID != "new" || keys[1].ID != "old" {
		t.Fatalf("Keys = %+v", keys)
	}
	if _, err := state.NewMemoryKeyRing(2, state.Key{ID: "x", Secret: []byte("short")}); err == nil {
		t.Fatal("a short initial key: no error")
	}
}

func TestMemorySessionStore(t *testing.T) {
	statetest.TestSessionStore(t, func(t *testing.T) state.SessionStore { return state.NewMemorySessionStore(nil) })
	s := state.NewMemorySessionStore(nil)
	statetest.TestSharedSessionStore(t, s, s)
}

func TestMemoryBroker(t *testing.T) {
	statetest.TestBroker(t, func(t *testing.T) state.Broker { return state.NewMemoryBroker(1000) })
	b := state.NewMemoryBroker(1000)
	statetest.TestSharedBroker(t, b, b)
}

// TestMemoryBrokerSlow ends a subscription that falls behind its bound,
// after the events it had queued.
func TestMemoryBrokerSlow(t *testing.T) {
	b := state.NewMemoryBroker(2)
	ctx := context.Background()
	s, _ := b.Subscribe(ctx, "t")
	for _, e := range []string{"1", "2", "3", "4"} {
		if err := b.Publish(ctx, "t", []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"1", "2"} {
		if got, err := s.Next(ctx); err != nil || string(got) != want {
			t.Fatalf("Next = %q, %v; want %s", got, err, want)
		}
	}
	if _, err := s.Next(ctx); !errors.Is(err, state.ErrSlowSubscriber) {
		t.Fatalf("Next past the bound: %v, want ErrSlowSubscriber", err)
	}
}
