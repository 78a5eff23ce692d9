package nats_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/seedhq/jsonrpc"
	jnats "github.com/seedhq/jsonrpc/nats"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// runNATS starts an embedded NATS server on a free loopback port.
func runNATS(t testing.TB, configure ...func(*natsserver.Options)) *natsserver.Server {
	t.Helper()
	opts := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	for _, f := range configure {
		f(opts)
	}
	ns, err := natsserver.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// natsURL is the nats:// URL of subject on ns.
func natsURL(ns *natsserver.Server, subject string) string {
	return strings.TrimSuffix(ns.ClientURL(), "/") + "/" + subject
}

// instance is one server instance: its methods report which instance served them.
type instance struct {
	name  string
	srv   *jsonrpc.Server
	l     *jsonrpc.Listener
	calls atomic.Int64
	notes atomic.Int64
}

func newInstance(t testing.TB, name, url string, delay time.Duration, opts ...jnats.ListenOptions) *instance {
	t.Helper()
	in := &instance{name: name}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "who", func(ctx context.Context, p []int) (string, error) {
		in.calls.Add(1)
		if delay > 0 {
			time.Sleep(delay)
		}
		return in.name, nil
	})
	jsonrpc.Register(mux, "note", func(ctx context.Context, p []int) (any, error) {
		in.notes.Add(1)
		return nil, nil
	})
	jsonrpc.Register(mux, "fail", func(ctx context.Context, p []int) (any, error) {
		return nil, jsonrpc.Errorf(-32042, "failed on purpose").WithData(struct {
			Instance string `json:"instance"`
			N        []int  `json:"n"`
		}{in.name, p})
	})
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p []string) ([]string, error) { return p, nil })
	jsonrpc.Register(mux, "repeat", func(ctx context.Context, p [1]int) (string, error) { return strings.Repeat("x", p[0]), nil })
	mux.HandleExtension("rpc.discover", jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return map[string]any{"openrpc": "1.3.2", "info": map[string]string{"title": "Test Service", "version": "1.2.3", "description": "who serves"}, "methods": []any{}}, nil
	}))
	in.srv = &jsonrpc.Server{Handler: mux}
	var err error
	var lo jnats.ListenOptions
	if len(opts) > 0 {
		lo = opts[0]
	}
	in.l, err = jnats.Listen(in.srv, url, lo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.srv.Shutdown(context.Background()) })
	return in
}

func dial(t testing.TB, url string) jsonrpc.Client {
	t.Helper()
	c, err := jsonrpc.Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestQueueGroupSpreadsCallsOverInstances(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.who")
	a := newInstance(t, "a", url, 0)
	b := newInstance(t, "b", url, 0)
	ctx := ctxTimeout(t, 60*time.Second)
	const clients, perClient = 8, 125
	var wg sync.WaitGroup
	var answered atomic.Int64
	errs := make(chan error, clients*perClient)
	for range clients {
		c := dial(t, url)
		wg.Go(func() {
			for i := range perClient {
				var who string
				if err := c.Call(ctx, "who", []int{i}, &who); err != nil {
					errs <- err
					continue
				}
				if who != "a" && who != "b" {
					errs <- fmt.Errorf("answer %q", who)
					continue
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if answered.Load() != clients*perClient {
		t.Fatalf("%d of %d calls answered", answered.Load(), clients*perClient)
	}
	if a.calls.Load() == 0 || b.calls.Load() == 0 || a.calls.Load()+b.calls.Load() != clients*perClient {
		t.Fatalf("instances served a=%d b=%d", a.calls.Load(), b.calls.Load())
	}
	t.Logf("a served %d, b served %d", a.calls.Load(), b.calls.Load())
}

func TestNotificationsDeliveredOnce(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.note")
	a := newInstance(t, "a", url, 0)
	b := newInstance(t, "b", url, 0)
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	for i := range 200 {
		if err := c.Notify(ctx, "note", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	// Notify returns once the endpoint has served the notification.
	if n := a.notes.Load() + b.notes.Load(); n != 200 {
		t.Fatalf("%d notifications served, want 200 (a=%d b=%d)", n, a.notes.Load(), b.notes.Load())
	}
	// A publish without a reply subject is served too, and never answered.
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	replies, _ := nc.SubscribeSync("stray.replies")
	nc.Publish("svc.note", []byte(`{"jsonrpc":"2.0","method":"note","params":[1]}`))
	nc.Publish("svc.note", []byte(`{"jsonrpc":"2.0","id":1,"method":"note","params":[1]}`)) // served, nowhere to answer
	nc.Flush()
	deadline := time.Now().Add(10 * time.Second)
	for a.notes.Load()+b.notes.Load() != 202 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := a.notes.Load() + b.notes.Load(); n != 202 {
		t.Fatalf("%d served, want 202", n)
	}
	if m, err := replies.NextMsg(50 * time.Millisecond); err == nil {
		t.Fatalf("unexpected reply %s", m.Data)
	}
}

func TestBatchIsOneMessageWithOneAnswer(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.batch")
	a := newInstance(t, "a", url, 0)
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	var b jsonrpc.Batch
	var who1, who2 string
	one := b.Call("who", []int{1}, &who1)
	b.Notify("note", []int{2})
	two := b.Call("who", []int{3}, &who2)
	bad := b.Call("fail", []int{4}, nil)
	if err := c.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if one.Err != nil || two.Err != nil || who1 != "a" || who2 != "a" {
		t.Fatalf("calls: %v %v %q %q", one.Err, two.Err, who1, who2)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(bad.Err, &rpcErr) || rpcErr.Code != -32042 {
		t.Fatalf("failing call: %v", bad.Err)
	}
	if a.notes.Load() != 1 {
		t.Fatalf("notification in batch served %d times", a.notes.Load())
	}
	// One message in, one reply out: read it raw.
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m, err := nc.Request("svc.batch", []byte(`[{"jsonrpc":"2.0","id":"x","method":"echo","params":["p"]},{"jsonrpc":"2.0","method":"note","params":[1]},{"jsonrpc":"2.0","id":9,"method":"nope"}]`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := string(m.Data)
	if !strings.HasPrefix(got, "[") || !strings.Contains(got, `{"jsonrpc":"2.0","id":"x","result":["p"]}`) || !strings.Contains(got, `"id":9,"error":{"code":-32601`) || strings.Count(got, `"jsonrpc"`) != 2 {
		t.Fatalf("batch reply %s", got)
	}
	// All notifications: an empty acknowledgement, not a JSON-RPC reply.
	m, err = nc.Request("svc.batch", []byte(`[{"jsonrpc":"2.0","method":"note","params":[1]}]`), 10*time.Second)
	if err != nil || len(m.Data) != 0 {
		t.Fatalf("all-notification batch: %q %v", m.Data, err)
	}
}

func TestHandlerErrorsArriveIntact(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.fail")
	newInstance(t, "a", url, 0)
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	err := c.Call(ctx, "fail", []int{7}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("got %v, want *jsonrpc.Error", err)
	}
	if rpcErr.Code != -32042 || rpcErr.Message != "failed on purpose" || string(rpcErr.Data) != `{"instance":"a","n":[7]}` {
		t.Fatalf("error %d %q %s", rpcErr.Code, rpcErr.Message, rpcErr.Data)
	}
	err = c.Call(ctx, "missing", nil, nil)
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("missing method: %v", err)
	}
}

func TestOversizeMessageGetsTheUsualError(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.big")
	in := newInstance(t, "a", url, 0)
	in.srv.MaxMessageSize = 1000
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	err := c.Call(ctx, "echo", []string{strings.Repeat("x", 2000)}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "message too large") {
		t.Fatalf("got %v", err)
	}
	// Other callers are unharmed.
	var got []string
	if err := c.Call(ctx, "echo", []string{"ok"}, &got); err != nil || got[0] != "ok" {
		t.Fatalf("after: %v %v", got, err)
	}
}

func TestNoRespondersIsImmediate(t *testing.T) {
	ns := runNATS(t)
	c := dial(t, natsURL(ns, "svc.nobody"))
	ctx := ctxTimeout(t, 30*time.Second)
	for _, call := range []func() error{
		func() error { return c.Call(ctx, "who", nil, nil) },
		func() error { return c.Notify(ctx, "note", nil) },
		func() error {
			var b jsonrpc.Batch
			b.Call("who", nil, nil)
			return c.Batch(ctx, &b)
		},
	} {
		start := time.Now()
		err := call()
		elapsed := time.Since(start)
		if !errors.Is(err, jnats.ErrNoResponders) || !errors.Is(err, natsgo.ErrNoResponders) {
			t.Fatalf("got %v, want ErrNoResponders", err)
		}
		// Immediate: nowhere near the call's 30 s (a bound loose enough
		// for -race on a loaded machine; a reply takes about 1 ms).
		if elapsed > time.Second {
			t.Fatalf("no responders took %v", elapsed)
		}
	}
}

// load calls "who" from clients until stop is closed, and reports the
// calls made and every failure.
func load(ctx context.Context, t *testing.T, url string, clients int, stop <-chan struct{}) (done func() (int64, []error)) {
	var wg sync.WaitGroup
	var n atomic.Int64
	var mu sync.Mutex
	var errs []error
	for range clients {
		c := dial(t, url)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := c.Call(ctx, "who", []int{i}, nil); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				n.Add(1)
			}
		})
	}
	return func() (int64, []error) { wg.Wait(); return n.Load(), errs }
}

func TestRollingRestartUnderLoadLosesNoCall(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.roll")
	a := newInstance(t, "a", url, 2*time.Millisecond)
	b := newInstance(t, "b", url, 2*time.Millisecond)
	ctx := ctxTimeout(t, 60*time.Second)
	stop := make(chan struct{})
	done := load(ctx, t, url, 8, stop)
	waitCalls := func(in *instance, n int64) {
		deadline := time.Now().Add(20 * time.Second)
		for in.calls.Load() < n && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	}
	waitCalls(a, 100)
	// Restart a, then b, each while the other serves.
	if err := a.srv.Shutdown(ctxTimeout(t, 20*time.Second)); err != nil {
		t.Fatalf("shutdown a: %v", err)
	}
	aServed := a.calls.Load()
	a2 := newInstance(t, "a2", url, 2*time.Millisecond)
	waitCalls(a2, 100)
	if err := b.srv.Shutdown(ctxTimeout(t, 20*time.Second)); err != nil {
		t.Fatalf("shutdown b: %v", err)
	}
	waitCalls(a2, a2.calls.Load()+100)
	close(stop)
	n, errs := done()
	for _, err := range errs {
		t.Error(err)
	}
	if a.calls.Load() != aServed {
		t.Fatalf("a served %d calls after its Shutdown returned", a.calls.Load()-aServed)
	}
	if total := a.calls.Load() + b.calls.Load() + a2.calls.Load(); total != n {
		t.Fatalf("%d calls answered, %d served", n, total)
	}
	t.Logf("%d calls, no error: a=%d b=%d a2=%d", n, a.calls.Load(), b.calls.Load(), a2.calls.Load())
}

// ask sends a $SRV request and gathers the replies of every instance.
func ask(t *testing.T, nc *natsgo.Conn, subject string, want int) [][]byte {
	t.Helper()
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, nil); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for len(out) < want {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("%s: %d replies of %d: %v", subject, len(out), want, err)
		}
		out = append(out, m.Data)
	}
	if m, err := sub.NextMsg(50 * time.Millisecond); err == nil {
		t.Fatalf("%s: an extra reply %s", subject, m.Data)
	}
	return out
}

func TestMicroDiscoveryListsEachInstanceWithStats(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.disc")
	a := newInstance(t, "a", url, 0)
	b := newInstance(t, "b", url, 0)
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	for i := range 40 {
		c.Call(ctx, "who", []int{i}, nil)
	}
	c.Call(ctx, "fail", []int{0}, nil)
	c.Notify(ctx, "note", nil)
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	ids := map[string]bool{}
	for _, raw := range ask(t, nc, "$SRV.PING.Test-Service", 2) {
		var p micro.Ping
		if err := json.Unmarshal(raw, &p); err != nil || p.Type != micro.PingResponseType || p.Version != "1.2.3" {
			t.Fatalf("ping %s: %v", raw, err)
		}
		ids[p.ID] = true
	}
	if len(ids) != 2 {
		t.Fatalf("ping ids %v", ids)
	}
	for _, raw := range ask(t, nc, "$SRV.INFO.Test-Service", 2) {
		var info micro.Info
		if err := json.Unmarshal(raw, &info); err != nil || info.Description != "who serves" || len(info.Endpoints) != 1 ||
			info.Endpoints[0].Subject != "svc.disc" || info.Endpoints[0].QueueGroup != jnats.DefaultQueueGroup {
			t.Fatalf("info %s: %v", raw, err)
		}
	}
	var requests, errorsSeen, notes int
	for _, raw := range ask(t, nc, "$SRV.STATS.Test-Service", 2) {
		var st micro.Stats
		if err := json.Unmarshal(raw, &st); err != nil || len(st.Endpoints) != 1 {
			t.Fatalf("stats %s: %v", raw, err)
		}
		var data jnats.StatsData
		if err := json.Unmarshal(st.Endpoints[0].Data, &data); err != nil {
			t.Fatalf("stats data %s: %v", st.Endpoints[0].Data, err)
		}
		requests += st.Endpoints[0].NumRequests
		errorsSeen += int(data.ErrorResponses)
		notes += int(data.Notifications)
		if !ids[st.ID] {
			t.Fatalf("stats of unknown instance %s", st.ID)
		}
	}
	if requests != 42 || errorsSeen != 1 || notes != 1 {
		t.Fatalf("stats: %d requests, %d errors, %d notifications; want 42, 1, 1", requests, errorsSeen, notes)
	}
	if got := a.calls.Load() + b.calls.Load(); got != 40 {
		t.Fatalf("served %d", got)
	}
	// A drained instance leaves discovery.
	a.srv.Shutdown(ctx)
	ask(t, nc, "$SRV.PING.Test-Service", 1)
}

func TestQueueGroupOption(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.groups")
	a := newInstance(t, "a", url+"?queue=one", 0)
	b := newInstance(t, "b", url, 0, jnats.ListenOptions{QueueGroup: "two"})
	if a.l.URL != url+"?queue=one" {
		t.Fatalf("listener URL %s", a.l.URL)
	}
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	// Two groups: each gets every notification.
	for range 10 {
		if err := c.Notify(ctx, "note", nil); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for (a.notes.Load() != 10 || b.notes.Load() != 10) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if a.notes.Load() != 10 || b.notes.Load() != 10 {
		t.Fatalf("a=%d b=%d, want 10 each", a.notes.Load(), b.notes.Load())
	}
}

func TestRegisteredSchemeWithUserPassword(t *testing.T) {
	ns := runNATS(t, func(o *natsserver.Options) { o.Username, o.Password = "alice", "s3cret" })
	host := strings.TrimPrefix(ns.ClientURL(), "nats://")
	srv := &jsonrpc.Server{Handler: echoMux()}
	l, err := srv.Listen("nats://alice:s3cret@" + host + "/svc.auth")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	if strings.Contains(l.URL, "s3cret") || l.URL != "nats://"+host+"/svc.auth" {
		t.Fatalf("listener URL %q", l.URL)
	}
	ctx := ctxTimeout(t, 30*time.Second)
	c, err := jsonrpc.Dial(ctx, "nats://alice:s3cret@"+host+"/svc.auth")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []string
	if err := c.Call(ctx, "echo", []string{"hi"}, &got); err != nil || got[0] != "hi" {
		t.Fatalf("%v %v", got, err)
	}
	_, err = jsonrpc.Dial(ctx, "nats://alice:wrong@"+host+"/svc.auth")
	if err == nil || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad password: %v", err)
	}
}

func TestURLErrors(t *testing.T) {
	ctx := ctxTimeout(t, 10*time.Second)
	for url, want := range map[string]string{
		"nats://127.0.0.1:1/":               "names no valid subject",
		"nats://127.0.0.1:1/a.>":            "wildcard",
		"nats://127.0.0.1:1/a?cred=x":       "unknown query parameter cred",
		"nats://127.0.0.1:1/a?queue=x":      "applies to Listen only",
		"nats://127.0.0.1:1/a?tls_cert=a":   "go together",
		"nats://u:pw@127.0.0.1:1/a?creds=x": "open x",
		"nats://u:pw@127.0.0.1:1/a":         "connect to nats://127.0.0.1:1: ",
	} {
		_, err := jsonrpc.Dial(ctx, url)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "pw") {
			t.Errorf("Dial(%s) = %v, want %q", url, err, want)
		}
	}
}

func echoMux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p []string) ([]string, error) { return p, nil })
	return mux
}

func TestOverMaxPayload(t *testing.T) {
	ns := runNATS(t, func(o *natsserver.Options) { o.MaxPayload = 4096 })
	url := natsURL(ns, "svc.payload")
	newInstance(t, "a", url, 0)
	c := dial(t, url)
	ctx := ctxTimeout(t, 30*time.Second)
	// A reply over max_payload becomes an error response, at once.
	err := c.Call(ctx, "repeat", [1]int{8000}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInternalError || !strings.Contains(rpcErr.Message, "max_payload") {
		t.Fatalf("big reply: %v", err)
	}
	// A request over it fails in the client, before anything is sent.
	err = c.Call(ctx, "echo", []string{strings.Repeat("y", 8000)}, nil)
	if !errors.Is(err, natsgo.ErrMaxPayload) {
		t.Fatalf("big request: %v", err)
	}
	var s string
	if err := c.Call(ctx, "repeat", [1]int{10}, &s); err != nil || s != "xxxxxxxxxx" {
		t.Fatalf("after: %q %v", s, err)
	}
}

// ListenOptions set an endpoint's micro identity over its OpenRPC info, and
// a client's WithCallTimeout bounds a call whose context has no deadline.
func TestListenOptionsAndWithCallTimeout(t *testing.T) {
	ns := runNATS(t)
	url := natsURL(ns, "svc.opts")
	newInstance(t, "slow", url, 3*time.Second, jnats.ListenOptions{Name: "Other-Name", Version: "2.0.0", Description: "set by options"})
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, raw := range ask(t, nc, "$SRV.INFO.Other-Name", 1) {
		var info micro.Info
		if err := json.Unmarshal(raw, &info); err != nil || info.Version != "2.0.0" || info.Description != "set by options" {
			t.Fatalf("info %s: %v", raw, err)
		}
	}
	c, err := jnats.Dial(ctxTimeout(t, 10*time.Second), url, jnats.WithCallTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	err = c.Call(context.Background(), "who", []int{1}, nil)
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, natsgo.ErrTimeout) {
		t.Fatalf("a call longer than WithCallTimeout: %v", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("the call waited %v, for the handler", d)
	}
}
