package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/seedhq/jsonrpc"
	jnats "github.com/seedhq/jsonrpc/nats"
	"github.com/seedhq/jsonrpc/state"
)

// TestServeStateUnreachable: serve --state names a NATS server nobody
// runs, or one without JetStream: serve does not start, says why and what
// to do, exit 3.
func TestServeStateUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := run(t, "", "serve", "--state", "nats://"+addr, "--listen", "http://127.0.0.1:0/")
	if r.code != 3 || !strings.Contains(r.stderr, "--state: cannot connect to nats://"+addr) || !strings.Contains(r.stderr, "nats-server -js") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, "", "serve", "--state", "nats://"+addr+"/subject", "--listen", "http://127.0.0.1:0/")
	if r.code != 2 || !strings.Contains(r.stderr, "want nats://HOST:PORT") {
		t.Fatalf("a subject in --state: exit %d\n%s", r.code, r.stderr)
	}
	// A NATS server without JetStream: the same, with its own hint.
	_, plain := startNATSServer(t)
	r = run(t, "", "serve", "--state", plain, "--listen", "http://127.0.0.1:0/")
	if r.code != 3 || !strings.Contains(r.stderr, "--state "+plain+": ") || !strings.Contains(r.stderr, "must run with JetStream enabled") {
		t.Fatalf("a NATS server without JetStream: exit %d\n%s", r.code, r.stderr)
	}
}

// replicas is deploy/replicas/run.sh running: three `jrpc serve --mcp
// --state` instances behind nginx round-robin, one nats-server.
type replicas struct {
	t         *testing.T
	dir       string
	base      int // nginx; instance i on base+i (http) and base+10+i (ws)
	natsPort  int
	script    *exec.Cmd
	scriptOut *syncBuffer
}

func (r *replicas) front() string       { return fmt.Sprintf("127.0.0.1:%d", r.base) }
func (r *replicas) mcpURL(i int) string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", r.base+i) }
func (r *replicas) wsURL(i int) string  { return fmt.Sprintf("ws://127.0.0.1:%d/ws", r.base+10+i) }

// pid reads the process id run.sh wrote in name.
func (r *replicas) pid(name string) int {
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		r.t.Fatal(err)
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// freePorts reports whether every port is free on 127.0.0.1.
func freePorts(ports ...int) bool {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		ls = append(ls, l)
	}
	return true
}

// findNginx returns nginx's path, or skips the test (fails it in CI).
func findNginx(t *testing.T) string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("JSONRPC_REQUIRE_NGINX") != "" {
		t.Fatal("nginx is required here (CI or JSONRPC_REQUIRE_NGINX) but not installed: apt-get install -y nginx")
	}
	t.Skip("nginx not installed (apt-get install -y nginx)")
	return ""
}

// startReplicas runs deploy/replicas/run.sh as docs/deployment.md does,
// on free ports, with this test's jrpc and flags added to each jrpc serve,
// and waits for its "ready" line.
func startReplicas(t *testing.T, flags ...string) *replicas {
	findNginx(t)
	r := &replicas{t: t, dir: t.TempDir(), scriptOut: &syncBuffer{}}
	for range 50 {
		r.base = 20000 + mrand.IntN(30000)
		r.natsPort = r.base + 20
		if freePorts(r.base, r.base+1, r.base+2, r.base+3, r.base+11, r.base+12, r.base+13, r.natsPort) {
			break
		}
	}
	r.script = exec.Command("bash", append([]string{filepath.Join("..", "..", "deploy", "replicas", "run.sh")}, flags...)...)
	r.script.Env = append(os.Environ(), "BASE="+strconv.Itoa(r.base), "NATS_PORT="+strconv.Itoa(r.natsPort), "DIR="+r.dir, "JRPC="+bin)
	r.script.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := r.script.StdoutPipe()
	r.script.Stderr = r.scriptOut
	if err := r.script.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.script.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { r.script.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			syscall.Kill(-r.script.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("run.sh did not stop within 15 s of SIGTERM")
		}
		// It stopped everything it started.
		for _, f := range []string{"jrpc-1.pid", "jrpc-2.pid", "jrpc-3.pid", "nats-server.pid", "nginx/nginx.pid"} {
			b, err := os.ReadFile(filepath.Join(r.dir, f))
			if err != nil {
				continue // nginx removes its pid file when it exits
			}
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == nil {
				t.Errorf("run.sh left %s (process %d) running", f, pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			for _, f := range []string{"jrpc-1.log", "jrpc-2.log", "jrpc-3.log", "nats-server.log", "nginx/logs/error.log"} {
				b, _ := os.ReadFile(filepath.Join(r.dir, f))
				t.Logf("%s:\n%s", f, b)
			}
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.scriptOut.Write([]byte(sc.Text() + "\n"))
			if strings.HasPrefix(sc.Text(), "ready: ") {
				ready <- sc.Text()
			}
		}
	}()
	select {
	case line := <-ready:
		if !strings.Contains(line, "http://"+r.front()+"/mcp") {
			t.Fatalf("run.sh: %s", line)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("run.sh was not ready within 40 s:\n%s", r.scriptOut.String())
	}
	return r
}

// meta2026 is the _meta of an MCP 2026-07-28 request.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// errHTTP is the error of a POST answered with no JSON-RPC response.
type errHTTP struct {
	status int
	body   string
}

func (e *errHTTP) Error() string { return fmt.Sprintf("HTTP %d: %.200s", e.status, e.body) }

// call2026 sends one MCP 2026-07-28 request (stateless: any instance
// serves it) to url and returns its response.
func call2026(ctx context.Context, hc *http.Client, url string, id int, method, name, params string) (json.RawMessage, *jsonrpc.Error, error) {
	return post2026(ctx, hc, url, id, method, name, "{"+meta2026+","+params+"}")
}

// post2026 is call2026 with the whole params object, _meta included.
func post2026(ctx context.Context, hc *http.Client, url string, id int, method, name, params string) (json.RawMessage, *jsonrpc.Error, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	// A JSON body, or an event stream whose last event is the response.
	msg := b
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msg = nil
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, fmt.Sprintf(`"id":%d`, id)) {
				msg = []byte(d)
			}
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || string(m.ID) != strconv.Itoa(id) {
		return nil, nil, &errHTTP{resp.StatusCode, string(b)}
	}
	return m.Result, m.Error, nil
}

// TestReplicas runs deploy/replicas/run.sh (docs/deployment.md's example)
// and checks what --state shares across its three instances behind nginx
// round-robin, with one instance SIGKILLed and the NATS server restarted
// under load.
func TestReplicas(t *testing.T) {
	r := startReplicas(t, "--sse-keep-alive", "250ms", "--session-idle-timeout", replicasIdle.String())
	ctx, cancel := context.WithTimeout(t.Context(), 45*time.Second)
	defer cancel()
	expiring := startExpiry(t, ctx, r)

	t.Run("BroadcastAcrossInstances", func(t *testing.T) { testReplicasBroadcast(t, ctx, r) })
	t.Run("ListenAcrossInstances", func(t *testing.T) { testReplicasListen(t, ctx, r) })
	t.Run("Session2025RoundRobin", func(t *testing.T) { testReplicasSessions(t, ctx, r) })
	t.Run("ResumeThroughAnotherInstance", func(t *testing.T) { testReplicasResume(t, ctx, r) })
	t.Run("MultiRoundTripAcrossInstances", func(t *testing.T) { testReplicasRounds(t, ctx, r) })
	t.Run("KeyRotationAcrossInstances", func(t *testing.T) { testReplicasRotation(t, ctx, r) })
	t.Run("SIGKILLUnderLoad", func(t *testing.T) { testReplicasKill(t, ctx, r) })
	t.Run("NATSRestartUnderLoad", func(t *testing.T) { testReplicasNATSRestart(t, ctx, r) })
	t.Run("SessionExpiryEverywhere", func(t *testing.T) { expiring(t) })
}

// broadcastSub subscribes to broadcast events on url: every value
// published after it returns must come.
func broadcastSub(t *testing.T, ctx context.Context, url string) *jsonrpc.Subscription[json.RawMessage] {
	t.Helper()
	c, err := jsonrpc.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sub, err := jsonrpc.Subscribe[json.RawMessage](ctx, c.(*jsonrpc.Conn), "demo", "broadcast")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// testReplicasBroadcast: subscribers on instances 1 and 3 (and one through
// nginx) receive every value demo_broadcast publishes through instance 2
// and through nginx (round-robin, so through every instance), once each,
// in order; then the values of three publishers at once, one per
// instance.
func testReplicasBroadcast(t *testing.T, ctx context.Context, r *replicas) {
	pub, err := jsonrpc.Dial(ctx, r.wsURL(2))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	publish := func(v any) error {
		var ok bool
		if err := pub.Call(ctx, "demo_broadcast", map[string]any{"value": v}, &ok); err != nil || !ok {
			return fmt.Errorf("demo_broadcast %v: %v %v", v, ok, err)
		}
		return nil
	}
	subs := []*jsonrpc.Subscription[json.RawMessage]{
		broadcastSub(t, ctx, r.wsURL(1)),
		broadcastSub(t, ctx, r.wsURL(3)),
		broadcastSub(t, ctx, "ws://"+r.front()+"/ws"),
	}
	hc := &http.Client{}
	for i := 1; i <= 10; i++ {
		if i%2 == 0 {
			if err := publish(i); err != nil {
				t.Fatal(err)
			}
			continue
		}
		res, rerr, err := call2026(ctx, hc, "http://"+r.front()+"/mcp", i, "demo_broadcast", "", fmt.Sprintf(`"value":%d`, i))
		if err != nil || rerr != nil || string(res) != "true" {
			t.Fatalf("demo_broadcast %d through nginx: %s %v %v", i, res, rerr, err)
		}
	}
	// As docs/deployment.md shows it.
	if res := run(t, "", "--streamable", "call", "http://"+r.front()+"/mcp", "demo_broadcast", `{"value": 11}`); res.code != 0 || res.stdout != "true\n" {
		t.Fatalf("jrpc --streamable call …/mcp demo_broadcast: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for k, sub := range subs {
		for i := 1; i <= 11; i++ {
			v, err := sub.Next(ctx)
			if err != nil || string(v) != strconv.Itoa(i) {
				t.Fatalf("subscriber %d: event %q (%v), want %d", k, v, err, i)
			}
		}
	}

	// Under load: three publishers at once, one on each instance, 50
	// values each. Every subscriber receives all 150 once, each
	// publisher's in its order, and all three in one same order (the
	// broker's).
	const perPublisher = 50
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for p := 1; p <= 3; p++ {
		wg.Go(func() {
			c, err := jsonrpc.Dial(ctx, r.wsURL(p))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for n := 1; n <= perPublisher; n++ {
				if err := c.Call(ctx, "demo_broadcast", map[string]any{"value": []int{p, n}}, nil); err != nil {
					errs <- fmt.Errorf("publisher %d, value %d: %w", p, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var orders [][]string
	for k, sub := range subs {
		next := map[int]int{1: 1, 2: 1, 3: 1}
		var order []string
		for range 3 * perPublisher {
			v, err := sub.Next(ctx)
			var pn []int
			if err != nil || json.Unmarshal(v, &pn) != nil || len(pn) != 2 || pn[1] != next[pn[0]] {
				t.Fatalf("subscriber %d after %d events: %s %v (want each publisher's values in order: %v)", k, len(order), v, err, next)
			}
			next[pn[0]]++
			order = append(order, string(v))
		}
		orders = append(orders, order)
	}
	for k := 1; k < len(orders); k++ {
		if !slices.Equal(orders[0], orders[k]) {
			t.Fatalf("subscribers 0 and %d received the values in different orders", k)
		}
	}
}

// load runs clients that call the sleep tool (MCP 2026-07-28, stateless)
// through nginx until stop, and counts the calls.
type load struct {
	ok       atomic.Int64
	mu       sync.Mutex
	failures []error
	wg       sync.WaitGroup
	stop     atomic.Bool
}

func startLoad(ctx context.Context, url string, clients int) *load {
	l := &load{}
	for c := range clients {
		l.wg.Go(func() {
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			for id := c * 1_000_000; !l.stop.Load() && ctx.Err() == nil; id++ {
				_, rerr, err := call2026(ctx, hc, url, id, "tools/call", "sleep", `"name":"sleep","arguments":{"ms":5}`)
				if err == nil && rerr != nil {
					err = rerr
				}
				if err != nil {
					l.mu.Lock()
					l.failures = append(l.failures, err)
					l.mu.Unlock()
					continue
				}
				l.ok.Add(1)
			}
		})
	}
	return l
}

// until waits until n more calls have succeeded.
func (l *load) until(ctx context.Context, n int64) error {
	target := l.ok.Load() + n
	for l.ok.Load() < target {
		if ctx.Err() != nil {
			return fmt.Errorf("%d calls of %d after %v", l.ok.Load(), target, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

func (l *load) finish() []error {
	l.stop.Store(true)
	l.wg.Wait()
	return l.failures
}

// testReplicasKill: instance 3 is SIGKILLed while four clients call
// through nginx and while it runs a tool call whose event stream the
// client stopped reading. A call it was serving through nginx fails with
// nginx's 502 (at most one per client); every other call succeeds, then
// and after. The stream, resumed with Last-Event-ID through instance 1,
// replays the events instance 3 stored after the last one the client
// read, none twice, then ends with -32001 for the call once three
// heartbeats (--sse-keep-alive 250ms) have not come.
func testReplicasKill(t *testing.T, ctx context.Context, r *replicas) {
	s := openSession(t, ctx, r.mcpURL(3))
	cctx, cut := context.WithCancel(ctx)
	resp := s.do(cctx, r.mcpURL(3), "", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":6000},"_meta":{"progressToken":"k"}}}`)
	events := readEvents(resp.Body)
	var seen []sseEvent
	for ev := range events {
		if ev.id != "" {
			seen = append(seen, ev)
		}
		if strings.Contains(ev.data, "notifications/progress") {
			break
		}
	}
	cut()
	resp.Body.Close()
	cutAt := time.Now()
	for range events {
	}
	if len(seen) == 0 || !strings.Contains(seen[len(seen)-1].data, "notifications/progress") {
		t.Fatalf("events before the cut: %v", seen)
	}

	const clients = 4
	l := startLoad(ctx, "http://"+r.front()+"/mcp", clients)
	if err := l.until(ctx, 40); err != nil {
		t.Fatal(l.finish(), err)
	}
	// Meanwhile the call's progress events (every 600 ms) go on into the
	// store, unread: two before the kill, which comes well before the
	// call's end (6 s).
	time.Sleep(time.Until(cutAt.Add(1400 * time.Millisecond)))
	if err := syscall.Kill(r.pid("jrpc-3.pid"), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := l.until(ctx, 200); err != nil {
		t.Fatal(l.finish(), err)
	}
	failures := l.finish()
	t.Logf("%d calls, %d failed with the instance they were on", l.ok.Load(), len(failures))
	if len(failures) > clients {
		t.Fatalf("%d calls failed (at most one in flight per client): %v", len(failures), failures)
	}
	for _, err := range failures {
		if e := (*errHTTP)(nil); !errors.As(err, &e) || e.status != http.StatusBadGateway {
			t.Errorf("a call in flight on the killed instance: %v (want nginx's 502)", err)
		}
	}

	last := seen[len(seen)-1].id
	g := s.do(ctx, r.mcpURL(1), http.MethodGet, "", "Last-Event-ID", last)
	defer g.Body.Close()
	if g.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(g.Body)
		t.Fatalf("GET with Last-Event-ID %s on instance 1 after instance 3 died: %d %s", last, g.StatusCode, b)
	}
	ids := map[string]bool{}
	for _, ev := range seen {
		ids[ev.id] = true
	}
	replayed := 0
	for ev := range readEvents(g.Body) {
		if ev.id != "" && ids[ev.id] {
			t.Fatalf("event %s again after the resumption", ev.id)
		}
		ids[ev.id] = true
		if strings.Contains(ev.data, "notifications/progress") {
			replayed++
		}
		if strings.Contains(ev.data, `"id":5`) {
			if !strings.Contains(ev.data, `"code":-32001`) || replayed == 0 {
				t.Fatalf("after %d progress events replayed: %s", replayed, ev.data)
			}
			t.Logf("%d progress events replayed; the call ended with -32001 %v after the kill", replayed, time.Since(killed).Round(time.Millisecond))
			return
		}
	}
	t.Fatalf("the resumed stream ended without the call's end (%d progress events replayed)", replayed)
}

// testReplicasNATSRestart: the NATS server stops under load and starts
// again. The stateless calls all succeed throughout. While it is down,
// demo_broadcast fails at once with -32050 and a session's request with
// 503 and -32030, and a broadcast subscription made before ends with
// -32013 after the values it had (an error, never a silent gap). Once it
// is back, both work again (the session too), and a new subscription
// receives every value published after it, once, in order.
func testReplicasNATSRestart(t *testing.T, ctx context.Context, r *replicas) {
	pub, err := jsonrpc.Dial(ctx, r.wsURL(2))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	publish := func(v int) error {
		return pub.Call(ctx, "demo_broadcast", map[string]any{"value": v}, nil)
	}
	front := "http://" + r.front() + "/mcp"
	sess := openSession(t, ctx, front)
	ping := func(id int) (int, string) {
		resp := sess.do(ctx, front, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		return resp.StatusCode, mcpAnswer(resp, id)
	}
	before := broadcastSub(t, ctx, r.wsURL(1))
	l := startLoad(ctx, front, 4)
	if err := publish(1); err != nil {
		t.Fatal(err)
	}

	if err := syscall.Kill(r.pid("nats-server.pid"), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !freePorts(r.natsPort) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	// Down: a publish fails at once, clearly (or, sent in the instant the
	// server was going away, by stateRequestTimeout).
	start := time.Now()
	err = publish(2)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != -32050 || !strings.Contains(e.Message, "shared state unavailable") || time.Since(start) > stateRequestTimeout+time.Second {
		t.Fatalf("demo_broadcast with NATS down: %v after %v", err, time.Since(start))
	}
	// A session's request fails at once too, with 503 and -32030.
	start = time.Now()
	if status, a := ping(2); status != http.StatusServiceUnavailable || !strings.Contains(a, "-32030") || time.Since(start) > 3*time.Second {
		t.Fatalf("a session's ping with NATS down: %d %s after %v", status, a, time.Since(start))
	}
	// The subscription made before had 1, then ends with the broker's error.
	if v, err := before.Next(ctx); err != nil || string(v) != "1" {
		t.Fatalf("subscribed before the outage: %s %v", v, err)
	}
	if v, err := before.Next(ctx); !errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker {
		t.Fatalf("subscribed before the outage, once NATS is down: %s %v (want the end, -32013)", v, err)
	}
	if err := l.until(ctx, 100); err != nil {
		t.Fatal(l.finish(), err)
	}

	ns := exec.Command(filepath.Join(r.dir, "bin", "nats-server"), "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(r.natsPort), "-sd", filepath.Join(r.dir, "jetstream"))
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	r.t.Cleanup(func() { ns.Process.Signal(syscall.SIGTERM); ns.Wait() }) // it serves the subtests after this one
	// Back: publishes succeed again within a few seconds.
	for {
		err := publish(3)
		if err == nil {
			break
		}
		if !errors.As(err, &e) || e.Code != -32050 || ctx.Err() != nil {
			t.Fatalf("demo_broadcast once NATS is back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Instance 1 reconnects on its own (every 250 ms): until then its
	// subscribe calls fail with -32013, "try again".
	sc, err := jsonrpc.Dial(ctx, r.wsURL(1))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var after *jsonrpc.Subscription[json.RawMessage]
	for after == nil {
		after, err = jsonrpc.Subscribe[json.RawMessage](ctx, sc.(*jsonrpc.Conn), "demo", "broadcast")
		if err != nil && (!errors.As(err, &e) || e.Code != jsonrpc.CodeSubscriptionBroker || ctx.Err() != nil) {
			t.Fatalf("subscribing once NATS is back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for v := 4; v <= 8; v++ {
		if err := publish(v); err != nil {
			t.Fatal(err)
		}
	}
	for want := 4; want <= 8; want++ {
		if v, err := after.Next(ctx); err != nil || string(v) != strconv.Itoa(want) {
			t.Fatalf("subscribed after the outage: %s %v, want %d", v, err, want)
		}
	}
	// The session made before goes on, through every instance in turn.
	for id := 3; id < 6; id++ {
		if status, a := ping(id); status != http.StatusOK || !strings.Contains(a, `"result":{}`) {
			t.Fatalf("the session's ping once NATS is back: %d %s", status, a)
		}
	}
	if err := l.until(ctx, 100); err != nil {
		t.Fatal(l.finish(), err)
	}
	if failures := l.finish(); len(failures) > 0 {
		t.Fatalf("%d stateless calls failed while NATS restarted: %v", len(failures), failures)
	}
}

// testReplicasRounds: the greet tool's multi round-trips (MCP 2026-07-28)
// through nginx: each round goes to the next instance, which verifies the
// requestState another signed, by the key ring they share in NATS (the
// instances have no --mcp-state-key: without the ring each would sign
// with a random key of its own, and the second round would be refused).
func testReplicasRounds(t *testing.T, ctx context.Context, r *replicas) {
	elicit := jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) {
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	}))
	caps := jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	c, err := jsonrpc.DialStreamableHTTP(ctx, "http://"+r.front()+"/mcp", jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), elicit, caps)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 6 {
		var greet struct {
			StructuredContent struct {
				Greeting string `json:"greeting"`
			} `json:"structuredContent"`
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &greet); err != nil || greet.StructuredContent.Greeting != "Hello, Ada!" {
			t.Fatalf("greet %d: %+v %v", i, greet, err)
		}
	}
}

// session2025 is an MCP 2025-11-25 session spoken in raw HTTP, so that
// the test picks the instance of each request.
type session2025 struct {
	t  *testing.T
	hc *http.Client
	id string
}

// do sends one request (method "" for DELETE) to url and returns the
// response, its body unread.
func (s *session2025) do(ctx context.Context, url, method, body string, hdr ...string) *http.Response {
	s.t.Helper()
	resp, err := s.send(ctx, url, method, body, hdr...)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// send is do, for any goroutine.
func (s *session2025) send(ctx context.Context, url, method, body string, hdr ...string) (*http.Response, error) {
	verb := http.MethodPost
	if body == "" {
		verb = method
	}
	req, err := http.NewRequestWithContext(ctx, verb, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return s.hc.Do(req)
}

// sseEvent is one event of an event stream.
type sseEvent struct{ id, data string }

// readEvents returns the events of body as they come, until it ends.
func readEvents(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "), strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return ch
}

// mcpAnswer returns the JSON-RPC response with id in resp (a JSON body or an
// event stream), or "" when there is none.
func mcpAnswer(resp *http.Response, id int) string {
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for ev := range readEvents(resp.Body) {
		if strings.Contains(ev.data, fmt.Sprintf(`"id":%d`, id)) && !strings.Contains(ev.data, `"method"`) {
			return ev.data
		}
	}
	return ""
}

// openSession initialises a 2025-11-25 session through url.
func openSession(t *testing.T, ctx context.Context, url string) *session2025 {
	s := &session2025{t: t, hc: &http.Client{}}
	resp := s.do(ctx, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"replicas","version":"1"}}}`)
	s.id = resp.Header.Get("Mcp-Session-Id")
	if a := mcpAnswer(resp, 1); s.id == "" || !strings.Contains(a, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, s.id, a)
	}
	if resp := s.do(ctx, url, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return s
}

// testReplicasSessions: a 2025-11-25 session initialised through nginx
// continues through nginx (round-robin: every instance in turn) and
// through each instance directly, as do four more at once; a DELETE
// through nginx ends the first on all.
func testReplicasSessions(t *testing.T, ctx context.Context, r *replicas) {
	front := "http://" + r.front() + "/mcp"
	s := openSession(t, ctx, front)
	urls := []string{front, front, front, r.mcpURL(1), r.mcpURL(2), r.mcpURL(3)}
	for i, u := range urls {
		id := 10 + i
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":1}}}`, id, i)
		resp := s.do(ctx, u, "", body)
		if a := mcpAnswer(resp, id); resp.StatusCode != http.StatusOK || !strings.Contains(a, fmt.Sprintf(`"structuredContent":{"sum":%d}`, i+1)) {
			t.Fatalf("call %d through %s: %d %s", i, u, resp.StatusCode, a)
		}
	}
	// Under load: four more sessions at once, 15 calls each through nginx.
	var wg sync.WaitGroup
	failed := make(chan string, 4)
	for range 4 {
		o := openSession(t, ctx, front)
		wg.Go(func() {
			for i := range 15 {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":2}}}`, 100+i, i)
				resp, err := o.send(ctx, front, "", body)
				if err != nil {
					failed <- fmt.Sprintf("session %s, call %d: %v", o.id, i, err)
					return
				}
				if a := mcpAnswer(resp, 100+i); resp.StatusCode != http.StatusOK || !strings.Contains(a, fmt.Sprintf(`"structuredContent":{"sum":%d}`, i+2)) {
					failed <- fmt.Sprintf("session %s, call %d: %d %s", o.id, i, resp.StatusCode, a)
					return
				}
			}
		})
	}
	wg.Wait()
	close(failed)
	for f := range failed {
		t.Error(f)
	}
	resp := s.do(ctx, front, http.MethodDelete, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for i := 1; i <= 3; i++ {
		resp := s.do(ctx, r.mcpURL(i), "", `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("instance %d after DELETE: %d, want 404", i, resp.StatusCode)
		}
	}
}

// testReplicasResume: a tool call's event stream from instance 1 is cut
// after its first progress events; a GET with Last-Event-ID through
// instance 2 replays what followed from the shared store and follows the
// call still running on instance 1 to its response: no event lost, none
// twice.
func testReplicasResume(t *testing.T, ctx context.Context, r *replicas) {
	s := openSession(t, ctx, r.mcpURL(1))
	cctx, cut := context.WithCancel(ctx)
	resp := s.do(cctx, r.mcpURL(1), "", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":600},"_meta":{"progressToken":"p"}}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call sleep: %d %s", resp.StatusCode, ct)
	}
	var seen []sseEvent
	events := readEvents(resp.Body)
	for ev := range events {
		if ev.id == "" {
			continue
		}
		seen = append(seen, ev)
		if strings.Contains(ev.data, "notifications/progress") && len(seen) >= 3 {
			break
		}
	}
	cut()
	resp.Body.Close()
	for range events {
	}
	if len(seen) < 3 {
		t.Fatalf("events before the cut: %v", seen)
	}
	last := seen[len(seen)-1].id
	g := s.do(ctx, r.mcpURL(2), http.MethodGet, "", "Last-Event-ID", last)
	if g.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(g.Body)
		g.Body.Close()
		t.Fatalf("GET with Last-Event-ID %s on instance 2: %d %s", last, g.StatusCode, b)
	}
	defer g.Body.Close()
	ids := map[string]bool{}
	for _, ev := range seen {
		ids[ev.id] = true
	}
	progress := 0
	for ev := range readEvents(g.Body) {
		if ev.id != "" && ids[ev.id] {
			t.Fatalf("event %s again after the resumption", ev.id)
		}
		ids[ev.id] = true
		if strings.Contains(ev.data, "notifications/progress") {
			progress++
		}
		if strings.Contains(ev.data, `"id":5`) {
			if !strings.Contains(ev.data, `"slept_ms":600`) || progress == 0 {
				t.Fatalf("after %d progress events: %s", progress, ev.data)
			}
			return
		}
	}
	t.Fatalf("the resumed stream ended without the response (%d progress events)", progress)
}

// testReplicasListen: a subscriptions/listen stream (MCP 2026-07-28) on
// instance 1 receives notifications/tools/list_changed for each
// test_trigger_tool_change called on instance 2, through nginx and on
// instance 3.
func testReplicasListen(t *testing.T, ctx context.Context, r *replicas) {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":{"toolsListChanged":true}}}`
	req, _ := http.NewRequestWithContext(lctx, http.MethodPost, r.mcpURL(1), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := readEvents(resp.Body)
	next := func() string {
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatal("the listen stream ended")
				}
				if ev.data != "" {
					return ev.data
				}
			case <-ctx.Done():
				t.Fatal("no notification on the listen stream")
			}
		}
	}
	if ack := next(); !strings.Contains(ack, `"notifications/subscriptions/acknowledged"`) {
		t.Fatalf("first message on the listen stream: %s", ack)
	}
	hc := &http.Client{}
	for i, url := range []string{r.mcpURL(2), "http://" + r.front() + "/mcp", r.mcpURL(3)} {
		res, rerr, err := call2026(ctx, hc, url, 100+i, "tools/call", "test_trigger_tool_change", `"name":"test_trigger_tool_change","arguments":{}`)
		if err != nil || rerr != nil || !strings.Contains(string(res), "Mutation triggered") {
			t.Fatalf("test_trigger_tool_change through %s: %s %v %v", url, res, rerr, err)
		}
		if got := next(); !strings.Contains(got, `"method":"notifications/tools/list_changed"`) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":7`) {
			t.Fatalf("after the trigger through %s: %s", url, got)
		}
	}
}

// replicasIdle is TestReplicas's --session-idle-timeout.
const replicasIdle = 5 * time.Second

// startExpiry initialises a session through instance 1 and uses it once
// through instance 2; the check it returns, run once the other subtests
// are done, waits until the session has been idle past replicasIdle and
// finds it gone on every instance (404), the one that holds it included.
func startExpiry(t *testing.T, ctx context.Context, r *replicas) func(*testing.T) {
	s := openSession(t, ctx, r.mcpURL(1))
	resp := s.do(ctx, r.mcpURL(2), "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if a := mcpAnswer(resp, 2); resp.StatusCode != http.StatusOK || !strings.Contains(a, `"result":{}`) {
		t.Fatalf("ping through instance 2: %d %s", resp.StatusCode, a)
	}
	lastUse := time.Now()
	return func(t *testing.T) {
		s.t = t
		time.Sleep(time.Until(lastUse.Add(replicasIdle + 500*time.Millisecond)))
		for _, i := range []int{2, 1} { // instance 3 was killed
			resp := s.do(ctx, r.mcpURL(i), "", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("instance %d, %v after the session's last use (idle timeout %v): %d %s, want 404", i, time.Since(lastUse).Round(time.Millisecond), replicasIdle, resp.StatusCode, b)
			}
		}
	}
}

// TestServeStatePlain: two plain (not MCP) `jrpc serve --state`
// instances on an embedded NATS server with JetStream: a broadcast
// subscriber on one receives what demo_broadcast publishes on the other.
func TestServeStatePlain(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	state := strings.TrimSuffix(ns.ClientURL(), "/")
	_, a, _ := startServe(t, "--state", state, "--listen", "ws://127.0.0.1:0/")
	_, b, _ := startServe(t, "--state", state, "--listen", "ws://127.0.0.1:0/")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sub := broadcastSub(t, ctx, a)
	pub, err := jsonrpc.Dial(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	for v := 1; v <= 3; v++ {
		if err := pub.Call(ctx, "demo_broadcast", map[string]any{"value": v}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 3; v++ {
		if got, err := sub.Next(ctx); err != nil || string(got) != strconv.Itoa(v) {
			t.Fatalf("event %s %v, want %d", got, err, v)
		}
	}
}

// greetMeta is the _meta of a 2026-07-28 client that can answer
// elicitations.
const greetMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// greetState starts the greet tool on url and returns the requestState of
// its question and the id of the key that signed it.
func greetState(ctx context.Context, url string) (state, kid string, err error) {
	res, rerr, err := post2026(ctx, http.DefaultClient, url, 1, "tools/call", "greet", `{"name":"greet","arguments":{},`+greetMeta+`}`)
	if err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return "", "", err
	}
	var r struct {
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", "", err
	}
	k, _, _ := strings.Cut(r.RequestState, ".")
	id, err := base64.RawURLEncoding.DecodeString(k)
	return r.RequestState, string(id), err
}

// greetFinish answers greet's question on url with state.
func greetFinish(ctx context.Context, url, state string) error {
	res, rerr, err := post2026(ctx, http.DefaultClient, url, 2, "tools/call", "greet",
		`{"name":"greet","arguments":{},"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"`+state+`",`+greetMeta+`}`)
	switch {
	case err != nil:
		return err
	case rerr != nil:
		return rerr
	case !strings.Contains(string(res), "Hello, Ada!"):
		return fmt.Errorf("result %s", res)
	}
	return nil
}

// testReplicasRotation: a key rotated into the shared ring (from outside,
// as an operator would) signs the multi round-trips of every instance
// within a second, with no restart; a state signed before still finishes
// on another instance until its key is removed, and is then refused by
// every instance within a second.
func testReplicasRotation(t *testing.T, ctx context.Context, r *replicas) {
	nc, err := natsgo.Connect(fmt.Sprintf("nats://127.0.0.1:%d", r.natsPort))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := jnats.NewKeyRing(ctx, js, jnats.KeyRingConfig{Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	old, oldKid, err := greetState(ctx, r.mcpURL(1))
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	newKid := fmt.Sprintf("rotated-%x", secret[:4])
	if err := ring.Rotate(ctx, state.Key{ID: newKid, Secret: secret}); err != nil {
		t.Fatal(err)
	}
	rotated := time.Now()
	var fresh string
	for i := 1; i <= 3; i++ {
		for {
			st, kid, err := greetState(ctx, r.mcpURL(i))
			if err != nil {
				t.Fatal(err)
			}
			if kid == newKid {
				fresh = st
				break
			}
			if kid != oldKid || time.Since(rotated) > time.Second {
				t.Fatalf("instance %d signs with key %q %v after the rotation to %q", i, kid, time.Since(rotated), newKid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("every instance signs with the rotated key %v after the rotation", time.Since(rotated).Round(time.Millisecond))
	if err := greetFinish(ctx, r.mcpURL(2), old); err != nil {
		t.Fatalf("a state signed before the rotation, on another instance: %v", err)
	}
	if err := greetFinish(ctx, r.mcpURL(1), fresh); err != nil {
		t.Fatalf("a state signed with the rotated key, on another instance: %v", err)
	}
	if err := ring.Remove(ctx, oldKid); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	for i := 1; i <= 3; i++ {
		for {
			err := greetFinish(ctx, r.mcpURL(i), old)
			var e *jsonrpc.Error
			if errors.As(err, &e) && e.Code == jsonrpc.CodeInvalidParams {
				break
			}
			if err != nil || time.Since(removed) > time.Second {
				t.Fatalf("instance %d, %v after the old key's removal: %v (want -32602)", i, time.Since(removed), err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
