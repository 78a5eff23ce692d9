package pubsub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLiveCapRemoveAndConnEnd(t *testing.T) {
	var mu sync.Mutex
	var ended []string
	l := NewLive[int](2, func(id string) { mu.Lock(); ended = append(ended, id); mu.Unlock() })
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.Add(ctx, 1, "a", "a"); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(ctx, 1, "b", "b"); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(ctx, 1, "c", "c"); !errors.Is(err, ErrLimit) {
		t.Fatalf("third on a cap of 2: %v, want ErrLimit", err)
	}
	if err := l.Add(context.Background(), 2, "c", "c"); err != nil {
		t.Fatalf("another connection has its own cap: %v", err)
	}
	if got, ok := l.Get(1, "b"); !ok || got != "b" {
		t.Fatalf("Get(1, b) = %q, %v", got, ok)
	}
	if _, ok := l.Get(2, "a"); ok {
		t.Fatal("Get found connection 1's subscription on connection 2")
	}
	l.Remove(1, "b", false)
	if n := l.Len(); n != 2 {
		t.Fatalf("Len after Remove = %d, want 2", n)
	}
	cancel()
	// The connection's entry goes first, then its subscriptions end (the
	// callback runs outside the lock): wait for both.
	endedLen := func() int { mu.Lock(); defer mu.Unlock(); return len(ended) }
	deadline := time.Now().Add(5 * time.Second)
	for (l.Len() != 1 || endedLen() == 0) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if l.Len() != 1 || len(ended) != 1 || ended[0] != "a" {
		t.Fatalf("after the connection's end: Len %d, ended %v; want 1, [a]", l.Len(), ended)
	}
	if err := l.Add(ctx, 1, "d", "d"); !errors.Is(err, ErrConnEnded) {
		t.Fatalf("Add on an ended connection: %v, want ErrConnEnded", err)
	}
}

func TestNewIDAndMethods(t *testing.T) {
	a, b := NewID(), NewID()
	if a == b || len(a) != 34 || !strings.HasPrefix(a, "0x") {
		t.Fatalf("ids %q %q: want distinct 0x + 32 hex digits", a, b)
	}
	s, u, n := Methods("eth", "", "", "")
	if s != "eth_subscribe" || u != "eth_unsubscribe" || n != "eth_subscription" {
		t.Fatalf("Methods(eth) = %s %s %s", s, u, n)
	}
	if s, _, n := Methods("eth", "sub", "", "ev"); s != "sub" || n != "ev" {
		t.Fatalf("Methods with names given = %s, %s", s, n)
	}
	if p := string(Prefix("m", "0x1")); p != `{"jsonrpc":"2.0","method":"m","params":{"subscription":"0x1"` {
		t.Fatalf("Prefix = %s", p)
	}
}

func TestSplitKind(t *testing.T) {
	raw := func(xs ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(xs))
		for i, x := range xs {
			out[i] = json.RawMessage(x)
		}
		return out
	}
	for _, c := range []struct {
		in         []json.RawMessage
		kind, args string
		bad        bool
	}{
		{in: raw(`"ticks"`), kind: "ticks"},
		{in: raw(`"ticks"`, `{"n":1}`), kind: "ticks", args: `{"n":1}`},
		{in: raw(`"ticks"`, `[1]`), kind: "ticks", args: `[1]`},
		{in: raw(`"ticks"`, `1`), kind: "ticks", args: `[1]`},
		{in: raw(`"ticks"`, `1`, `"x"`), kind: "ticks", args: `[1,"x"]`},
		{in: raw(), bad: true},
		{in: raw(`1`), bad: true},
		{in: raw(`"\ud800`), bad: true},
	} {
		kind, args, problem := SplitKind(c.in)
		if (problem != "") != c.bad || kind != c.kind || string(args) != c.args {
			t.Errorf("SplitKind(%s) = %q, %s, %q", c.in, kind, args, problem)
		}
	}
}

type nopSubscriber struct{ ended chan error }

func (n nopSubscriber) Send([]byte) error                      { return nil }
func (n nopSubscriber) Ended(err error)                        { n.ended <- err }
func (n nopSubscriber) AppendError(b []byte, err error) []byte { return append(b, "{}"...) }
func (n nopSubscriber) Broken(error)                           {}

func TestSubPushAfterEndWrapsCause(t *testing.T) {
	var s Sub
	ns := nopSubscriber{ended: make(chan error, 1)}
	s.Start(context.Background(), "m", 4, Block, ns)
	if !strings.HasPrefix(s.ID, "0x") {
		t.Fatalf("ID %q", s.ID)
	}
	cause := errors.New("boom")
	s.Cancel(cause)
	s.End(cause, false)
	err := s.PushEvent([]byte("1"))
	if !errors.Is(err, ErrClosed) || !errors.Is(err, cause) {
		t.Fatalf("PushEvent after the end: %v, want ErrClosed wrapping the cause", err)
	}
}
