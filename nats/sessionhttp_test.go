package nats_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"

	"github.com/seedhq/jsonrpc"
	jnats "github.com/seedhq/jsonrpc/nats"
	"github.com/seedhq/jsonrpc/state"
)

// httpInstance serves, over Streamable HTTP with its sessions in store, a
// mux whose "caps" answers what MCPClientCapability knows of
// "elicitation", "keep" hands the session's connection to conns and "echo"
// answers its params. It returns the instance's URL.
func httpInstance(t *testing.T, store *jnats.SessionStore, idle time.Duration, conns chan<- *jsonrpc.Conn) string {
	t.Helper()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	jsonrpc.Register(mux, "caps", func(ctx context.Context, _ struct{}) ([2]bool, error) {
		has, known := jsonrpc.MCPClientCapability(ctx, "elicitation")
		return [2]bool{has, known}, nil
	})
	jsonrpc.Register(mux, "keep", func(ctx context.Context, _ struct{}) (bool, error) {
		c := jsonrpc.SessionConn(ctx)
		conns <- c
		return c != nil, nil
	})
	jsonrpc.Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, SessionStore: store, SessionIdleTimeout: idle, StatelessVersions: []string{"2026-07-28"},
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Shutdown(context.Background())
	})
	return hs.URL
}

// httpDo sends a request of method to url in session (when set), with
// body (POST) or Accept: text/event-stream (GET); it returns the response,
// its body read unless it is an event stream.
func httpDo(t *testing.T, method, url, session, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		t.Cleanup(func() { resp.Body.Close() })
		return resp, ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// nextEvent reads the next event (up to its blank line) of an event stream.
func nextEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String() + "<" + err.Error() + ">"
		}
		if line == "\n" {
			return b.String()
		}
	}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// TestStreamableHTTPSessionsAcrossInstances: two instances, each with its
// own NATS connection to one JetStream bucket of sessions; a session
// initialised through A continues through B (call, notification, the
// client's capabilities, the GET stream and SessionConn), DELETE through B
// ends it on A, an idle session expires on both.
func TestStreamableHTTPSessionsAcrossInstances(t *testing.T) {
	ns := runJetStream(t)
	conns := make(chan *jsonrpc.Conn, 1)
	a := httpInstance(t, newSessionStore(t, jsConn(t, ns), "http"), 5*time.Second, conns)
	b := httpInstance(t, newSessionStore(t, jsConn(t, ns), "http"), 5*time.Second, conns)
	resp, body := httpDo(t, http.MethodPost, a, "", initBody)
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || body != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}` {
		t.Fatalf("initialize through A: %d %s", resp.StatusCode, body)
	}
	for _, url := range []string{b, a} {
		if _, body := httpDo(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":2,"method":"caps"}`); body != `{"jsonrpc":"2.0","id":2,"result":[true,true]}` {
			t.Fatalf("caps through %s: %s", url, body)
		}
	}
	if resp, _ := httpDo(t, http.MethodPost, b, id, `{"jsonrpc":"2.0","method":"echo"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a notification through B: %d", resp.StatusCode)
	}
	get, _ := httpDo(t, http.MethodGet, b, id, "")
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET through B: %d", get.StatusCode)
	}
	events := bufio.NewReader(get.Body)
	nextEvent(t, events) // priming
	if _, body := httpDo(t, http.MethodPost, b, id, `{"jsonrpc":"2.0","id":3,"method":"keep"}`); body != `{"jsonrpc":"2.0","id":3,"result":true}` {
		t.Fatalf("keep through B: %s", body)
	}
	if err := (<-conns).Notify(t.Context(), "note", []string{"hi"}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, events); !strings.Contains(ev, `"method":"note","params":["hi"]`) {
		t.Fatalf("B's GET stream: %q", ev)
	}
	if resp, _ := httpDo(t, http.MethodDelete, b, id, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE through B: %d", resp.StatusCode)
	}
	for _, url := range []string{a, b} {
		if resp, _ := httpDo(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":4,"method":"echo"}`); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the deleted session through %s: %d", url, resp.StatusCode)
		}
	}

	// Expiry: kept alive by requests through B, then idle.
	const idle = time.Second
	a = httpInstance(t, newSessionStore(t, jsConn(t, ns), "http"), idle, nil)
	b = httpInstance(t, newSessionStore(t, jsConn(t, ns), "http"), idle, nil)
	resp, _ = httpDo(t, http.MethodPost, a, "", initBody)
	id = resp.Header.Get("Mcp-Session-Id")
	for end := time.Now().Add(2 * idle); time.Now().Before(end); time.Sleep(idle / 5) {
		if resp, body := httpDo(t, http.MethodPost, b, id, `{"jsonrpc":"2.0","id":5,"method":"echo"}`); resp.StatusCode != http.StatusOK {
			t.Fatalf("an active session through B: %d %s", resp.StatusCode, body)
		}
	}
	time.Sleep(idle + idle/5)
	for _, url := range []string{a, b} {
		if resp, _ := httpDo(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":6,"method":"echo"}`); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("the expired session through %s: %d", url, resp.StatusCode)
		}
	}
}

// TestStreamableHTTPSessionsNATSDown stops nats-server under two
// instances: a session's requests get 503 with error -32030, by the
// store's timeout, and stateless requests are served; once nats-server is
// back, the session goes on through both.
func TestStreamableHTTPSessionsNATSDown(t *testing.T) {
	dir := t.TempDir()
	ns := runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir })
	port := ns.Addr().(*net.TCPAddr).Port
	reconnect := []natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(20 * time.Millisecond)}
	a := httpInstance(t, newSessionStore(t, jsConn(t, ns, reconnect...), "down"), time.Minute, nil)
	b := httpInstance(t, newSessionStore(t, jsConn(t, ns, reconnect...), "down"), time.Minute, nil)
	resp, _ := httpDo(t, http.MethodPost, a, "", initBody)
	id := resp.Header.Get("Mcp-Session-Id")
	if _, body := httpDo(t, http.MethodPost, b, id, `{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}`); body != `{"jsonrpc":"2.0","id":2,"result":[2]}` {
		t.Fatalf("through B: %s", body)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	for _, url := range []string{a, b} {
		start := time.Now()
		resp, body := httpDo(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":3,"method":"echo"}`)
		var e struct{ Error jsonrpc.Error }
		if resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != -32030 ||
			!strings.Contains(e.Error.Message, "jsonrpc/nats") || time.Since(start) > 5*time.Second {
			t.Fatalf("a session's request through %s, NATS down: %d %s after %v", url, resp.StatusCode, body, time.Since(start))
		}
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if resp, body := httpDo(t, http.MethodPost, a, "", `{"jsonrpc":"2.0","id":4,"method":"echo","params":{`+meta+`}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "echo"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":4,"result"`) {
		t.Fatalf("a stateless request, NATS down: %d %s", resp.StatusCode, body)
	}
	runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir; o.Port = port })
	for _, url := range []string{b, a} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body := httpDo(t, http.MethodPost, url, id, `{"jsonrpc":"2.0","id":5,"method":"echo","params":[5]}`)
			if body == `{"jsonrpc":"2.0","id":5,"result":[5]}` {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the session through %s once NATS is back: %s", url, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestStreamableHTTPSessionsUnderLoad: six clients of the library, each
// behind a proxy that sends every request to the next of three instances
// sharing one JetStream bucket (no affinity), initialise, call 25 times
// (each call checks the capabilities restored wherever it lands) and
// close; every call succeeds, every session ends in the bucket.
func TestStreamableHTTPSessionsUnderLoad(t *testing.T) {
	ns := runJetStream(t)
	var backends []*httputil.ReverseProxy
	var stores []*jnats.SessionStore
	for range 3 {
		store := newSessionStore(t, jsConn(t, ns), "load")
		u, _ := url.Parse(httpInstance(t, store, time.Minute, nil))
		backends = append(backends, httputil.NewSingleHostReverseProxy(u))
		stores = append(stores, store)
	}
	var next atomic.Int64
	var ids sync.Map
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			ids.Store(id, true)
		}
		backends[next.Add(1)%3].ServeHTTP(w, r)
	}))
	defer proxy.Close()
	var wg sync.WaitGroup
	for client := range 6 {
		wg.Go(func() {
			ctx := t.Context()
			c, err := jsonrpc.DialStreamableHTTP(ctx, proxy.URL)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			caps := fmt.Sprintf(`{"protocolVersion":"2025-11-25","capabilities":{%s}}`, map[bool]string{true: `"elicitation":{}`}[client%2 == 0])
			if err := c.Call(ctx, "initialize", json.RawMessage(caps), nil); err != nil {
				t.Errorf("client %d: initialize: %v", client, err)
				return
			}
			for i := range 25 {
				var got [2]bool
				if err := c.Call(ctx, "caps", nil, &got); err != nil || got != [2]bool{client%2 == 0, true} {
					t.Errorf("client %d call %d: %v, %v", client, i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	n := 0
	ids.Range(func(id, _ any) bool {
		n++
		if _, err := stores[0].Get(t.Context(), id.(string)); !errors.Is(err, state.ErrNoSession) {
			t.Errorf("session %s after Close: %v", id, err)
		}
		return true
	})
	if n != 6 {
		t.Fatalf("%d sessions, want 6", n)
	}
}

// TestStreamableHTTPSessionsNATSRestartUnderLoad restarts nats-server
// under four library clients calling through three instances round-robin:
// every call either succeeds (a request to the store waits for the
// reconnection, up to the store's 2 s bound) or fails with -32030 (the
// store's error, never a lost session's 404), none waits past that bound,
// and every client's calls succeed again once nats-server is back.
func TestStreamableHTTPSessionsNATSRestartUnderLoad(t *testing.T) {
	dir := t.TempDir()
	ns := runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir })
	port := ns.Addr().(*net.TCPAddr).Port
	reconnect := []natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(20 * time.Millisecond)}
	var backends []*httputil.ReverseProxy
	for range 3 {
		u, _ := url.Parse(httpInstance(t, newSessionStore(t, jsConn(t, ns, reconnect...), "restart"), time.Minute, nil))
		backends = append(backends, httputil.NewSingleHostReverseProxy(u))
	}
	var next atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backends[next.Add(1)%3].ServeHTTP(w, r)
	}))
	defer proxy.Close()
	var back atomic.Int64 // UnixNano once nats-server is back
	var failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for client := range 4 {
		wg.Go(func() {
			ctx := t.Context()
			c, err := jsonrpc.DialStreamableHTTP(ctx, proxy.URL)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			if err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{}}`), nil); err != nil {
				t.Errorf("client %d: initialize: %v", client, err)
				return
			}
			okAfter := false
			for i := 0; ; i++ {
				select {
				case <-stop:
					if !okAfter {
						t.Errorf("client %d: no call succeeded once nats-server was back", client)
					}
					return
				default:
				}
				start := time.Now()
				var got []int
				err := c.Call(ctx, "echo", []int{i}, &got)
				var e *jsonrpc.Error
				switch {
				case err == nil && len(got) == 1 && got[0] == i:
					okAfter = okAfter || (back.Load() != 0 && start.UnixNano() > back.Load())
				case errors.As(err, &e) && e.Code == -32030:
					failed.Add(1)
				default:
					t.Errorf("client %d call %d: %v, %v", client, i, got, err)
					return
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("client %d call %d took %v", client, i, d)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	ns.Shutdown()
	ns.WaitForShutdown()
	time.Sleep(3 * time.Second) // past the store's bound: a request buffered meanwhile fails
	runNATS(t, func(o *natsserver.Options) { o.JetStream = true; o.StoreDir = dir; o.Port = port })
	back.Store(time.Now().UnixNano())
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	if failed.Load() == 0 {
		t.Error("no call failed while nats-server was down")
	}
	t.Logf("%d calls failed with -32030 while nats-server was down or coming back", failed.Load())
}
