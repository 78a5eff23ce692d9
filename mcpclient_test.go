package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/mcp"
)

// seen is what an MCP test server saw of its clients' HTTP requests.
type seen struct {
	mu   sync.Mutex
	reqs []string // "POST tools/call v=2026-07-28 name=add session=" …
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r.Method+" "+r.Header.Get("Mcp-Method")+" v="+r.Header.Get("MCP-Protocol-Version")+" name="+r.Header.Get("Mcp-Name")+" session="+r.Header.Get("Mcp-Session-Id"))
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// demoMCPServer serves the demo's MCP tools over Streamable HTTP: the
// session era for initialize-first clients, and the stateless revisions
// named (none: a server of the session era only).
func demoMCPServer(t *testing.T, stateless ...string) (*httptest.Server, *seen) {
	t.Helper()
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	h := srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, ProtocolVersions: mcp.SessionVersions, StatelessVersions: stateless,
	})
	var s seen
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.record(r)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &s
}

// elicitor answers the demo's greet tool: elicitation/create with a name.
var elicitor = jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method != "elicitation/create" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
	}
	return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
})

type toolResult struct {
	ResultType        string `json:"resultType"`
	StructuredContent struct {
		Sum      float64 `json:"sum"`
		Greeting string  `json:"greeting"`
	} `json:"structuredContent"`
}

func dialMCP(t *testing.T, url string, opts ...jsonrpc.DialOption) *jsonrpc.Conn {
	t.Helper()
	opts = append([]jsonrpc.DialOption{jsonrpc.WithHandler(elicitor),
		jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}),
		jsonrpc.WithMCPClientInfo("mcpclient-test", "1")}, opts...)
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// addAndGreet calls the demo's add tool, then greet (which asks for a name).
func addAndGreet(t *testing.T, ctx context.Context, c *jsonrpc.Conn) (add, greet toolResult) {
	t.Helper()
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, &add); err != nil || add.StructuredContent.Sum != 5 {
		t.Fatalf("add: %+v %v", add, err)
	}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &greet); err != nil || greet.StructuredContent.Greeting != "Hello, Ada!" {
		t.Fatalf("greet: %+v %v", greet, err)
	}
	return add, greet
}

// TestMCPClientStateless: on auto, a client of a server of both eras
// probes server/discover and stays stateless: every POST carries the
// revision, Mcp-Method and Mcp-Name, no session is opened and no GET
// stream; greet's question is answered by the client's handler in a
// second round (multi round-trip). Pinned to 2026-07-28 it sends no probe.
func TestMCPClientStateless(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, mode := range []string{jsonrpc.MCPAuto, jsonrpc.MCPVersion2026} {
		ts, s := demoMCPServer(t, jsonrpc.MCPVersion2026)
		c := dialMCP(t, ts.URL, jsonrpc.WithMCPVersion(mode))
		if v := c.MCPVersion(); v != "" {
			t.Fatalf("%s: era %q before any message", mode, v)
		}
		add, greet := addAndGreet(t, ctx, c)
		if add.ResultType != "complete" || greet.ResultType != "complete" {
			t.Fatalf("%s: resultType %q %q", mode, add.ResultType, greet.ResultType)
		}
		if v := c.MCPVersion(); v != jsonrpc.MCPVersion2026 {
			t.Fatalf("%s: era %q", mode, v)
		}
		c.Close()
		want := []string{
			"POST tools/call v=2026-07-28 name=add session=",
			"POST tools/call v=2026-07-28 name=greet session=", // answered input_required
			"POST tools/call v=2026-07-28 name=greet session=",
		}
		if mode == jsonrpc.MCPAuto {
			want = append([]string{"POST server/discover v=2026-07-28 name= session="}, want...)
		}
		if got := s.all(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: requests\n%s\nwant\n%s", mode, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestMCPClientSession: pinned to 2025-11-25, or on auto before a server
// of the session era only (its 400 to the probe is no MCP error), the
// client initializes, keeps the session, and greet's question comes as
// the server's elicitation/create request, served by the same handler.
func TestMCPClientSession(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		mode      string
		stateless []string
		probe     string
	}{
		{jsonrpc.MCPVersion2025, []string{jsonrpc.MCPVersion2026}, ""},
		{jsonrpc.MCPAuto, nil, "POST server/discover v=2026-07-28 name= session=\n"},
		// -32022 naming a stateless revision the client does not speak
		// and the session era's: initialize.
		{jsonrpc.MCPAuto, []string{"2099-01-01"}, "POST server/discover v=2026-07-28 name= session=\n"},
	} {
		ts, s := demoMCPServer(t, tc.stateless...)
		c := dialMCP(t, ts.URL, jsonrpc.WithMCPVersion(tc.mode))
		add, greet := addAndGreet(t, ctx, c)
		if add.ResultType != "" || greet.ResultType != "" {
			t.Fatalf("%s: a session-era result has no resultType: %q %q", tc.mode, add.ResultType, greet.ResultType)
		}
		if v := c.MCPVersion(); v != jsonrpc.MCPVersion2025 {
			t.Fatalf("%s %v: era %q", tc.mode, tc.stateless, v)
		}
		c.Close()
		got := strings.Join(s.all(), "\n")
		if !strings.HasPrefix(got, tc.probe+"POST  v= name= session=\n") || // initialize
			!strings.Contains(got, "POST  v=2025-11-25 name= session=") || strings.Contains(got, "Mcp-Method") ||
			!strings.Contains(got, "\nDELETE  v=2025-11-25 name= session=") || strings.Count(got, "POST  v= name=") != 1 {
			t.Fatalf("%s %v: requests\n%s", tc.mode, tc.stateless, got)
		}
	}
}

// TestMCPClientSessionNoEvents: in a session that keeps no events, each
// POST is served at once, and greet's question to the client (MCP
// 2025-11-25: elicitation/create) opens the POST's connection to ask it.
func TestMCPClientSessionNoEvents(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, EventStoreSize: -1}))
	t.Cleanup(ts.Close)
	c := dialMCP(t, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addAndGreet(t, ctx, c)
}

// TestMCPClientNoMCPServer: on auto, a Streamable HTTP server that knows
// neither server/discover nor initialize gets the caller's messages as
// they are (no _meta, no MCP headers).
func TestMCPClientNoMCPServer(t *testing.T) {
	noLeaks(t)
	mux := jsonrpc.NewMux()
	var mu sync.Mutex
	var params []string
	jsonrpc.Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		params = append(params, string(p))
		mu.Unlock()
		return p, nil
	})
	ts := httptest.NewServer((&jsonrpc.Server{Handler: mux}).StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer ts.Close()
	c := dialMCP(t, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPAuto))
	defer c.Close()
	var got []int
	if err := c.Call(context.Background(), "echo", []int{1, 2}, &got); err != nil || len(got) != 2 {
		t.Fatalf("echo: %v %v", got, err)
	}
	if v := c.MCPVersion(); v != "" {
		t.Fatalf("era %q", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(params) != 1 || params[0] != "[1,2]" {
		t.Fatalf("params seen: %q", params)
	}
}

// TestMCPClientRefusals: under 2026-07-28 a batch and params that are not
// an object are refused before sending; a server that asks for input
// without end is left after WithMaxInputRounds rounds; a question the
// client's handler cannot answer fails the call with its error.
func TestMCPClientRefusals(t *testing.T) {
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mux := jsonrpc.NewMux()
	var rounds sync.Map
	jsonrpc.Register(mux, "tools/call", func(_ context.Context, p struct {
		Name           string                     `json:"name"`
		InputResponses map[string]json.RawMessage `json:"inputResponses,omitzero"`
		RequestState   string                     `json:"requestState,omitzero"`
		Meta           json.RawMessage            `json:"_meta"`
	}) (map[string]any, error) {
		n, _ := rounds.LoadOrStore(p.Name, new(int))
		*n.(*int)++
		var answer struct {
			Action  string            `json:"action"`
			Content map[string]string `json:"content"`
		}
		_ = json.Unmarshal(p.InputResponses["q"], &answer)
		if *n.(*int) > 1 && (answer.Action != "accept" || answer.Content["name"] != "Ada" || p.RequestState != "s") {
			return nil, errors.New("round without the answer")
		}
		method := "elicitation/create"
		if p.Name == "sample" {
			method = "sampling/createMessage"
		}
		return map[string]any{"resultType": "input_required", "requestState": "s",
			"inputRequests": map[string]any{"q": map[string]any{"method": method, "params": map[string]any{}}}}, nil
	})
	srv := &jsonrpc.Server{Handler: mux, ExposeInternalErrors: true}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}}))
	defer ts.Close()
	c := dialMCP(t, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithMaxInputRounds(3))
	defer c.Close()
	err := c.Call(ctx, "tools/call", map[string]any{"name": "loop"}, nil)
	if n, ok := rounds.Load("loop"); !errors.Is(err, jsonrpc.ErrTooManyInputRounds) || !ok || *n.(*int) != 4 {
		t.Fatalf("endless input: %v (%v calls)", err, n)
	}
	var e *jsonrpc.Error
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "sample"}, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(err.Error(), "sampling/createMessage") {
		t.Fatalf("unanswerable input: %v", err)
	}
	if err := c.Call(ctx, "tools/call", []any{"x"}, nil); err == nil || !strings.Contains(err.Error(), "params must be an object") {
		t.Fatalf("array params: %v", err)
	}
	b := &jsonrpc.Batch{}
	b.Call("tools/call", map[string]any{"name": "x"}, nil)
	if err := c.Batch(ctx, b); err == nil || !strings.Contains(err.Error(), "no batches") {
		t.Fatalf("batch: %v", err)
	}
	if _, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPAuto), jsonrpc.WithMCPCapabilities([]int{1})); err == nil {
		t.Fatal("capabilities that are no object accepted")
	}
}

// BenchmarkMCPClientCall: a tools/call of the demo's add over loopback
// Streamable HTTP, by a client sending it as it is (session era, after
// initialize) and by a client of 2026-07-28 (_meta added to the params,
// the mirrored headers): what the stateless era costs the client.
func BenchmarkMCPClientCall(b *testing.B) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, ProtocolVersions: mcp.SessionVersions, StatelessVersions: mcp.StatelessVersions, SSE: jsonrpc.SSENever,
	}))
	defer ts.Close()
	args := map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}
	for _, mode := range []string{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2026} {
		b.Run(mode, func(b *testing.B) {
			c, err := jsonrpc.DialStreamableHTTP(context.Background(), ts.URL, jsonrpc.WithMCPVersion(mode))
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			var res toolResult
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Call(context.Background(), "tools/call", args, &res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMCPClientMeta: under 2026-07-28 the client's _meta goes in front of
// the caller's params, as they were; a caller's own _meta keeps its
// members (progressToken) beside the client's; params that are no object
// are refused.
func TestMCPClientMeta(t *testing.T) {
	noLeaks(t)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/call", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	ts := httptest.NewServer((&jsonrpc.Server{Handler: mux}).StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}}))
	defer ts.Close()
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithMCPClientInfo("t", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, tc := range []struct {
		params any
		want   string
	}{
		{json.RawMessage(`{"name":"x","arguments":{"a":1}}`), `{` + meta + `,"name":"x","arguments":{"a":1}}`},
		{json.RawMessage(`{ "name" : "x" }`), `{` + meta + `, "name" : "x" }`},
		{map[string]any{"name": "x", "_meta": map[string]any{"progressToken": 7}}, `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"name":"x"}`},
	} {
		var got json.RawMessage
		if err := c.Call(context.Background(), "tools/call", tc.params, &got); err != nil || string(got) != tc.want {
			t.Errorf("params %v:\n got %s %v\nwant %s", tc.params, got, err, tc.want)
		}
	}
	for _, bad := range []any{[]int{1}, "x", json.RawMessage(`{"_meta":[1],"name":"x"}`)} {
		if err := c.Call(context.Background(), "tools/call", bad, nil); err == nil {
			t.Errorf("params %v accepted", bad)
		}
	}
}
