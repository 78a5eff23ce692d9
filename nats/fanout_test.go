package nats_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// node is one server instance of several sharing a broker: a "news" topic
// of ints in the "test" namespace and a change feed, served on TCP.
type node struct {
	subs *jsonrpc.Subscriptions
	feed *jsonrpc.ChangeFeed
	addr string
}

func newNode(t testing.TB, b state.Broker) *node {
	t.Helper()
	mux := jsonrpc.NewMux()
	n := &node{
		subs: jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "test", Broker: b}),
		feed: &jsonrpc.ChangeFeed{Broker: b},
	}
	jsonrpc.AddTopic[int](n.subs, "news", jsonrpc.SubscriptionKindOptions{Buffer: 10000})
	mux.Handle("subscriptions/listen", n.feed)
	srv := &jsonrpc.Server{Handler: mux}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.addr = l.Addr().String()
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	t.Cleanup(func() {
		n.feed.Close()
		srv.Shutdown(context.Background())
		<-done
	})
	return n
}

func (n *node) subscribe(t testing.TB) (*jsonrpc.Subscription[int], error) {
	t.Helper()
	c, err := jsonrpc.Dial(t.Context(), "tcp://"+n.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return jsonrpc.Subscribe[int](ctx, c.(*jsonrpc.Conn), "test", "news")
}

func (n *node) mustSubscribe(t testing.TB) *jsonrpc.Subscription[int] {
	t.Helper()
	s, err := n.subscribe(t)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// listen opens subscriptions/listen for tools on n over a raw TCP
// connection and returns its messages, line by line, after the
// acknowledgement.
func (n *node) listen(t testing.TB) (next func() string) {
	t.Helper()
	nc, err := net.Dial("tcp", n.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write([]byte(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	next = func() string {
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("listen stream: %v", err)
		}
		return strings.TrimSpace(line)
	}
	if ack := next(); !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		t.Fatalf("ack: %s", ack)
	}
	return next
}

func takeInts(t testing.TB, s *jsonrpc.Subscription[int], n int) []int {
	t.Helper()
	var got []int
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		ev, err := s.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		got = append(got, ev)
	}
	return got
}

func wantQuiet(t testing.TB, s *jsonrpc.Subscription[int]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if ev, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an event more: %v, %v", ev, err)
	}
}

// Two instances, each with a connection of its own to one nats-server:
// every subscriber on either receives each event published on either,
// once, in publish order; a listener on one receives the list changes
// published on the other; an unsubscribed subscriber nothing more.
func TestJetStreamTopicsAcrossInstances(t *testing.T) {
	ns := runJetStream(t)
	a, b := newNode(t, newBroker(t, jsConn(t, ns), "FANOUT")), newNode(t, newBroker(t, jsConn(t, ns), "FANOUT"))
	subs := []*jsonrpc.Subscription[int]{a.mustSubscribe(t), a.mustSubscribe(t), b.mustSubscribe(t), b.mustSubscribe(t)}
	next := a.listen(t)
	const n = 200
	var want []int
	for i := range n {
		if err := []*node{a, b}[i%2].subs.Publish(t.Context(), "news", i); err != nil {
			t.Fatal(err)
		}
		want = append(want, i)
	}
	for i, s := range subs {
		if got := takeInts(t, s, n); !slices.Equal(got, want) {
			t.Fatalf("subscriber %d received %v", i, got)
		}
		wantQuiet(t, s)
	}
	if err := b.feed.Publish("toolsListChanged"); err != nil {
		t.Fatal(err)
	}
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`; got != want {
		t.Fatalf("change: %s\nwant %s", got, want)
	}
	if err := subs[0].Unsubscribe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.subs.Publish(t.Context(), "news", n); err != nil {
		t.Fatal(err)
	}
	for _, s := range subs[1:] {
		if got := takeInts(t, s, 1); got[0] != n {
			t.Fatalf("after an unsubscribe: %v", got)
		}
	}
	if a.subs.Live() != 1 || b.subs.Live() != 2 {
		t.Fatalf("live subscriptions: a %d, b %d; want 1, 2", a.subs.Live(), b.subs.Live())
	}
}

// The nats-server stops under two instances: their subscribers and
// listeners end with a clear error (not a hang), Publish and subscribe
// fail with one by their deadline; once the server is back (on the same
// port, its memory streams gone) subscribing and publishing work again,
// each event delivered once.
func TestJetStreamTopicsNATSDown(t *testing.T) {
	dir := t.TempDir()
	ns := runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir })
	port := ns.Addr().(*net.TCPAddr).Port
	reconnect := []natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(20 * time.Millisecond)}
	a := newNode(t, newBroker(t, jsConn(t, ns, reconnect...), "DOWN"))
	b := newNode(t, newBroker(t, jsConn(t, ns, reconnect...), "DOWN"))
	sa, sb := a.mustSubscribe(t), b.mustSubscribe(t)
	next := a.listen(t)
	if err := b.subs.Publish(t.Context(), "news", 1); err != nil {
		t.Fatal(err)
	}
	takeInts(t, sa, 1)
	takeInts(t, sb, 1)

	ns.Shutdown()
	ns.WaitForShutdown()
	for i, s := range []*jsonrpc.Subscription[int]{sa, sb} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		ev, err := s.Next(ctx)
		cancel()
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker || e.Message != "subscription ended: the broker failed; subscribe again" {
			t.Fatalf("subscriber %d with NATS down: %v, %v; want the broker's error", i, ev, err)
		}
	}
	if got := next(); !strings.Contains(got, `"id":"L","error":{"code":-32603,"message":"subscriptions/listen ended: the broker failed; listen again"}`) {
		t.Fatalf("listener with NATS down: %s", got)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	err := a.subs.Publish(ctx, "news", 2)
	cancel()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "jsonrpc/nats: broker publish") || time.Since(start) > 2*time.Second {
		t.Fatalf("Publish with NATS down: %v after %v; want the broker's error by the deadline", err, time.Since(start))
	}
	start = time.Now()
	if err := a.feed.Publish("toolsListChanged"); err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("ChangeFeed.Publish with NATS down: %v after %v", err, time.Since(start))
	}
	start = time.Now()
	_, err = a.subscribe(t)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker || time.Since(start) > 10*time.Second {
		t.Fatalf("subscribe with NATS down: %v after %v", err, time.Since(start))
	}

	runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir; o.Port = port })
	var sa2 *jsonrpc.Subscription[int]
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if sa2, err = a.subscribe(t); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscribe once NATS is back: %v", err)
		}
	}
	sb2 := b.mustSubscribe(t)
	next = b.listen(t)
	for i := 10; i < 20; i++ {
		if err := []*node{a, b}[i%2].subs.Publish(t.Context(), "news", i); err != nil {
			t.Fatalf("Publish once NATS is back: %v", err)
		}
	}
	want := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}
	for _, s := range []*jsonrpc.Subscription[int]{sa2, sb2} {
		if got := takeInts(t, s, 10); !slices.Equal(got, want) {
			t.Fatalf("once NATS is back: %v", got)
		}
		wantQuiet(t, s)
	}
	if err := a.feed.Publish("toolsListChanged"); err != nil {
		t.Fatal(err)
	}
	if got := next(); !strings.Contains(got, "notifications/tools/list_changed") {
		t.Fatalf("listener once NATS is back: %s", got)
	}
}
