package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// storeMux: "initialize" negotiates 2025-11-25; "caps" answers what
// MCPClientCapability knows of "elicitation"; "keep" hands the session's
// connection to conns; "echo" answers its params.
func storeMux(conns chan<- *jsonrpc.Conn) *jsonrpc.Mux {
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
	return mux
}

// storeInstance starts an instance serving storeMux over Streamable HTTP
// with sessions in store; it returns its URL.
func storeInstance(t *testing.T, store state.SessionStore, idle time.Duration, conns chan<- *jsonrpc.Conn) string {
	return storeInstanceOpts(t, jsonrpc.StreamableHTTPOptions{SessionStore: store, SessionIdleTimeout: idle}, conns)
}

// storeInstanceOpts is storeInstance with opts (Sessions and
// StatelessVersions set).
func storeInstanceOpts(t *testing.T, opts jsonrpc.StreamableHTTPOptions, conns chan<- *jsonrpc.Conn) string {
	t.Helper()
	srv := &jsonrpc.Server{Handler: storeMux(conns)}
	opts.Sessions, opts.StatelessVersions = true, []string{"2026-07-28"}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(opts))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		srv.Shutdown(context.Background())
	})
	return hs.URL
}

// status reads and closes the body of resp and returns its status.
func status(t *testing.T, resp *http.Response) int {
	readAll(t, resp)
	return resp.StatusCode
}

const storeInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// TestStreamableHTTPSessionStore initialises a session through instance
// A and continues it through B, which never saw it (no affinity): a call,
// a notification, the client's capabilities, the standalone GET stream and
// SessionConn; DELETE through B ends it on A as well, whose GET stream
// ends.
func TestStreamableHTTPSessionStore(t *testing.T) {
	store := state.NewMemorySessionStore(nil)
	conns := make(chan *jsonrpc.Conn, 1)
	a := &streamClient{t: t, url: storeInstance(t, store, 5*time.Second, conns)}
	b := &streamClient{t: t, url: storeInstance(t, store, 5*time.Second, conns)}
	resp := a.post(storeInit, bothAccept)
	if body := readAll(t, resp); body != `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}` {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	a.session = resp.Header.Get("Mcp-Session-Id")
	b.session = a.session
	got, err := store.Get(t.Context(), a.session)
	if err != nil || got.ProtocolVersion != "2025-11-25" || string(got.ClientCapabilities) != `{"elicitation":{}}` ||
		string(got.ClientInfo) != `{"name":"t","version":"1"}` || time.Until(got.Expires) < 4*time.Second {
		t.Fatalf("the stored session: %+v, %v", got, err)
	}
	for _, c := range []*streamClient{b, a} {
		if body := readAll(t, c.post(`{"jsonrpc":"2.0","id":2,"method":"caps"}`, bothAccept)); body != `{"jsonrpc":"2.0","id":2,"result":[true,true]}` {
			t.Fatalf("caps through %s: %s", c.url, body)
		}
	}
	if resp := b.post(`{"jsonrpc":"2.0","method":"echo"}`, bothAccept); status(t, resp) != http.StatusAccepted {
		t.Fatalf("a notification through B: %d", resp.StatusCode)
	}
	// B's standalone stream carries what B's SessionConn sends.
	get := b.get()
	defer get.Body.Close()
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET through B: %d %s", get.StatusCode, readAll(t, get))
	}
	f := newFrames(t, get.Body)
	f.next() // the priming event
	if body := readAll(t, b.post(`{"jsonrpc":"2.0","id":3,"method":"keep"}`, bothAccept)); body != `{"jsonrpc":"2.0","id":3,"result":true}` {
		t.Fatalf("keep: %s", body)
	}
	if err := (<-conns).Notify(t.Context(), "note", []string{"hi"}); err != nil {
		t.Fatal(err)
	}
	if ev := f.next(); !strings.Contains(ev, `"method":"note","params":["hi"]`) {
		t.Fatalf("the standalone stream through B: %q", ev)
	}
	// A GET stream held on A ends once the session is deleted through B.
	getA := a.get()
	defer getA.Body.Close()
	fa := newFrames(t, getA.Body)
	fa.next()
	del, _ := http.NewRequest(http.MethodDelete, b.url, nil)
	del.Header.Set("Mcp-Session-Id", b.session)
	if resp, err := http.DefaultClient.Do(del); err != nil || status(t, resp) != http.StatusNoContent {
		t.Fatalf("DELETE through B: %v %v", resp, err)
	}
	if !f.ended() {
		t.Fatal("B's GET stream outlived the session")
	}
	for _, c := range []*streamClient{a, b} {
		if resp := c.post(`{"jsonrpc":"2.0","id":4,"method":"echo"}`, bothAccept); status(t, resp) != http.StatusNotFound {
			t.Fatalf("a deleted session through %s: %d", c.url, resp.StatusCode)
		}
	}
	if !fa.ended() {
		t.Fatal("A's GET stream outlived the session")
	}
	if _, err := store.Get(t.Context(), a.session); !errors.Is(err, state.ErrNoSession) {
		t.Fatalf("the store after DELETE: %v", err)
	}
}

// TestStreamableHTTPSessionStoreExpiry keeps a session alive by requests
// through B only, then lets it idle: it ends on both instances, A (which
// started it and still holds it) included.
func TestStreamableHTTPSessionStoreExpiry(t *testing.T) {
	store := state.NewMemorySessionStore(nil)
	const idle = time.Second
	a := &streamClient{t: t, url: storeInstance(t, store, idle, nil)}
	b := &streamClient{t: t, url: storeInstance(t, store, idle, nil)}
	a.initialize()
	b.session = a.session
	start, _ := store.Get(t.Context(), a.session)
	for end := time.Now().Add(2 * idle); time.Now().Before(end); time.Sleep(idle / 5) {
		if resp := b.post(`{"jsonrpc":"2.0","id":2,"method":"echo"}`, bothAccept); status(t, resp) != http.StatusOK {
			t.Fatalf("an active session through B: %d", resp.StatusCode)
		}
	}
	if s, err := store.Get(t.Context(), a.session); err != nil || !s.Expires.After(start.Expires.Add(idle)) {
		t.Fatalf("the requests did not touch the session: %+v, %v (created to expire at %v)", s, err, start.Expires)
	}
	time.Sleep(idle + idle/5)
	for _, c := range []*streamClient{a, b} {
		if resp := c.post(`{"jsonrpc":"2.0","id":3,"method":"echo"}`, bothAccept); status(t, resp) != http.StatusNotFound {
			t.Fatalf("an expired session through %s: %d", c.url, resp.StatusCode)
		}
	}
}

// flakyStore fails every call while down is set, and hangs until the
// context ends while hang is set.
type flakyStore struct {
	state.SessionStore
	down, hang atomic.Bool
}

var errStoreDown = errors.New("store down for the test")

func (f *flakyStore) fail(ctx context.Context) error {
	if f.hang.Load() {
		<-ctx.Done()
		return fmt.Errorf("hung: %w", ctx.Err())
	}
	if f.down.Load() {
		return errStoreDown
	}
	return nil
}

func (f *flakyStore) Create(ctx context.Context, s state.Session) error {
	if err := f.fail(ctx); err != nil {
		return err
	}
	return f.SessionStore.Create(ctx, s)
}

func (f *flakyStore) Get(ctx context.Context, id string) (state.Session, error) {
	if err := f.fail(ctx); err != nil {
		return state.Session{}, err
	}
	return f.SessionStore.Get(ctx, id)
}

func (f *flakyStore) Delete(ctx context.Context, id string) error {
	if err := f.fail(ctx); err != nil {
		return err
	}
	return f.SessionStore.Delete(ctx, id)
}

// storeFailure checks the answer to a request the store failed: HTTP
// status, a JSON-RPC error -32030 naming the cause, by the deadline.
func storeFailure(t *testing.T, what string, resp *http.Response, status int, id, cause string) {
	t.Helper()
	var e struct {
		ID    json.RawMessage `json:"id"`
		Error jsonrpc.Error   `json:"error"`
	}
	body := readAll(t, resp)
	if resp.StatusCode != status || json.Unmarshal([]byte(body), &e) != nil || string(e.ID) != id ||
		e.Error.Code != -32030 || !strings.Contains(e.Error.Message, cause) {
		t.Fatalf("%s with the store failing: %d %s", what, resp.StatusCode, body)
	}
}

// TestStreamableHTTPSessionStoreFails: while the store fails, an
// initialize is answered with error -32030 naming the cause (and no
// session header), session requests get 503 with that error, by
// the timeout when the store hangs, and stateless calls are served; once
// the store is back, sessions work again.
func TestStreamableHTTPSessionStoreFails(t *testing.T) {
	store := &flakyStore{SessionStore: state.NewMemorySessionStore(nil)}
	a := &streamClient{t: t, url: storeInstance(t, store, time.Minute, nil)}
	b := &streamClient{t: t, url: storeInstance(t, store, time.Minute, nil)}
	a.initialize()
	b.session = a.session
	store.down.Store(true)
	c := &streamClient{t: t, url: a.url}
	resp := c.post(storeInit, bothAccept)
	storeFailure(t, "initialize", resp, http.StatusOK, "1", errStoreDown.Error())
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Fatalf("a failed initialize named session %q", id)
	}
	for _, c := range []*streamClient{a, b} {
		storeFailure(t, "a call through "+c.url, c.post(`{"jsonrpc":"2.0","id":2,"method":"echo"}`, bothAccept),
			http.StatusServiceUnavailable, "null", errStoreDown.Error())
	}
	storeFailure(t, "GET", b.get(), http.StatusServiceUnavailable, "null", errStoreDown.Error())
	resp, body := post2026(t, a.url, `{"jsonrpc":"2.0","id":3,"method":"echo","params":{`+meta2026+`}}`,
		map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "echo"})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":3,"result":{"_meta"`) {
		t.Fatalf("a stateless call with the store down: %d %s", resp.StatusCode, body)
	}
	store.down.Store(false)
	store.hang.Store(true)
	start := time.Now()
	storeFailure(t, "a call, the store hanging", b.post(`{"jsonrpc":"2.0","id":4,"method":"echo"}`, bothAccept),
		http.StatusServiceUnavailable, "null", "deadline exceeded")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a hanging store held the call %v", d)
	}
	start = time.Now()
	storeFailure(t, "initialize, the store hanging", c.post(storeInit, bothAccept), http.StatusOK, "1", "deadline exceeded")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a hanging store held initialize %v", d)
	}
	store.hang.Store(false)
	for _, c := range []*streamClient{b, a} {
		if body := readAll(t, c.post(`{"jsonrpc":"2.0","id":5,"method":"echo","params":[5]}`, bothAccept)); body != `{"jsonrpc":"2.0","id":5,"result":[5]}` {
			t.Fatalf("the session once the store is back, through %s: %s", c.url, body)
		}
	}
}

// countingStore counts the Gets of its store.
type countingStore struct {
	state.SessionStore
	gets atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, id string) (state.Session, error) {
	c.gets.Add(1)
	return c.SessionStore.Get(ctx, id)
}

// TestStreamableHTTPSessionStaleness: with SessionStaleness, an instance
// asks the store about a session at most once per SessionStaleness, and
// a DELETE through another instance reaches it within that time.
func TestStreamableHTTPSessionStaleness(t *testing.T) {
	const stale = 300 * time.Millisecond
	store := &countingStore{SessionStore: state.NewMemorySessionStore(nil)}
	opts := jsonrpc.StreamableHTTPOptions{SessionStore: store, SessionStaleness: stale}
	a := &streamClient{t: t, url: storeInstanceOpts(t, opts, nil)}
	b := &streamClient{t: t, url: storeInstanceOpts(t, opts, nil)}
	a.initialize()
	b.session = a.session
	start := time.Now()
	const calls = 20
	for i := range calls {
		c := []*streamClient{a, b}[i%2]
		if body := readAll(t, c.post(`{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}`, bothAccept)); body != `{"jsonrpc":"2.0","id":2,"result":[2]}` {
			t.Fatalf("call %d: %s", i, body)
		}
	}
	// A asks none while fresh from initialize, B once to adopt; each asks
	// again once per staleness window passed.
	if n, most := store.gets.Load(), 1+2*int64(time.Since(start)/stale+1); n > most {
		t.Fatalf("%d calls asked the store %d times in %v; want at most %d", calls, n, time.Since(start), most)
	}
	del, _ := http.NewRequest(http.MethodDelete, b.url, nil)
	del.Header.Set("Mcp-Session-Id", b.session)
	if resp, err := http.DefaultClient.Do(del); err != nil || status(t, resp) != http.StatusNoContent {
		t.Fatalf("DELETE through B: %v %v", resp, err)
	}
	time.Sleep(stale)
	if resp := a.post(`{"jsonrpc":"2.0","id":3,"method":"echo"}`, bothAccept); status(t, resp) != http.StatusNotFound {
		t.Fatalf("the deleted session through A after %v: %d", stale, resp.StatusCode)
	}
}

// BenchmarkStreamableSessionStore: BenchmarkStreamableSession with the
// sessions in a state.MemorySessionStore (a Get per request).
func BenchmarkStreamableSessionStore(b *testing.B) {
	benchSession(b, jsonrpc.StreamableHTTPOptions{Sessions: true, SessionStore: state.NewMemorySessionStore(nil)})
}

// TestStreamableHTTPSessionStoreEventStream answers initialize on an event
// stream (SSEAlways): the session is in the store once the reply comes,
// and a store that fails makes that reply error -32030 on the stream (the
// first event: no session header goes).
func TestStreamableHTTPSessionStoreEventStream(t *testing.T) {
	store := &flakyStore{SessionStore: state.NewMemorySessionStore(nil)}
	a := &streamClient{t: t, url: storeInstanceOpts(t, jsonrpc.StreamableHTTPOptions{SessionStore: store, SSE: jsonrpc.SSEAlways}, nil)}
	resp := a.post(storeInit, bothAccept)
	body := readAll(t, resp)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(body, `data: {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`) {
		t.Fatalf("initialize: %s %q", resp.Header.Get("Content-Type"), body)
	}
	if s, err := store.Get(t.Context(), id); err != nil || s.ProtocolVersion != "2025-11-25" || string(s.ClientCapabilities) != `{"elicitation":{}}` {
		t.Fatalf("the stored session: %+v, %v", s, err)
	}
	store.down.Store(true)
	resp = a.post(storeInit, bothAccept)
	body = readAll(t, resp)
	if !strings.Contains(body, `data: {"jsonrpc":"2.0","id":1,"error":{"code":-32030,"message":"jsonrpc: the session store failed: creating the session: `+errStoreDown.Error()) {
		t.Fatalf("initialize, the store failing: %q", body)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Fatalf("a failed initialize, its reply the stream's first event, named session %q", id)
	}
}

// TestStreamableHTTPSessionStoreRoundRobin: the library's client, behind
// a proxy that sends each request to the next of two instances (no
// affinity), initialises once and calls on, each call served by either;
// while the store fails its calls fail with -32030 (an *Error inside the
// HTTP 503), and go on once it is back; Close's DELETE ends the session
// in the store.
func TestStreamableHTTPSessionStoreRoundRobin(t *testing.T) {
	store := &flakyStore{SessionStore: state.NewMemorySessionStore(nil)}
	var backends []*httputil.ReverseProxy
	var hits [2]atomic.Int64
	for range 2 {
		u, _ := url.Parse(storeInstance(t, store, time.Minute, nil))
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1
		backends = append(backends, p)
	}
	var next atomic.Int64
	var session atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			session.Store(id)
		}
		i := next.Add(1) % 2
		hits[i].Add(1)
		backends[i].ServeHTTP(w, r)
	}))
	defer proxy.Close()
	ctx := t.Context()
	c, err := jsonrpc.DialStreamableHTTP(ctx, proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var init json.RawMessage
	if err := c.Call(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}`), &init); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		var caps [2]bool
		if err := c.Call(ctx, "caps", nil, &caps); err != nil || caps != [2]bool{true, true} {
			t.Fatalf("call %d: %v, %v", i, caps, err)
		}
	}
	if hits[0].Load() < 3 || hits[1].Load() < 3 {
		t.Fatalf("the instances served %d and %d requests", hits[0].Load(), hits[1].Load())
	}
	store.down.Store(true)
	var e *jsonrpc.Error
	var he *jsonrpc.HTTPError
	if err := c.Call(ctx, "echo", nil, nil); !errors.As(err, &e) || e.Code != -32030 || !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a call while the store fails: %v", err)
	}
	store.down.Store(false)
	var echo []int
	if err := c.Call(ctx, "echo", []int{7}, &echo); err != nil || len(echo) != 1 || echo[0] != 7 {
		t.Fatalf("a call once the store is back: %v, %v", echo, err)
	}
	c.Close()
	if _, err := store.Get(ctx, session.Load().(string)); !errors.Is(err, state.ErrNoSession) {
		t.Fatalf("the session in the store after Close: %v", err)
	}
}
