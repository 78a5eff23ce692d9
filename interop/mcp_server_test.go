package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedhq/jsonrpc"
)

// Our Streamable HTTP client (jsonrpc.DialStreamableHTTP) against the
// official MCP Go SDK's server (issue 15, point 2): initialize with a
// session, a tool call whose handler sends progress notifications and
// calls the client back (ping, served by our WithHandler and answered
// by POST) before its result, and Close ending the session.
func TestStreamableClientMCPGoSDKServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()

	server := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "work", Description: "reports progress, pings the client"}, func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 2; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2}); err != nil {
				return nil, nil, err
			}
		}
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, nil, fmt.Errorf("pinging the client: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pinged"}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	var methodsMu sync.Mutex
	methods := map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methodsMu.Lock()
		methods[r.Method]++
		methodsMu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	var mu sync.Mutex
	var progress []string
	pinged := 0
	client := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		switch req.Method {
		case "ping":
			mu.Lock()
			pinged++
			mu.Unlock()
			return struct{}{}, nil
		case "notifications/progress":
			mu.Lock()
			progress = append(progress, string(req.Params))
			mu.Unlock()
			return nil, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
	})
	c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL, jsonrpc.WithHandler(client), jsonrpc.WithMaxConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		ProtocolVersion string         `json:"protocolVersion"`
		ServerInfo      map[string]any `json:"serverInfo"`
		Capabilities    map[string]any `json:"capabilities"`
	}
	if err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "seedhq-jsonrpc", "version": "1.0.0"},
	}, &init); err != nil || init.ServerInfo["name"] != "sdk" || init.ProtocolVersion != "2025-11-25" {
		t.Fatalf("initialize: %+v %v", init, err)
	}
	if err := c.Notify(ctx, "notifications/initialized", map[string]any{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
	if err := c.Call(ctx, "ping", map[string]any{}, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "tok-1"}}, &res); err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "pinged" {
		t.Fatalf("tools/call result: %+v", res)
	}
	mu.Lock()
	got := strings.Join(progress, "\n")
	if pinged != 1 {
		t.Errorf("the server's ping was served %d times", pinged)
	}
	mu.Unlock()
	for i := 1; i <= 2; i++ {
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Progress      float64         `json:"progress"`
			Total         float64         `json:"total"`
		}
		line := strings.Split(got, "\n")[min(i-1, len(progress)-1)]
		if json.Unmarshal([]byte(line), &p) != nil || string(p.ProgressToken) != `"tok-1"` || p.Progress != float64(i) {
			t.Fatalf("progress notifications: %s", got)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The SDK offers the GET stream: the client opened it; Close ended the session.
	methodsMu.Lock()
	defer methodsMu.Unlock()
	if methods["GET"] < 1 || methods["DELETE"] != 1 {
		t.Fatalf("requests by method: %v", methods)
	}
}

// Our MCP client (WithMCPVersion) against the official Go SDK's server.
// Its stateless handler speaks 2026-07-28: on auto and pinned to it the
// client stays stateless (no session, no GET, the revision's headers on
// every POST). Its session handler answers server/discover with session-era
// revisions only: on auto the client falls back to initialize, and pinned to
// 2025-11-25 it initializes at once; both keep the SDK's session. Each lists
// the tools, calls one, and gets the SDK's error for an unknown tool.
func TestStreamableClientMCPGoSDKServerEras(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	server := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "1.0.0"}, nil)
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "adds"}, func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	for _, tc := range []struct {
		mode, era string
		handler   http.Handler
		probe     string
	}{
		{jsonrpc.MCPAuto, jsonrpc.MCPVersion2026, stateless, ""},
		{jsonrpc.MCPVersion2026, jsonrpc.MCPVersion2026, stateless, ""},
		{jsonrpc.MCPAuto, jsonrpc.MCPVersion2025, stateful, "POST server/discover  v=2026-07-28 s=false\n"},
		{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2025, stateful, ""},
	} {
		handler := tc.handler
		var mu sync.Mutex
		var reqs []string
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			reqs = append(reqs, r.Method+" "+r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Name")+" v="+r.Header.Get("MCP-Protocol-Version")+" s="+strconv.FormatBool(r.Header.Get("Mcp-Session-Id") != ""))
			mu.Unlock()
			handler.ServeHTTP(w, r)
		}))
		c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL, jsonrpc.WithMCPVersion(tc.mode), jsonrpc.WithMCPClientInfo("seedhq-jsonrpc", "1"))
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := c.Call(ctx, "tools/list", nil, &list); err != nil || len(list.Tools) != 1 || list.Tools[0].Name != "add" {
			t.Fatalf("%s: tools/list: %+v %v", tc.mode, list, err)
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "5" {
			t.Fatalf("%s: tools/call: %+v %v", tc.mode, res, err)
		}
		var e *jsonrpc.Error
		var bad struct {
			IsError bool `json:"isError"`
		}
		err = c.Call(ctx, "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}}, &bad)
		if !errors.As(err, &e) && !bad.IsError {
			t.Fatalf("%s: unknown tool: %+v %v", tc.mode, bad, err)
		}
		if v := c.MCPVersion(); v != tc.era {
			t.Fatalf("%s: era %q, want %q", tc.mode, v, tc.era)
		}
		c.Close()
		hs.Close()
		mu.Lock()
		got := strings.Join(reqs, "\n")
		mu.Unlock()
		if tc.era == jsonrpc.MCPVersion2026 && (strings.Contains(got, "s=true") || strings.Contains(got, "GET") || strings.Contains(got, "DELETE") ||
			!strings.Contains(got, "POST tools/call add v=2026-07-28 s=false") || !strings.Contains(got, "POST tools/list  v=2026-07-28")) {
			t.Fatalf("%s: requests\n%s", tc.mode, got)
		}
		if tc.era == jsonrpc.MCPVersion2025 && (!strings.HasPrefix(got, tc.probe+"POST   v= s=false\n") || !strings.Contains(got, "POST   v=2025-11-25 s=true") || !strings.Contains(got, "DELETE   v=2025-11-25 s=true")) {
			t.Fatalf("%s: requests\n%s", tc.mode, got)
		}
	}
}

// startTSv2Server runs node/mcp_v2_server.mjs (the TypeScript SDK v2's
// createMcpHandler) and returns its URL; it stops with the test.
func startTSv2Server(t *testing.T, ctx context.Context) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", "mcp_v2_server.mjs")
	cmd.Dir = nodeDir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			t.Logf("mcp_v2_server.mjs stderr:\n%s", s)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("mcp_v2_server.mjs: %q %v\n%s", line, err, stderr.String())
	}
	return url
}

// Our MCP client against the official TypeScript SDK v2 server
// (@modelcontextprotocol/server, createMcpHandler), which speaks
// 2026-07-28 and serves 2025-era clients statelessly: on auto and pinned
// to 2026-07-28 the client reaches 2026-07-28 and answers greet's
// inputRequired (an elicitation) with its handler in a second round;
// pinned to 2025-11-25 it initializes and calls. An unknown tool is an
// error in every era.
func TestStreamableClientTypeScriptSDKv2Server(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/server")
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	url := startTSv2Server(t, ctx)
	var asked []string
	var mu sync.Mutex
	elicit := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		var p struct {
			Message string `json:"message"`
		}
		if req.Method != "elicitation/create" || json.Unmarshal(req.Params, &p) != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
		}
		mu.Lock()
		asked = append(asked, p.Message)
		mu.Unlock()
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	})
	type callResult struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	for _, tc := range []struct{ mode, era string }{
		{jsonrpc.MCPAuto, jsonrpc.MCPVersion2026},
		{jsonrpc.MCPVersion2026, jsonrpc.MCPVersion2026},
		{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2025},
	} {
		c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(tc.mode), jsonrpc.WithHandler(elicit),
			jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}))
		if err != nil {
			t.Fatal(err)
		}
		var add callResult
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, &add); err != nil || add.IsError || len(add.Content) != 1 || add.Content[0].Text != "5" {
			t.Fatalf("%s: add: %+v %v", tc.mode, add, err)
		}
		if v := c.MCPVersion(); v != tc.era {
			t.Fatalf("%s: era %q, want %q", tc.mode, v, tc.era)
		}
		var bad callResult
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}}, &bad); err == nil && !bad.IsError {
			t.Fatalf("%s: unknown tool: %+v", tc.mode, bad)
		}
		if tc.era == jsonrpc.MCPVersion2026 {
			mu.Lock()
			asked = nil
			mu.Unlock()
			var greet callResult
			if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &greet); err != nil || len(greet.Content) != 1 || greet.Content[0].Text != "Hello, Ada!" {
				t.Fatalf("%s: greet: %+v %v", tc.mode, greet, err)
			}
			mu.Lock()
			if len(asked) != 1 || asked[0] != "What is your name?" {
				t.Errorf("%s: the handler was asked %q", tc.mode, asked)
			}
			mu.Unlock()
		}
		c.Close()
	}
}
