package jsonrpc_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// subsMux serves the "test" namespace: "count" sends 1..n as fast as the
// policy lets it, "flood" sends strings of size bytes until cancelled,
// "fail" sends one event and fails. The subscribe response is held back
// by a middleware for delay, so that events are produced while it is in
// flight.
type subsFixture struct {
	mux      *jsonrpc.Mux
	subs     *jsonrpc.Subscriptions
	started  atomic.Int64 // producers started
	canceled atomic.Int64 // producers that saw their context end
	sent     atomic.Int64 // events accepted by Send
	sendErr  chan error   // the error that ended a producer's Send loop
}

type countParams struct {
	N int `json:"n"`
}

type floodParams struct {
	Size int `json:"size"`
}

func newSubsFixture(delay time.Duration, opts ...jsonrpc.SubscriptionKindOptions) *subsFixture {
	var kind jsonrpc.SubscriptionKindOptions // of "flood"; "count" holds 2000 events unless it says otherwise
	if len(opts) > 0 {
		kind = opts[0]
	}
	f := &subsFixture{mux: jsonrpc.NewMux(), sendErr: make(chan error, 100)}
	f.mux.Use(func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			v, err := next.ServeRPC(ctx, req)
			if req.Method == "test_subscribe" {
				time.Sleep(delay)
			}
			return v, err
		})
	})
	f.subs = jsonrpc.NewSubscriptions(f.mux, jsonrpc.SubscriptionsOptions{Namespace: "test", MaxPerConn: 200})
	jsonrpc.AddSubscription(f.subs, "count", func(ctx context.Context, p countParams, sink *jsonrpc.Sink[int]) error {
		f.started.Add(1)
		for i := 1; i <= p.N; i++ {
			if err := sink.Send(i); err != nil {
				return nil
			}
			f.sent.Add(1)
		}
		<-ctx.Done()
		f.canceled.Add(1)
		return nil
	}, jsonrpc.SubscriptionKindOptions{Buffer: cmp.Or(kind.Buffer, 2000), Overflow: kind.Overflow})
	jsonrpc.AddSubscription(f.subs, "flood", func(ctx context.Context, p floodParams, sink *jsonrpc.Sink[string]) error {
		f.started.Add(1)
		ev := strings.Repeat("x", p.Size)
		for {
			if err := sink.Send(ev); err != nil {
				f.sendErr <- err
				return nil
			}
			f.sent.Add(1)
		}
	}, kind)
	jsonrpc.AddSubscription(f.subs, "fail", func(ctx context.Context, _ struct{}, sink *jsonrpc.Sink[string]) error {
		sink.Send("last words")
		return jsonrpc.Errorf(-32042, "the source went away")
	})
	jsonrpc.Register(f.mux, "ping", func(context.Context, struct{}) (string, error) { return "pong", nil })
	return f
}

// lineConn is a raw newline-framed client: what it reads is exactly what
// the server wrote.
type lineConn struct {
	t *testing.T
	w io.Writer
	r *bufio.Reader
}

func (c *lineConn) send(msg string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, msg+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lineConn) read() []byte {
	c.t.Helper()
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v (after %q)", err, line)
	}
	return line[:len(line)-1]
}

// rawTransports returns a fresh raw connection to srv over each transport
// that carries server push: TCP, a unix socket, a stdio-like pipe pair and
// WebSocket (each frame one message).
func rawTransports(t *testing.T, srv *jsonrpc.Server) map[string]func() (send func(string), read func() []byte) {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unix, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, l := range []net.Listener{tcp, unix} {
		wg.Add(1)
		go func() { defer wg.Done(); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	}
	hs := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
		wg.Wait()
	})
	stream := func(network, addr string) func() (func(string), func() []byte) {
		return func() (func(string), func() []byte) {
			nc, err := net.Dial(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { nc.Close() })
			c := &lineConn{t: t, w: nc, r: bufio.NewReader(nc)}
			return c.send, c.read
		}
	}
	return map[string]func() (func(string), func() []byte){
		"tcp":  stream("tcp", tcp.Addr().String()),
		"unix": stream("unix", unix.Addr().String()),
		"stdio": func() (func(string), func() []byte) {
			// The stdio transport is a stream over two pipes.
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			ch := jsonrpc.NewStream(struct {
				io.Reader
				io.Writer
				io.Closer
			}{inR, outW, closers{inR, outW}}, jsonrpc.StreamOptions{Framing: jsonrpc.FramingLine})
			done := make(chan struct{})
			go func() { defer close(done); srv.ServeConn(context.Background(), ch) }()
			t.Cleanup(func() { inW.Close(); <-done; outR.Close() })
			c := &lineConn{t: t, w: inW, r: bufio.NewReader(outR)}
			return c.send, c.read
		},
		"websocket": func() (func(string), func() []byte) {
			ctx := context.Background()
			wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
			if err != nil {
				t.Fatal(err)
			}
			wc.SetReadLimit(64 << 20)
			t.Cleanup(func() { wc.CloseNow() })
			return func(msg string) {
					if err := wc.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
						t.Fatal(err)
					}
				}, func() []byte {
					_, b, err := wc.Read(ctx)
					if err != nil {
						t.Fatal(err)
					}
					return b
				}
		},
	}
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}

type eventMsg struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		Subscription string         `json:"subscription"`
		Result       jsontext.Value `json:"result"`
		Dropped      int64          `json:"dropped"`
		Error        *jsonrpc.Error `json:"error"`
	} `json:"params"`
}

func decodeEvent(t *testing.T, b []byte) eventMsg {
	t.Helper()
	var ev eventMsg
	if err := jsonv2.Unmarshal(b, &ev, jsonv2.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("not a subscription notification: %s: %v", b, err)
	}
	return ev
}

// The subscribe response leaves before any event, and 1,000 events
// produced while it was held back follow it, in order, on every transport.
func TestSubscribeResponseBeforeEventsInOrder(t *testing.T) {
	f := newSubsFixture(30 * time.Millisecond)
	srv := &jsonrpc.Server{Handler: f.mux}
	for name, dial := range rawTransports(t, srv) {
		t.Run(name, func(t *testing.T) {
			send, read := dial()
			send(`{"jsonrpc":"2.0","id":7,"method":"test_subscribe","params":["count",{"n":1000}]}`)
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				ID      int    `json:"id"`
				Result  string `json:"result"`
			}
			first := read()
			if err := jsonv2.Unmarshal(first, &resp, jsonv2.RejectUnknownMembers(true)); err != nil || resp.ID != 7 || !strings.HasPrefix(resp.Result, "0x") || len(resp.Result) != 34 {
				t.Fatalf("first message is not the subscribe response: %s (%v)", first, err)
			}
			for i := 1; i <= 1000; i++ {
				ev := decodeEvent(t, read())
				if ev.Method != "test_subscription" || ev.Params.Subscription != resp.Result || string(ev.Params.Result) != strconv.Itoa(i) {
					t.Fatalf("event %d: got %+v", i, ev)
				}
			}
			// The connection still serves calls, and unsubscribe answers true once.
			send(`{"jsonrpc":"2.0","id":8,"method":"test_unsubscribe","params":["` + resp.Result + `"]}`)
			if got := string(read()); got != `{"jsonrpc":"2.0","id":8,"result":true}` {
				t.Fatalf("unsubscribe: %s", got)
			}
			send(`{"jsonrpc":"2.0","id":9,"method":"test_unsubscribe","params":["` + resp.Result + `"]}`)
			if got := string(read()); got != `{"jsonrpc":"2.0","id":9,"error":{"code":-32010,"message":"subscription not found: \"`+resp.Result+`\""}}` {
				t.Fatalf("second unsubscribe: %s", got)
			}
		})
	}
}

// The demo ticker over our client, on TCP and WebSocket: 1..K, then nothing.
func TestSubscribeDemoTickerClient(t *testing.T) {
	mux := demo.Shared{}.NewMux()
	srv := &jsonrpc.Server{Handler: mux}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	hs := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer hs.Close()
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{"tcp://" + l.Addr().String(), "ws" + strings.TrimPrefix(hs.URL, "http")} {
		c, err := jsonrpc.Dial(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		conn := c.(*jsonrpc.Conn)
		sub, err := jsonrpc.Subscribe[int](ctx, conn, "demo", "ticker", map[string]int{"interval_ms": 1, "count": 5})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i := 0; i < 5; i++ {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("%s: event %d: %v", url, i, err)
			}
			got = append(got, ev)
		}
		if strings.Trim(strings.Join(strings.Fields(fmtInts(got)), ","), "[]") != "1,2,3,4,5" {
			t.Fatalf("%s: events %v", url, got)
		}
		short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
		if ev, err := sub.Next(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: an event after the K-th: %v %v", url, ev, err)
		}
		cancelShort()
		// The ticker has ended on the server: unsubscribing is an error.
		var rpcErr *jsonrpc.Error
		if err := sub.Unsubscribe(ctx); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeSubscriptionNotFound {
			t.Fatalf("%s: unsubscribe after the end: %v", url, err)
		}
		if _, err := sub.Next(ctx); !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("%s: Next after Unsubscribe: %v", url, err)
		}
		// A live one: unsubscribe is true, and the iterator ends.
		live, err := jsonrpc.Subscribe[int](ctx, conn, "demo", "ticker", map[string]int{"interval_ms": 1})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for range live.Events() {
			if n++; n == 3 {
				if err := live.Unsubscribe(ctx); err != nil {
					t.Fatalf("%s: unsubscribe: %v", url, err)
				}
			}
		}
		if n != 3 || !errors.Is(live.Err(), jsonrpc.ErrClosed) {
			t.Fatalf("%s: %d events, Err %v", url, n, live.Err())
		}
		c.Close()
	}
}

func fmtInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Over plain HTTP there is no connection to push on: go-ethereum's answer.
func TestSubscribeOverPlainHTTP(t *testing.T) {
	hs := httptest.NewServer(&jsonrpc.Server{Handler: demo.Shared{}.NewMux()})
	defer hs.Close()
	resp, err := http.Post(hs.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"demo_subscribe","params":["ticker",{"interval_ms":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if got := strings.TrimSpace(string(body)); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"notifications not supported"}}` {
		t.Fatalf("got %s", got)
	}
}

// Bad subscribe params, an unknown kind, the per-connection cap, and
// ownership: one connection cannot end another's subscription.
func TestSubscribeErrors(t *testing.T) {
	f := newSubsFixture(0)
	srv := &jsonrpc.Server{Handler: f.mux}
	dial := rawTransports(t, srv)["tcp"]
	send, read := dial()
	for _, c := range []struct{ params, want string }{
		{`[]`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: /0: expected the kind of subscription (a string) as the first element of the params array","data":[{"path":"/0","problem":"expected the kind of subscription (a string) as the first element of the params array"}]}}`},
		{`["nope"]`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no \"nope\" subscription in the test namespace"}}`},
		{`["count",{"n":"x"}]`, ``},
	} {
		send(`{"jsonrpc":"2.0","id":1,"method":"test_subscribe","params":` + c.params + `}`)
		got := string(read())
		if c.want == "" {
			if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "/n") {
				t.Errorf("%s: got %s", c.params, got)
			}
		} else if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.params, got, c.want)
		}
	}
	var ids []string
	for i := 0; i < 200; i++ {
		send(`{"jsonrpc":"2.0","id":2,"method":"test_subscribe","params":["count",{"n":0}]}`)
		var r struct {
			Result string `json:"result"`
		}
		jsonv2.Unmarshal(read(), &r)
		ids = append(ids, r.Result)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"test_subscribe","params":["count",{"n":0}]}`)
	if got := string(read()); got != `{"jsonrpc":"2.0","id":3,"error":{"code":-32012,"message":"too many subscriptions on this connection (limit 200)"}}` {
		t.Fatalf("over the cap: %s", got)
	}
	send2, read2 := dial()
	send2(`{"jsonrpc":"2.0","id":4,"method":"test_unsubscribe","params":["` + ids[0] + `"]}`)
	if got := string(read2()); !strings.Contains(got, `"code":-32010`) {
		t.Fatalf("another connection ended a subscription: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"test_unsubscribe","params":{"id":"` + ids[0] + `"}}`)
	if got := string(read()); got != `{"jsonrpc":"2.0","id":5,"result":true}` {
		t.Fatalf("unsubscribe by name: %s", got)
	}
}

// A producer that fails ends its subscription with a last notification
// carrying the error; the client's Err returns it.
func TestSubscribeProducerError(t *testing.T) {
	f := newSubsFixture(0)
	srv := &jsonrpc.Server{Handler: f.mux}
	ctx, c := dialSubsServer(t, srv)
	sub, err := jsonrpc.Subscribe[string](ctx, c, "test", "fail")
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Next(ctx); err != nil || ev != "last words" {
		t.Fatalf("first event: %q %v", ev, err)
	}
	_, err = sub.Next(ctx)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32042 || rpcErr.Message != "the source went away" || sub.Err() != err {
		t.Fatalf("end: %v (Err %v)", err, sub.Err())
	}
}

// heapInUse is the heap after a collection: the least of a few samples, so
// that garbage a running producer makes between them does not count.
// serveSubs serves srv on a TCP listener; served is closed once Serve has
// returned (after the test's own Shutdown).
func serveSubs(t *testing.T, srv *jsonrpc.Server) (addr string, served <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	return l.Addr().String(), done
}

// dialSubsServer serves srv on TCP and dials a client to it; both end with the test.
func dialSubsServer(t *testing.T, srv *jsonrpc.Server) (context.Context, *jsonrpc.Conn) {
	t.Helper()
	addr, _ := serveSubs(t, srv)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	c, err := jsonrpc.Dial(ctx, "tcp://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ctx, c.(*jsonrpc.Conn)
}

func heapInUse() uint64 {
	least := ^uint64(0)
	for range 5 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		least = min(least, m.HeapInuse)
	}
	return least
}

// A client that stops reading: each overflow policy does what it says, the
// server's heap stays bounded, and another connection is served meanwhile.
func TestSubscribeSlowConsumerPolicies(t *testing.T) {
	const size = 64 << 10 // bytes per event
	for _, c := range []struct {
		name   string
		policy jsonrpc.OverflowPolicy
	}{{"block", jsonrpc.OverflowBlock}, {"drop-oldest", jsonrpc.OverflowDropOldest}, {"close", jsonrpc.OverflowClose}} {
		t.Run(c.name, func(t *testing.T) {
			f := newSubsFixture(0, jsonrpc.SubscriptionKindOptions{Buffer: 16, Overflow: c.policy})
			srv := &jsonrpc.Server{Handler: f.mux}
			dial := rawTransports(t, srv)["tcp"]
			before := heapInUse()
			send, read := dial()
			send(`{"jsonrpc":"2.0","id":1,"method":"test_subscribe","params":["flood",{"size":` + strconv.Itoa(size) + `}]}`)
			read() // the response; then stop reading
			// Let the producer run into the bound.
			deadline := time.Now().Add(5 * time.Second)
			for prev := int64(-1); time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
				n := f.sent.Load()
				if c.policy == jsonrpc.OverflowClose && len(f.sendErr) > 0 {
					break
				}
				if c.policy == jsonrpc.OverflowBlock && n == prev {
					break // blocked
				}
				if c.policy == jsonrpc.OverflowDropOldest && n > 2000 {
					break // far past what the buffer and the socket hold
				}
				prev = n
			}
			growth := int64(heapInUse()) - int64(before)
			t.Logf("%s: %d events accepted, heap growth %d KiB", c.name, f.sent.Load(), growth>>10)
			// The buffer (16 events) plus the event being written plus the
			// socket buffers are all that may be held: a few MiB, where an
			// unbounded queue would hold every event accepted (drop-oldest
			// accepts over 2,000 of 64 KiB: 128 MiB). The bound leaves room
			// for the garbage other goroutines make on a busy machine.
			if growth > 24<<20 {
				t.Errorf("heap grew by %d bytes", growth)
			}
			// Another connection is served meanwhile.
			send2, read2 := dial()
			send2(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if got := string(read2()); got != `{"jsonrpc":"2.0","id":2,"result":"pong"}` {
				t.Fatalf("other connection: %s", got)
			}
			switch c.policy {
			case jsonrpc.OverflowBlock:
				if n := f.sent.Load(); n > 200 {
					t.Errorf("block: %d events accepted by a client that reads none", n)
				}
			case jsonrpc.OverflowDropOldest:
				// Reading again: events arrive, one of them reports drops.
				var dropped int64
				for i := 0; i < 2000 && dropped == 0; i++ {
					ev := decodeEvent(t, read())
					dropped = ev.Params.Dropped
				}
				if dropped == 0 {
					t.Error("drop-oldest: no event reported dropped events")
				}
			case jsonrpc.OverflowClose:
				select {
				case err := <-f.sendErr:
					if !errors.Is(err, jsonrpc.ErrSubscriptionClosed) {
						t.Fatalf("close: Send returned %v", err)
					}
				default:
					t.Fatal("close: the producer was never stopped")
				}
				// Reading again: the queued events, then the final error.
				for {
					ev := decodeEvent(t, read())
					if ev.Params.Error != nil {
						if ev.Params.Error.Code != jsonrpc.CodeSubscriptionOverflow {
							t.Fatalf("final error %+v", ev.Params.Error)
						}
						break
					}
				}
				if f.subs.Live() != 0 {
					t.Errorf("%d subscriptions live after overflow", f.subs.Live())
				}
			}
		})
	}
}

// A client that does not take its events ends its subscription with
// ErrSubscriptionOverflow (bounded memory) and unsubscribes.
func TestSubscribeClientOverflow(t *testing.T) {
	f := newSubsFixture(0)
	srv := &jsonrpc.Server{Handler: f.mux}
	ctx, c := dialSubsServer(t, srv)
	sub, err := jsonrpc.SubscribeWith[string](ctx, c, jsonrpc.SubscribeOptions{Namespace: "test", Buffer: 4}, "flood", floodParams{Size: 10})
	if err != nil {
		t.Fatal(err)
	}
	for f.subs.Live() != 0 {
		if ctx.Err() != nil {
			t.Fatal("the client never unsubscribed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	n := 0
	for range sub.Events() {
		n++
	}
	if n != 4 || !errors.Is(sub.Err(), jsonrpc.ErrSubscriptionOverflow) {
		t.Fatalf("%d events, Err %v", n, sub.Err())
	}
}

// 10,000 subscriptions over 100 connections, then every client goes away:
// every producer's context is cancelled and no goroutine is left.
func TestSubscribeManyThenDisconnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newSubsFixture(0)
	srv := &jsonrpc.Server{Handler: f.mux}
	addr, served := serveSubs(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const conns, per = 100, 100
	var clients []jsonrpc.Client
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		c, err := jsonrpc.Dial(ctx, "tcp://"+addr)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < per; j++ {
				if _, err := jsonrpc.Subscribe[int](ctx, c.(*jsonrpc.Conn), "test", "count", countParams{N: 0}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := f.subs.Live(); n != conns*per {
		t.Fatalf("%d live subscriptions, want %d", n, conns*per)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("%d subscriptions: %d goroutines, heap in use %d MiB", conns*per, runtime.NumGoroutine(), ms.HeapInuse>>20)
	for _, c := range clients {
		c.Close()
	}
	for f.canceled.Load() != conns*per || f.subs.Live() != 0 {
		if ctx.Err() != nil {
			t.Fatalf("%d of %d producers cancelled, %d live", f.canceled.Load(), conns*per, f.subs.Live())
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.Shutdown(ctx)
	<-served
}

// Shutdown ends live subscriptions: their producers' contexts are cancelled
// and Shutdown returns.
func TestSubscribeEndedByShutdown(t *testing.T) {
	f := newSubsFixture(0)
	srv := &jsonrpc.Server{Handler: f.mux}
	addr, served := serveSubs(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, "tcp://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := jsonrpc.Subscribe[int](ctx, c.(*jsonrpc.Conn), "test", "count", countParams{N: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if ev, err := sub.Next(ctx); err != nil || ev != i {
			t.Fatalf("event %d: %d %v", i, ev, err)
		}
	}
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	<-served
	// The producer's context is cancelled as the connection closes; the
	// producer itself notices on its own goroutine.
	for deadline := time.Now().Add(5 * time.Second); f.canceled.Load() != 1 || f.subs.Live() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("after Shutdown: %d producers cancelled, %d live", f.canceled.Load(), f.subs.Live())
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := sub.Next(ctx); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("client after Shutdown: %v", err)
	}
}

// Method names of one's own on both sides: the server's
// SubscriptionsOptions and the client's SubscribeOptions replace the three
// names a namespace makes, and nothing answers under the namespace's.
func TestSubscribeMethodNamesOfOnesOwn(t *testing.T) {
	mux := jsonrpc.NewMux()
	subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{SubscribeMethod: "watch", UnsubscribeMethod: "unwatch", NotificationMethod: "changed"})
	jsonrpc.AddSubscription(subs, "n", func(ctx context.Context, _ struct{}, sink *jsonrpc.Sink[int]) error {
		sink.Send(7)
		<-ctx.Done()
		return nil
	})
	if sub, unsub, notif := subs.MethodNames(); sub != "watch" || unsub != "unwatch" || notif != "changed" {
		t.Fatalf("MethodNames: %s %s %s", sub, unsub, notif)
	}
	srv := &jsonrpc.Server{Handler: mux}
	ctx, c := dialSubsServer(t, srv)
	if _, err := jsonrpc.Subscribe[int](ctx, c, "", "n"); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("_subscribe: %v", err)
	}
	sub, err := jsonrpc.SubscribeWith[int](ctx, c, jsonrpc.SubscribeOptions{SubscribeMethod: "watch", UnsubscribeMethod: "unwatch", NotificationMethod: "changed"}, "n")
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Next(ctx); ev != 7 || err != nil {
		t.Fatalf("Next: %d, %v", ev, err)
	}
	if err := sub.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	for subs.Live() != 0 {
		if ctx.Err() != nil {
			t.Fatal("unwatch did not end the subscription")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
