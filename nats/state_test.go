package nats_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	jnats "github.com/seedhq/jsonrpc/nats"
	"github.com/seedhq/jsonrpc/state"
	"github.com/seedhq/jsonrpc/state/statetest"
)

// runJetStream starts an embedded NATS server with JetStream, its store
// in a temporary directory.
func runJetStream(t testing.TB) *natsserver.Server {
	dir := t.TempDir()
	return runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir })
}

// jsConn connects to ns and returns its JetStream context; the test's
// cleanup closes the connection.
func jsConn(t testing.TB, ns *natsserver.Server, opts ...natsgo.Option) jetstream.JetStream {
	t.Helper()
	nc, err := natsgo.Connect(ns.ClientURL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

var storeSeq atomic.Int64

func newEventStore(t testing.TB, js jetstream.JetStream, lim state.Limits) *jnats.EventStore {
	t.Helper()
	n := storeSeq.Add(1)
	s, err := jnats.NewEventStore(t.Context(), js, jnats.EventStoreConfig{
		Stream: fmt.Sprint("EVENTS_", n), Subject: fmt.Sprint("ev", n), Limits: lim,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJetStreamEventStore(t *testing.T) {
	js := jsConn(t, runJetStream(t))
	statetest.TestEventStore(t, func(t *testing.T, lim state.Limits) state.EventStore {
		return newEventStore(t, js, lim)
	})
}

// TestJetStreamEventStoreShared resumes through a second connection (an
// instance) the stream the first appended to: it reads the same events,
// and appends after them.
func TestJetStreamEventStoreShared(t *testing.T) {
	ns := runJetStream(t)
	a := newEventStore(t, jsConn(t, ns), state.Limits{MaxEvents: 100})
	storeSeq.Add(-1) // the same stream and subject again, through another connection
	b := newEventStore(t, jsConn(t, ns), state.Limits{MaxEvents: 100})
	ctx := t.Context()
	s1, err := a.Append(ctx, "sess/1", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.Append(ctx, "sess/1", []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	s3, err := a.Append(ctx, "sess/1", []byte("three")) // a's last is stale: it must learn of s2
	if err != nil {
		t.Fatal(err)
	}
	ev, complete, err := b.After(ctx, "sess/1", s1)
	if err != nil || !complete || len(ev) != 2 || ev[0].Seq != s2 || ev[1].Seq != s3 || string(ev[1].Data) != "three" {
		t.Fatalf("After through b = %+v, complete %v, %v", ev, complete, err)
	}
}

func TestJetStreamKeyRing(t *testing.T) {
	ns := runJetStream(t)
	js := jsConn(t, ns)
	var n atomic.Int64
	statetest.TestKeyRing(t, func(t *testing.T, retain int) state.KeyRing {
		return newKeyRing(t, js, fmt.Sprint("keys_", n.Add(1)), retain)
	})
	a := newKeyRing(t, jsConn(t, ns), "shared", 3)
	b := newKeyRing(t, jsConn(t, ns), "shared", 3)
	statetest.TestSharedKeyRing(t, a, b, time.Second)
}

func newKeyRing(t testing.TB, js jetstream.JetStream, bucket string, retain int) *jnats.KeyRing {
	t.Helper()
	r, err := jnats.NewKeyRing(t.Context(), js, jnats.KeyRingConfig{Bucket: bucket, Retain: retain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestJetStreamSessionStore(t *testing.T) {
	ns := runJetStream(t)
	js := jsConn(t, ns)
	var n atomic.Int64
	statetest.TestSessionStore(t, func(t *testing.T) state.SessionStore {
		return newSessionStore(t, js, fmt.Sprint("sessions_", n.Add(1)))
	})
	a := newSessionStore(t, jsConn(t, ns), "shared")
	b := newSessionStore(t, jsConn(t, ns), "shared")
	statetest.TestSharedSessionStore(t, a, b)
}

func newSessionStore(t testing.TB, js jetstream.JetStream, bucket string) *jnats.SessionStore {
	t.Helper()
	s, err := jnats.NewSessionStore(t.Context(), js, jnats.SessionStoreConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJetStreamBroker(t *testing.T) {
	ns := runJetStream(t)
	js := jsConn(t, ns)
	var n atomic.Int64
	statetest.TestBroker(t, func(t *testing.T) state.Broker {
		return newBroker(t, js, fmt.Sprint("BROKER_", n.Add(1)))
	})
	statetest.TestSharedBroker(t, newBroker(t, jsConn(t, ns), "SHARED"), newBroker(t, jsConn(t, ns), "SHARED"))
}

func newBroker(t testing.TB, js jetstream.JetStream, name string) *jnats.Broker {
	t.Helper()
	b, err := jnats.NewBroker(t.Context(), js, jnats.BrokerConfig{Stream: name, Subject: "b." + name})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJetStreamUnreachable stops the server under open stores: appends,
// reads and rotations fail with an error by the context's deadline, not a
// hang, and the key ring keeps answering with the keys it last saw.
func TestJetStreamUnreachable(t *testing.T) {
	ns := runJetStream(t)
	js := jsConn(t, ns, natsgo.MaxReconnects(-1), natsgo.ReconnectWait(50*time.Millisecond))
	s := newEventStore(t, js, state.Limits{})
	r := newKeyRing(t, js, "down", 3)
	sess := newSessionStore(t, js, "down_sessions")
	br := newBroker(t, js, "DOWN")
	ctx := t.Context()
	if _, err := s.Append(ctx, "a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := r.Rotate(ctx, state.Key{ID: "k1", Secret: []byte("0123456789abcdef")}); err != nil {
		t.Fatal(err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	for name, op := range map[string]func(context.Context) error{
		"Append":  func(ctx context.Context) error { _, err := s.Append(ctx, "a", []byte("y")); return err },
		"After":   func(ctx context.Context) error { _, _, err := s.After(ctx, "a", 0); return err },
		"Get":     func(ctx context.Context) error { _, err := sess.Get(ctx, "x"); return err },
		"Publish": func(ctx context.Context) error { return br.Publish(ctx, "t", []byte("x")) },
		"Rotate": func(ctx context.Context) error {
			return r.Rotate(ctx, state.Key{ID: "k2", Secret: []byte("0123456789abcdef")})
		},
	} {
		ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		start := time.Now()
		err := op(ctx)
		cancel()
		if err == nil || time.Since(start) > 2*time.Second {
			t.Errorf("%s with the server down: %v after %v; want an error by the deadline", name, err, time.Since(start))
		}
		if !strings.HasPrefix(err.Error(), "jsonrpc/nats: ") || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with the server down: %v; want an error of this package wrapping the deadline", name, err)
		}
	}
	if keys, err := r.Keys(ctx); err != nil || len(keys) != 1 || keys[0].ID != "k1" {
		t.Errorf("Keys with the server down = %+v, %v; want the last seen", keys, err)
	}
}

// BenchmarkEventStore measures one Append and one After of that event
// (what a resumed stream costs per event), in memory and on JetStream
// (file storage, one embedded server on loopback).
func BenchmarkEventStore(b *testing.B) {
	lim := state.Limits{MaxEvents: 10000}
	b.Run("memory", func(b *testing.B) { benchStore(b, state.NewMemoryEventStore(lim, nil)) })
	b.Run("jetstream", func(b *testing.B) { benchStore(b, newEventStore(b, jsConn(b, runJetStream(b)), lim)) })
}

func benchStore(b *testing.B, s state.EventStore) {
	b.Run("append", func(b *testing.B) { benchAppend(b, s, false) })
	b.Run("append+after", func(b *testing.B) { benchAppend(b, s, true) })
}

func benchAppend(b *testing.B, s state.EventStore, read bool) {
	ctx := b.Context()
	data := make([]byte, 256)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		seq, err := s.Append(ctx, "bench", data)
		if err != nil {
			b.Fatal(err)
		}
		if !read {
			continue
		}
		ev, _, err := s.After(ctx, "bench", seq-1)
		if err != nil || len(ev) != 1 {
			b.Fatalf("After: %d events, %v", len(ev), err)
		}
	}
}

// BenchmarkSessionGet measures the look-up of a live session, in memory
// and in a JetStream bucket.
func BenchmarkSessionGet(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchSessionGet(b, state.NewMemorySessionStore(nil)) })
	b.Run("jetstream", func(b *testing.B) { benchSessionGet(b, newSessionStore(b, jsConn(b, runJetStream(b)), "bench")) })
}

func benchSessionGet(b *testing.B, s state.SessionStore) {
	ctx := b.Context()
	x := state.Session{ID: "bench", ProtocolVersion: "2025-11-25", ClientInfo: []byte(`{"name":"b"}`), Expires: time.Now().Add(time.Hour)}
	if err := s.Create(ctx, x); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Get(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBrokerFanout measures the latency from Publish on one instance
// to Next on another (p50 and p99), in memory (one instance) and through
// JetStream (two connections).
func BenchmarkBrokerFanout(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		m := state.NewMemoryBroker(1000)
		benchFanout(b, m, m)
	})
	b.Run("jetstream", func(b *testing.B) {
		ns := runJetStream(b)
		benchFanout(b, newBroker(b, jsConn(b, ns), "BENCH"), newBroker(b, jsConn(b, ns), "BENCH"))
	})
}

func benchFanout(b *testing.B, pub, sub state.Broker) {
	ctx := b.Context()
	s, err := sub.Subscribe(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := pub.Publish(ctx, "bench", []byte("event")); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Next(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-us")
}

// TestJetStreamRecovers restarts the server (same port, same store) under
// open stores: once it is back, the events stored before are read with
// the ones appended after, none twice, and a rotation made through
// another connection reaches the ring's watch within a second.
func TestJetStreamRecovers(t *testing.T) {
	dir := t.TempDir()
	ns := runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir })
	port := ns.Addr().(*net.TCPAddr).Port
	reconnect := []natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(20 * time.Millisecond)}
	js := jsConn(t, ns, reconnect...)
	s := newEventStore(t, js, state.Limits{})
	r := newKeyRing(t, js, "recover", 3)
	ctx := t.Context()
	first, err := s.Append(ctx, "a", []byte("before"))
	if err != nil {
		t.Fatal(err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir; o.Port = port })

	deadline := time.Now().Add(10 * time.Second)
	var second uint64
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		second, err = s.Append(actx, "a", []byte("after"))
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Append after the server came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ev, complete, err := s.After(ctx, "a", 0)
	if err != nil || !complete || len(ev) != 2 || ev[0].Seq != first || ev[1].Seq != second || string(ev[1].Data) != "after" {
		t.Fatalf("After once back = %+v, complete %v, %v", ev, complete, err)
	}
	other := newKeyRing(t, jsConn(t, ns, reconnect...), "recover", 3)
	statetest.TestSharedKeyRing(t, other, r, time.Second)
}

// TestJetStreamEventStoreRace appends to one stream from two connections
// (instances) at once: every append lands once, in one order, and a read
// after any of them (every 20th checked) is complete (each event names its true predecessor).
func TestJetStreamEventStoreRace(t *testing.T) {
	const writers, each = 4, 25
	ns := runJetStream(t)
	a := newEventStore(t, jsConn(t, ns), state.Limits{})
	storeSeq.Add(-1)
	b := newEventStore(t, jsConn(t, ns), state.Limits{})
	var wg sync.WaitGroup
	for w := range 2 * writers {
		s := []*jnats.EventStore{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				if _, err := s.Append(t.Context(), "race", fmt.Appendf(nil, "w%d-%d", w, i)); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	ev, complete, err := a.After(t.Context(), "race", 0)
	if err != nil || !complete || len(ev) != 2*writers*each {
		t.Fatalf("After = %d events, complete %v, %v; want %d, true", len(ev), complete, err, 2*writers*each)
	}
	seen := map[string]bool{}
	for i, e := range ev {
		if seen[string(e.Data)] {
			t.Fatalf("%s stored twice", e.Data)
		}
		seen[string(e.Data)] = true
		if i%20 != 0 {
			continue // a read costs a round trip per event: sample
		}
		if rest, complete, err := b.After(t.Context(), "race", e.Seq); err != nil || !complete || len(rest) != len(ev)-i-1 {
			t.Fatalf("After(seq %d) = %d events, complete %v, %v", e.Seq, len(rest), complete, err)
		}
	}
}
