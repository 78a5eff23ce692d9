// Package statetest checks implementations of the interfaces of package
// state against their contracts, as golang.org/x/net/nettest.TestConn
// checks a net.Conn: an implementation's test calls TestEventStore and
// TestKeyRing with a function that makes a fresh, empty store.
//
// The checks use real time only where a store cannot take a clock (the
// MaxAge check waits about a second at most) and bound every wait.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// MakeEventStore returns a fresh, empty store bounded by lim;
// it registers with t.Cleanup whatever must be closed.
type MakeEventStore func(t *testing.T, lim state.Limits) state.EventStore

// TestEventStore checks the EventStore contract: order, reads after a
// seq, each bound, unknown streams and seqs, copies, concurrent appends,
// and Wait when the store is a state.Follower.
func TestEventStore(t *testing.T, mk MakeEventStore) {
	t.Run("Order", func(t *testing.T) { testOrder(t, mk) })
	t.Run("After", func(t *testing.T) { testAfter(t, mk) })
	t.Run("Unknown", func(t *testing.T) { testUnknown(t, mk) })
	t.Run("Copies", func(t *testing.T) { testCopies(t, mk) })
	t.Run("MaxEvents", func(t *testing.T) { testMaxEvents(t, mk) })
	t.Run("MaxBytes", func(t *testing.T) { testMaxBytes(t, mk) })
	t.Run("MaxAge", func(t *testing.T) { testMaxAge(t, mk) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, mk) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, mk) })
	t.Run("Wait", func(t *testing.T) { testWait(t, mk) })
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func appendN(t *testing.T, s state.EventStore, stream string, n int, data func(i int) []byte) []uint64 {
	t.Helper()
	seqs := make([]uint64, n)
	for i := range n {
		seq, err := s.Append(ctxOf(t), stream, data(i))
		if err != nil {
			t.Fatalf("Append(%q) #%d: %v", stream, i, err)
		}
		if i > 0 && seq <= seqs[i-1] {
			t.Fatalf("Append(%q) #%d: seq %d after %d, want increasing", stream, i, seq, seqs[i-1])
		}
		seqs[i] = seq
	}
	return seqs
}

func named(prefix string) func(int) []byte {
	return func(i int) []byte { return fmt.Appendf(nil, "%s-%d", prefix, i) }
}

func after(t *testing.T, s state.EventStore, stream string, seq uint64) ([]state.Event, bool) {
	t.Helper()
	ev, complete, err := s.After(ctxOf(t), stream, seq)
	if err != nil {
		t.Fatalf("After(%q, %d): %v", stream, seq, err)
	}
	return ev, complete
}

// wantEvents checks that got are the events seqs[i:] with data name(i).
func wantEvents(t *testing.T, got []state.Event, seqs []uint64, from int, name func(int) []byte) {
	t.Helper()
	if len(got) != len(seqs)-from {
		t.Fatalf("got %d events, want %d (seqs %v from %d)", len(got), len(seqs)-from, seqs, from)
	}
	for j, e := range got {
		i := from + j
		if e.Seq != seqs[i] || !bytes.Equal(e.Data, name(i)) {
			t.Fatalf("event %d = {%d %q}, want {%d %q}", j, e.Seq, e.Data, seqs[i], name(i))
		}
	}
}

func testOrder(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{})
	var a, b []uint64
	for i := range 10 {
		a = append(a, appendN(t, s, "a", 1, func(int) []byte { return named("a")(i) })...)
		b = append(b, appendN(t, s, "b.x y/*>", 1, func(int) []byte { return named("b")(i) })...)
	}
	for _, seqs := range [][]uint64{a, b} {
		if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
			t.Fatalf("seqs %v: want strictly increasing", seqs)
		}
	}
	got, complete := after(t, s, "a", 0)
	wantEvents(t, got, a, 0, named("a"))
	if !complete {
		t.Error("After(a, 0) with nothing evicted: complete false")
	}
	got, _ = after(t, s, "b.x y/*>", 0)
	wantEvents(t, got, b, 0, named("b"))
}

func testAfter(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{})
	seqs := appendN(t, s, "a", 10, named("a"))
	for _, from := range []int{0, 4, 9} {
		got, complete := after(t, s, "a", seqs[from])
		wantEvents(t, got, seqs, from+1, named("a"))
		if !complete {
			t.Errorf("After(a, seqs[%d]): complete false", from)
		}
	}
}

func testUnknown(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{})
	if got, _ := after(t, s, "never", 0); len(got) != 0 {
		t.Errorf("After on a stream never appended to: %d events", len(got))
	}
	seqs := appendN(t, s, "a", 3, named("a"))
	got, complete := after(t, s, "a", seqs[2]+1000)
	if len(got) != 0 || !complete {
		t.Errorf("After(a, a seq past the last) = %d events, complete %v; want none, true", len(got), complete)
	}
}

func testCopies(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{})
	buf := []byte("original")
	seq, err := s.Append(ctxOf(t), "a", buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "CHANGED!")
	got, _ := after(t, s, "a", 0)
	if len(got) != 1 || got[0].Seq != seq || string(got[0].Data) != "original" {
		t.Fatalf("After after the caller reused its buffer: %+v", got)
	}
}

func testMaxEvents(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{MaxEvents: 5})
	seqs := appendN(t, s, "a", 8, named("a"))
	got, complete := after(t, s, "a", 0)
	wantEvents(t, got, seqs, 3, named("a"))
	if complete {
		t.Error("After(a, 0) with 3 events evicted: complete true")
	}
	if _, complete := after(t, s, "a", seqs[1]); complete {
		t.Error("After(a, seqs[1]) with seqs[2] evicted: complete true")
	}
	got, complete = after(t, s, "a", seqs[2])
	wantEvents(t, got, seqs, 3, named("a"))
	if !complete {
		t.Error("After(a, seqs[2]), the last evicted: complete false")
	}
}

func testMaxBytes(t *testing.T, mk MakeEventStore) {
	const limit, size, n = 4096, 256, 32
	s := mk(t, state.Limits{MaxBytes: limit})
	data := func(i int) []byte { return append(named("a")(i), bytes.Repeat([]byte{'.'}, size)...)[:size] }
	seqs := appendN(t, s, "a", n, data)
	got, complete := after(t, s, "a", 0)
	if len(got) == 0 || len(got) > limit/size {
		t.Fatalf("%d events of %d bytes kept under MaxBytes %d", len(got), size, limit)
	}
	wantEvents(t, got, seqs, n-len(got), data)
	if complete {
		t.Error("After(a, 0) with events evicted by MaxBytes: complete true")
	}
}

func testMaxAge(t *testing.T, mk MakeEventStore) {
	const age = 300 * time.Millisecond
	s := mk(t, state.Limits{MaxAge: age})
	old := appendN(t, s, "a", 2, named("old"))
	deadline := time.Now().Add(age + 3*time.Second)
	for {
		got, _ := after(t, s, "a", 0)
		if len(got) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events still kept %v after MaxAge %v", time.Since(deadline.Add(-3*time.Second-age)), age)
		}
		time.Sleep(50 * time.Millisecond)
	}
	fresh := appendN(t, s, "a", 1, named("new"))
	got, complete := after(t, s, "a", 0)
	wantEvents(t, got, fresh, 0, named("new"))
	if complete {
		t.Error("After(a, 0) with events expired: complete true")
	}
	if _, complete := after(t, s, "a", old[1]); !complete {
		t.Error("After(a, the last expired seq): complete false")
	}
}

func testConcurrent(t *testing.T, mk MakeEventStore) {
	const writers, each = 8, 40
	s := mk(t, state.Limits{})
	type rec struct {
		seq  uint64
		data string
	}
	recs := make([][]rec, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				data := fmt.Sprintf("w%d-%d", w, i)
				seq, err := s.Append(ctxOf(t), "c", []byte(data))
				if err != nil {
					t.Errorf("Append: %v", err)
					return
				}
				recs[w] = append(recs[w], rec{seq, data})
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	got, complete := after(t, s, "c", 0)
	if len(got) != writers*each || !complete {
		t.Fatalf("After: %d events, complete %v; want %d, true", len(got), complete, writers*each)
	}
	bySeq := map[uint64]string{}
	for i, e := range got {
		if i > 0 && e.Seq <= got[i-1].Seq {
			t.Fatalf("event %d seq %d after %d", i, e.Seq, got[i-1].Seq)
		}
		bySeq[e.Seq] = string(e.Data)
	}
	for _, rs := range recs {
		for i, r := range rs {
			if bySeq[r.seq] != r.data {
				t.Fatalf("seq %d holds %q, Append gave it for %q", r.seq, bySeq[r.seq], r.data)
			}
			if i > 0 && r.seq <= rs[i-1].seq {
				t.Fatalf("one writer's seqs not increasing: %d after %d", r.seq, rs[i-1].seq)
			}
		}
	}
}

func testCanceled(t *testing.T, mk MakeEventStore) {
	s := mk(t, state.Limits{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Append(ctx, "a", []byte("x")); err == nil {
		t.Error("Append with a canceled context: no error")
	}
	if _, _, err := s.After(ctx, "a", 0); err == nil {
		t.Error("After with a canceled context: no error")
	}
}

func testWait(t *testing.T, mk MakeEventStore) {
	s, ok := mk(t, state.Limits{}).(state.Follower)
	if !ok {
		t.Skip("not a state.Follower")
	}
	seqs := appendN(t, s, "a", 2, named("a"))
	waitFor := func(stream string, seq uint64, d time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		return s.Wait(ctx, stream, seq)
	}
	if err := waitFor("a", seqs[0], time.Second); err != nil {
		t.Fatalf("Wait with an event after seq stored: %v", err)
	}
	start := time.Now()
	err := waitFor("a", seqs[1], 200*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("Wait with nothing after seq: %v after %v; want the deadline", err, time.Since(start))
	}
	done := make(chan error, 1)
	go func() { done <- waitFor("a", seqs[1], 10*time.Second) }()
	time.Sleep(50 * time.Millisecond)
	appendN(t, s, "b", 1, named("b"))       // another stream: Wait goes on
	appendN(t, s, "a", 1, named("a-later")) // this one: Wait returns
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait for the next event: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return within 5s of the event it waited for")
	}
	last := appendN(t, s, "a", 1, named("a-last"))[0]
	if err := waitFor("a", last+1000, 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait after a seq past the last: %v; want the deadline", err)
	}
}

// MakeKeyRing returns a fresh, empty ring keeping retain keys;
// it registers with t.Cleanup whatever must be closed.
type MakeKeyRing func(t *testing.T, retain int) state.KeyRing

// TestKeyRing checks the KeyRing contract: order, retention, refusals,
// removal, concurrent rotations.
func TestKeyRing(t *testing.T, mk MakeKeyRing) {
	t.Run("Rotate", func(t *testing.T) { testRotate(t, mk) })
	t.Run("Concurrent", func(t *testing.T) { testRotateConcurrent(t, mk) })
}

func key(id string) state.Key {
	return state.Key{ID: id, Secret: []byte("secret-of-" + id + "-0123456789")}
}

func wantKeys(t *testing.T, r state.KeyRing, ids ...string) {
	t.Helper()
	keys, err := r.Keys(ctxOf(t))
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.ID)
		if !bytes.Equal(k.Secret, key(k.ID).Secret) {
			t.Errorf("key %s: secret %q", k.ID, k.Secret)
		}
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("Keys = %v, want %v", got, ids)
	}
}

func testRotate(t *testing.T, mk MakeKeyRing) {
	r := mk(t, 3)
	ctx := ctxOf(t)
	wantKeys(t, r)
	if err := r.Rotate(ctx, state.Key{ID: "short", Secret: []byte("15 bytes secret")}); !errors.Is(err, state.ErrKeyShort) {
		t.Errorf("Rotate with a short secret: %v, want ErrKeyShort", err)
	}
	if err := r.Rotate(ctx, state.Key{Secret: key("x").Secret}); !errors.Is(err, state.ErrKeyShort) {
		t.Errorf("Rotate with no id: %v, want ErrKeyShort", err)
	}
	for _, id := range []string{"k1", "k2"} {
		if err := r.Rotate(ctx, key(id)); err != nil {
			t.Fatalf("Rotate(%s): %v", id, err)
		}
	}
	wantKeys(t, r, "k2", "k1")
	if err := r.Rotate(ctx, key("k1")); !errors.Is(err, state.ErrKeyExists) {
		t.Errorf("Rotate of a held id: %v, want ErrKeyExists", err)
	}
	for _, id := range []string{"k3", "k4"} {
		if err := r.Rotate(ctx, key(id)); err != nil {
			t.Fatalf("Rotate(%s): %v", id, err)
		}
	}
	wantKeys(t, r, "k4", "k3", "k2")
	if err := r.Remove(ctx, "k3"); err != nil {
		t.Fatalf("Remove(k3): %v", err)
	}
	wantKeys(t, r, "k4", "k2")
	if err := r.Remove(ctx, "k3"); !errors.Is(err, state.ErrNoKey) {
		t.Errorf("Remove of a dropped id: %v, want ErrNoKey", err)
	}
}

func testRotateConcurrent(t *testing.T, mk MakeKeyRing) {
	const n = 8
	r := mk(t, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := r.Rotate(ctxOf(t), key(fmt.Sprint("c", i))); err != nil {
				t.Errorf("Rotate: %v", err)
			}
		})
	}
	wg.Wait()
	keys, err := r.Keys(ctxOf(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, k := range keys {
		ids[k.ID] = true
	}
	if len(keys) != n || len(ids) != n {
		t.Fatalf("after %d concurrent rotations: %d keys (%d distinct), want %d", n, len(keys), len(ids), n)
	}
}

// TestSharedKeyRing checks that a rotation and a removal through ring a are
// seen through ring b, another handle on the same keys (another instance),
// within within.
func TestSharedKeyRing(t *testing.T, a, b state.KeyRing, within time.Duration) {
	ctx := ctxOf(t)
	for _, step := range []struct {
		do   func() error
		want string
	}{
		{func() error { return a.Rotate(ctx, key("s1")) }, "s1"},
		{func() error { return a.Rotate(ctx, key("s2")) }, "s2"},
		{func() error { return a.Remove(ctx, "s2") }, "s1"},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			keys, err := b.Keys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) > 0 && keys[0].ID == step.want {
				break
			}
			if time.Since(start) > within {
				t.Fatalf("the other ring's newest key is not %s after %v", step.want, within)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
