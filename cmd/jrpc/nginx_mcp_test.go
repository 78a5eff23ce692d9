package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// nginxMCPKey is the --mcp-state-key both MCP instances share, so that a
// multi round-trip started on one resumes on the other.
const nginxMCPKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

// startNginxMCP starts a `jrpc serve --mcp` instance for TestNginx's /mcp
// location and returns its host:port and its log (-v: one line per call).
func startNginxMCP(t *testing.T) (string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--mcp", "-v", "--listen", "http://127.0.0.1:0/mcp", "--mcp-state-key", nginxMCPKey, "--trusted-proxy", "127.0.0.1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log := &syncBuffer{}
	u := map[string]string{}
	if err := readListening(stderr, 1, u, log); err != nil {
		t.Fatal(err, log.String())
	}
	return strings.TrimPrefix(strings.TrimSuffix(u["http"], "/mcp"), "http://"), log
}

// testNginxMCP: through the config's /mcp location, one MCP client of
// 2026-07-28 (stateless) has its calls spread over both instances, every
// one answered, greet's multi round-trip included (its second round may
// land on the other instance: the shared key verifies its requestState);
// a client of 2025-11-25 keeps its session on one instance.
func testNginxMCP(t *testing.T, ctx context.Context, front string, a, b *syncBuffer) {
	elicit := jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(context.Context, *jsonrpc.Request) (any, error) {
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	}))
	caps := jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}})
	count := func() (int, int) {
		return strings.Count(a.String(), "tools/call"), strings.Count(b.String(), "tools/call")
	}
	// servedSince waits (the instances log a call after answering it) for
	// total calls logged since a0, b0, and returns them by instance.
	servedSince := func(a0, b0, total int) (int, int) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			a1, b1 := count()
			if a1-a0+b1-b0 >= total || time.Now().After(deadline) {
				return a1 - a0, b1 - b0
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	call := func(t *testing.T, c *jsonrpc.Conn, i int) {
		t.Helper()
		var add struct {
			StructuredContent struct {
				Sum float64 `json:"sum"`
			} `json:"structuredContent"`
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": i, "b": 1}}, &add); err != nil || add.StructuredContent.Sum != float64(i+1) {
			t.Fatalf("add %d: %+v %v", i, add, err)
		}
		var greet struct {
			StructuredContent struct {
				Greeting string `json:"greeting"`
			} `json:"structuredContent"`
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &greet); err != nil || greet.StructuredContent.Greeting != "Hello, Ada!" {
			t.Fatalf("greet %d: %+v %v", i, greet, err)
		}
	}

	t.Run("Stateless2026RoundRobin", func(t *testing.T) {
		c, err := jsonrpc.DialStreamableHTTP(ctx, "http://"+front+"/mcp", jsonrpc.WithMCPVersion(jsonrpc.MCPAuto), elicit, caps)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a0, b0 := count()
		for i := range 10 {
			call(t, c, i)
		}
		if v := c.MCPVersion(); v != jsonrpc.MCPVersion2026 {
			t.Fatalf("era %q", v)
		}
		na, nb := servedSince(a0, b0, 30) // add, greet (2 rounds): 3 calls each
		if na < 5 || nb < 5 || na+nb != 30 {
			t.Fatalf("tools/call served by a: %d, b: %d (want 30 spread round-robin)", na, nb)
		}
	})

	t.Run("Session2025Sticky", func(t *testing.T) {
		c, err := jsonrpc.DialStreamableHTTP(ctx, "http://"+front+"/mcp", jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025), elicit, caps)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a0, b0 := count()
		for i := range 5 {
			call(t, c, i)
		}
		na, nb := servedSince(a0, b0, 10)
		if na*nb != 0 || na+nb != 10 {
			t.Fatalf("one session's tools/call served by a: %d, b: %d (want all 10 on one)", na, nb)
		}
	})
}
