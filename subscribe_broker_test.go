package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// countingBroker is a real broker that counts its open subscriptions.
type countingBroker struct {
	state.Broker
	open atomic.Int64
}

type countedSub struct {
	state.Subscription
	once sync.Once
	open *atomic.Int64
}

func (b *countingBroker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	s, err := b.Broker.Subscribe(ctx, topic)
	if err != nil {
		return nil, err
	}
	b.open.Add(1)
	return &countedSub{Subscription: s, open: &b.open}, nil
}

func (s *countedSub) Close() error {
	s.once.Do(func() { s.open.Add(-1) })
	return s.Subscription.Close()
}

// cluster is one server instance of several sharing a broker: a "news"
// topic of ints and a "big" topic of strings in the "test" namespace, and
// a change feed, served on TCP (line framing) and on stateless Streamable
// HTTP.
type cluster struct {
	subs *jsonrpc.Subscriptions
	feed *jsonrpc.ChangeFeed
	srv  *jsonrpc.Server
	addr string // TCP
	url  string // Streamable HTTP
}

func newClusterInstance(t *testing.T, b state.Broker, big jsonrpc.SubscriptionKindOptions) *cluster {
	t.Helper()
	mux := jsonrpc.NewMux()
	in := &cluster{
		subs: jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "test", Broker: b}),
		feed: &jsonrpc.ChangeFeed{Broker: b, Supports: []string{"toolsListChanged", "promptsListChanged", "resourceSubscriptions"}},
	}
	jsonrpc.AddTopic[int](in.subs, "news")
	jsonrpc.AddTopic[string](in.subs, "big", big)
	mux.Handle("subscriptions/listen", in.feed)
	in.srv = &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP, WriteTimeout: 300 * time.Millisecond}
	in.addr, _ = serveSubs(t, in.srv)
	ts := httptest.NewServer(in.srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}}))
	in.url = ts.URL
	t.Cleanup(func() {
		in.feed.Close()
		ts.Close()
		in.srv.Shutdown(context.Background())
	})
	return in
}

func (in *cluster) dial(t *testing.T) *jsonrpc.Conn {
	t.Helper()
	c, err := jsonrpc.Dial(t.Context(), "tcp://"+in.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*jsonrpc.Conn)
}

func subscribeNews(t *testing.T, c *jsonrpc.Conn) *jsonrpc.Subscription[int] {
	t.Helper()
	s, err := jsonrpc.Subscribe[int](t.Context(), c, "test", "news")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// receiveInts takes n events from s, each within a few seconds.
func receiveInts(t *testing.T, s *jsonrpc.Subscription[int], n int) []int {
	t.Helper()
	var got []int
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		ev, err := s.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Next after %v: %v", got, err)
		}
		got = append(got, ev)
	}
	return got
}

func wantNoEvent(t *testing.T, s *jsonrpc.Subscription[int]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if ev, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an event more: %v, %v", ev, err)
	}
}

func waitCond(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Two instances sharing a broker: every subscriber, on either, receives
// each event published on either, once, in publish order; each instance
// holds one broker subscription while it has subscribers, none after; an
// unsubscribed subscription receives nothing more.
func TestTopicAcrossInstances(t *testing.T) {
	b := &countingBroker{Broker: state.NewMemoryBroker(1000)}
	a, bb := newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{}), newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{})
	ca := a.dial(t)
	subs := []*jsonrpc.Subscription[int]{subscribeNews(t, ca), subscribeNews(t, ca), subscribeNews(t, a.dial(t)), subscribeNews(t, bb.dial(t)), subscribeNews(t, bb.dial(t))}
	if n := b.open.Load(); n != 2 {
		t.Fatalf("%d broker subscriptions for two instances", n)
	}
	const n = 100
	var want []int
	for i := range n {
		if err := []*cluster{a, bb}[i%2].subs.Publish(t.Context(), "news", i); err != nil {
			t.Fatal(err)
		}
		want = append(want, i)
	}
	for i, s := range subs {
		if got := receiveInts(t, s, n); !slices.Equal(got, want) {
			t.Fatalf("subscriber %d received %v", i, got)
		}
		wantNoEvent(t, s)
	}
	if err := a.subs.Publish(t.Context(), "news", "one"); err == nil {
		t.Fatal("Publish of a string to an int topic: no error")
	}
	if err := a.subs.Publish(t.Context(), "nope", 1); err == nil {
		t.Fatal("Publish to no topic: no error")
	}

	for _, s := range subs[:3] { // every subscriber of a
		if err := s.Unsubscribe(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	waitCond(t, func() bool { return b.open.Load() == 1 && a.subs.Live() == 0 }, "a's broker subscription to close")
	if err := a.subs.Publish(t.Context(), "news", n); err != nil {
		t.Fatal(err)
	}
	for _, s := range subs[3:] {
		if got := receiveInts(t, s, 1); got[0] != n {
			t.Fatalf("after a's subscribers left: %v", got)
		}
	}
	late := subscribeNews(t, ca) // a subscribes to the broker again
	if err := bb.subs.Publish(t.Context(), "news", n+1); err != nil {
		t.Fatal(err)
	}
	if got := receiveInts(t, late, 1); got[0] != n+1 {
		t.Fatalf("a new subscriber of a received %v", got)
	}
}

// An unsubscribed subscription's id sees no event on the wire after the
// unsubscribe answer, while another subscription of the connection does.
func TestTopicUnsubscribeStopsDelivery(t *testing.T) {
	b := state.NewMemoryBroker(1000)
	a, other := newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{}), newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{})
	nc, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &lineConn{t: t, w: nc, r: bufio.NewReader(nc)}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"test_subscribe","params":["news"]}`)
	gone := decodeID(t, c.read())
	c.send(`{"jsonrpc":"2.0","id":2,"method":"test_subscribe","params":["news"]}`)
	kept := decodeID(t, c.read())
	c.send(`{"jsonrpc":"2.0","id":3,"method":"test_unsubscribe","params":["` + gone + `"]}`)
	if got := string(c.read()); got != `{"jsonrpc":"2.0","id":3,"result":true}` {
		t.Fatalf("unsubscribe: %s", got)
	}
	for i := range 3 {
		if err := other.subs.Publish(t.Context(), "news", i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		got := decodeEvent(t, c.read())
		if got.Params.Subscription != kept || string(got.Params.Result) != string(rune('0'+i)) {
			t.Fatalf("event %d: %+v; want %s's", i, got, kept)
		}
	}
}

func decodeID(t *testing.T, msg []byte) string {
	t.Helper()
	_, after, ok := strings.Cut(string(msg), `"result":"`)
	if !ok {
		t.Fatalf("not a subscription id: %s", msg)
	}
	return strings.TrimSuffix(after, `"}`)
}

// Under OverflowBlock, a subscriber that stops reading holds back its
// instance's relay; once the broker's bound is passed the relay fell
// behind, and, when the write timeout has cut the stalled connection, the
// other subscribers of that instance receive the events relayed before,
// in order and without a gap, then an error with CodeSubscriptionBroker:
// no hang, no silent gap.
func TestTopicSlowInstanceEnds(t *testing.T) {
	b := state.NewMemoryBroker(4)
	block := jsonrpc.SubscriptionKindOptions{Buffer: 1, Overflow: jsonrpc.OverflowBlock}
	a, other := newClusterInstance(t, b, block), newClusterInstance(t, b, block)
	stalled, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	sc := &lineConn{t: t, w: stalled, r: bufio.NewReader(stalled)}
	sc.send(`{"jsonrpc":"2.0","id":1,"method":"test_subscribe","params":["big"]}`)
	decodeID(t, sc.read()) // then it reads no more
	reader, err := jsonrpc.Subscribe[string](t.Context(), a.dial(t), "test", "big")
	if err != nil {
		t.Fatal(err)
	}
	const n = 128
	ev := strings.Repeat("x", 128<<10)
	for i := range n {
		if err := other.subs.Publish(t.Context(), "big", string(rune('A'+i%26))+ev); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got := 0
	for {
		s, err := reader.Next(ctx)
		if err != nil {
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker || !strings.Contains(e.Message, "fell behind") {
				t.Fatalf("after %d events: %v; want the broker's error", got, err)
			}
			break
		}
		if s[0] != byte('A'+got%26) {
			t.Fatalf("event %d is %c…: a gap", got, s[0])
		}
		got++
	}
	if got == 0 || got >= n {
		t.Fatalf("%d events before the end; want some, not all %d", got, n)
	}
}

// listenSSE opens subscriptions/listen on stateless Streamable HTTP and
// returns the stream's data lines.
func listenSSE(t *testing.T, url, id string) (next func() string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	return func() string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("listen stream: %v", err)
			}
			if s, ok := strings.CutPrefix(line, "data: "); ok {
				return strings.TrimSpace(s)
			}
		}
	}
}

// subscriptions/listen on one instance receives the changes published on
// another, over stateless Streamable HTTP and over TCP.
func TestChangeFeedAcrossInstances(t *testing.T) {
	b := &countingBroker{Broker: state.NewMemoryBroker(1000)}
	a, other := newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{}), newClusterInstance(t, b, jsonrpc.SubscriptionKindOptions{})
	next := listenSSE(t, a.url, `"L1"`)
	if got := next(); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
		t.Fatalf("ack: %s", got)
	}
	nc, err := net.Dial("tcp", a.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &lineConn{t: t, w: nc, r: bufio.NewReader(nc)}
	c.send(`{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	if got := string(c.read()); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
		t.Fatalf("ack on TCP: %s", got)
	}
	if n := b.open.Load(); n != 1 {
		t.Fatalf("%d broker subscriptions for one instance's listeners", n)
	}
	if err := other.feed.Publish("promptsListChanged"); err != nil { // not asked for
		t.Fatal(err)
	}
	if err := other.feed.Publish("toolsListChanged"); err != nil {
		t.Fatal(err)
	}
	if err := other.feed.PublishResource("file:///a"); err != nil {
		t.Fatal(err)
	}
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`; got != want {
		t.Fatalf("change over HTTP: %s\nwant %s", got, want)
	}
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"uri":"file:///a"}}`; got != want {
		t.Fatalf("resource over HTTP: %s\nwant %s", got, want)
	}
	if got, want := string(c.read()), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L2"}}}`; got != want {
		t.Fatalf("change over TCP: %s\nwant %s", got, want)
	}
	if err := other.feed.Publish("bogus"); err == nil {
		t.Fatal("Publish of no list change: no error")
	}
	a.feed.Close()
	if got := string(c.read()); !strings.Contains(got, `"id":"L2","result":{"resultType":"complete"`) {
		t.Fatalf("after Close: %s", got)
	}
	waitCond(t, func() bool { return b.open.Load() == 0 }, "the relay to close with its last listener")
}
