package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

const metaElicit = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// greetServer serves MCP 2026-07-28 over Streamable HTTP with one tool,
// greet, which asks the client's name through rounds (its handler
// answers an *InputRequiredError's result, as package mcp's tools do).
func greetServer(t testing.TB, rounds *jsonrpc.InputRounds) *httptest.Server {
	t.Helper()
	srv := &jsonrpc.Server{Handler: greetMux(rounds), Convention: jsonrpc.ConventionMCP, ExposeInternalErrors: true}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}, SSE: jsonrpc.SSENever}))
	t.Cleanup(ts.Close)
	return ts
}

func greetMux(rounds *jsonrpc.InputRounds) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, _ map[string]any) (any, error) {
		var a struct {
			Content struct{ Name string } `json:"content"`
		}
		var input *jsonrpc.InputRequiredError
		if err := rounds.Ask(ctx, "name", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": "Name?"}}, &a); errors.As(err, &input) {
			return input.Result, nil
		} else if err != nil {
			return nil, err
		}
		return map[string]any{"structuredContent": map[string]string{"greeting": "Hello, " + a.Content.Name + "!"}}, nil
	})
	return mux
}

// greetRound posts greet's first round (state "") or, with state, its
// answer, and returns the HTTP status and body.
func greetRound(t testing.TB, url, state string) (int, string) {
	t.Helper()
	params := `{"name":"greet",` + metaElicit + `}`
	if state != "" {
		params = `{"name":"greet",` + metaElicit + `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"}`
	}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", jsonrpc.MCPVersion2026)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readAll(t.(*testing.T), resp)
}

// greetState runs greet's first round on url and returns its requestState.
func greetState(t *testing.T, url string) string {
	t.Helper()
	status, body := greetRound(t, url, "")
	var r struct{ Result jsonrpc.InputRequiredResult }
	if err := json.Unmarshal([]byte(body), &r); status != 200 || err != nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("first round: %d %s", status, body)
	}
	return r.Result.RequestState
}

// greeted reports whether greet's second round with state on url is answered.
func greeted(t *testing.T, url, state string) bool {
	t.Helper()
	status, body := greetRound(t, url, state)
	if status == 200 && strings.Contains(body, `"greeting":"Hello, Ada!"`) {
		return true
	}
	if !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, jsonrpc.ErrRequestStateInvalid.Error()) {
		t.Fatalf("second round refused, but not as a state that cannot be trusted: %d %s", status, body)
	}
	return false
}

func ringKey(id string) state.Key {
	return state.Key{ID: id, Secret: []byte("0123456789abcdef-secret-" + id)}
}

// TestInputRoundsKeyRingAcrossInstances: two servers sharing one key
// ring: a multi round-trip started on A is finished on B; after a
// rotation A signs with the new key and B verifies it (within a second);
// a state of a key removed from the ring is refused as a forged one.
func TestInputRoundsKeyRingAcrossInstances(t *testing.T) {
	noLeaks(t)
	ring, err := state.NewMemoryKeyRing(3, ringKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	a := greetServer(t, &jsonrpc.InputRounds{KeyRing: ring})
	b := greetServer(t, &jsonrpc.InputRounds{KeyRing: ring})
	s1 := greetState(t, a.URL)
	if !greeted(t, b.URL, s1) {
		t.Fatal("a state of A refused by B")
	}
	if err := ring.Rotate(t.Context(), ringKey("k2")); err != nil {
		t.Fatal(err)
	}
	s2 := greetState(t, a.URL)
	for deadline := time.Now().Add(time.Second); !greeted(t, b.URL, s2); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a state of the rotated key not verified by B within 1s")
		}
	}
	if !greeted(t, b.URL, s1) {
		t.Fatal("a state of the previous key refused before its removal")
	}
	if err := ring.Remove(t.Context(), "k1"); err != nil {
		t.Fatal(err)
	}
	if greeted(t, b.URL, s1) || greeted(t, a.URL, s1) {
		t.Fatal("a state of the removed key accepted")
	}
	if !greeted(t, b.URL, s2) {
		t.Fatal("a state of the new key refused after the old key's removal")
	}
}

// TestInputRoundsKeyRingWithKeys: a state signed with static Keys keeps
// verifying on a server moved to a ring holding its secret, and on a
// server with both (whose ring signs); a server with Keys only refuses
// the ring's states (they name a key it has no id for).
func TestInputRoundsKeyRingWithKeys(t *testing.T) {
	noLeaks(t)
	k := ringKey("k1")
	ring, err := state.NewMemoryKeyRing(3, k)
	if err != nil {
		t.Fatal(err)
	}
	static := greetServer(t, &jsonrpc.InputRounds{Keys: [][]byte{k.Secret}})
	ringed := greetServer(t, &jsonrpc.InputRounds{KeyRing: ring})
	other, _ := state.NewMemoryKeyRing(1, ringKey("o"))
	both := greetServer(t, &jsonrpc.InputRounds{Keys: [][]byte{k.Secret}, KeyRing: other})
	old := greetState(t, static.URL)
	if !greeted(t, ringed.URL, old) || !greeted(t, both.URL, old) {
		t.Fatal("a state of static Keys refused by a ring holding its secret, or beside Keys")
	}
	if s := greetState(t, both.URL); greeted(t, static.URL, s) || greeted(t, ringed.URL, s) {
		t.Fatal("with Keys and KeyRing, the state was not signed by the ring")
	} else if !greeted(t, both.URL, s) {
		t.Fatal("with Keys and KeyRing, the ring's state refused")
	}
	if greeted(t, static.URL, greetState(t, ringed.URL)) {
		t.Fatal("a ring's state accepted by Keys")
	}
}

// failingRing is a memory ring whose reads fail while down is set.
type failingRing struct {
	*state.MemoryKeyRing
	down atomic.Bool
}

var errRingDown = errors.New("the ring is down")

func (r *failingRing) Keys(ctx context.Context) ([]state.Key, error) {
	if r.down.Load() {
		return nil, errRingDown
	}
	return r.MemoryKeyRing.Keys(ctx)
}

// TestInputRoundsKeyRingFails: a ring that fails fails the request at
// once with its error (-32603 naming KeyRing, ExposeInternalErrors set),
// in the first round (signing) and in the second (verifying), and the
// rounds work again when it is back.
func TestInputRoundsKeyRingFails(t *testing.T) {
	noLeaks(t)
	mem, err := state.NewMemoryKeyRing(3, ringKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	ring := &failingRing{MemoryKeyRing: mem}
	ts := greetServer(t, &jsonrpc.InputRounds{KeyRing: ring})
	s := greetState(t, ts.URL)
	ring.down.Store(true)
	for _, state := range []string{"", s} {
		start := time.Now()
		status, body := greetRound(t, ts.URL, state)
		if !strings.Contains(body, `"code":-32603`) || !strings.Contains(body, "InputRounds.KeyRing: "+errRingDown.Error()) || time.Since(start) > 5*time.Second {
			t.Fatalf("ring down, state %q: %d %s after %v", state, status, body, time.Since(start))
		}
	}
	ring.down.Store(false)
	if !greeted(t, ts.URL, s) {
		t.Fatal("refused once the ring is back")
	}
}

// TestInputRoundsKeyRingThroughBalancer: the library's client, through a
// round-robin balancer in front of two servers sharing a ring, finishes
// greet: its answer round lands on the other server.
func TestInputRoundsKeyRingThroughBalancer(t *testing.T) {
	noLeaks(t)
	ring, err := state.NewMemoryKeyRing(3, ringKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var served []string
	var proxies []http.Handler
	for _, name := range []string{"A", "B"} {
		u, _ := url.Parse(greetServer(t, &jsonrpc.InputRounds{KeyRing: ring}).URL)
		p := httputil.NewSingleHostReverseProxy(u)
		proxies = append(proxies, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			served = append(served, name)
			mu.Unlock()
			p.ServeHTTP(w, r)
		}))
	}
	var next atomic.Uint64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[next.Add(1)%2].ServeHTTP(w, r)
	}))
	defer lb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := dialMCP(t, lb.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026))
	defer c.Close()
	for range 2 {
		var r toolResult
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &r); err != nil || r.StructuredContent.Greeting != "Hello, Ada!" {
			t.Fatalf("greet through the balancer: %+v %v", r, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(served, " ") != "B A B A" {
		t.Fatalf("rounds served by %v, want B A B A", served)
	}
}

// BenchmarkInputRounds: greet's two rounds (the first signs a
// requestState, the second verifies one) served by the Streamable HTTP
// handler, with static Keys.
func BenchmarkInputRounds(b *testing.B) {
	benchRounds(b, &jsonrpc.InputRounds{Keys: [][]byte{ringKey("k1").Secret}})
}

// BenchmarkInputRoundsKeyRing: BenchmarkInputRounds with a memory ring.
func BenchmarkInputRoundsKeyRing(b *testing.B) {
	ring, err := state.NewMemoryKeyRing(3, ringKey("k1"))
	if err != nil {
		b.Fatal(err)
	}
	benchRounds(b, &jsonrpc.InputRounds{KeyRing: ring})
}

func benchRounds(b *testing.B, rounds *jsonrpc.InputRounds) {
	srv := &jsonrpc.Server{Handler: greetMux(rounds), Convention: jsonrpc.ConventionMCP}
	h := srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}, SSE: jsonrpc.SSENever})
	post := func(params string) string {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", jsonrpc.MCPVersion2026)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "greet")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Body.String()
	}
	first := `{"name":"greet",` + metaElicit + `}`
	var r struct{ Result jsonrpc.InputRequiredResult }
	if err := json.Unmarshal([]byte(post(first)), &r); err != nil || r.Result.RequestState == "" {
		b.Fatalf("first round: %v %+v", err, r)
	}
	second := `{"name":"greet",` + metaElicit + `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + r.Result.RequestState + `"}`
	b.ReportAllocs()
	for b.Loop() {
		if !strings.Contains(post(first), `"requestState"`) || !strings.Contains(post(second), "Hello, Ada!") {
			b.Fatal("rounds failed")
		}
	}
}
