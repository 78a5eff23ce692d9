package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

const mcpHelperEnv = "JSONRPC_MCP_STDIO_HELPER"

// TestMCPStdioHelperProcess is the demo's MCP server on stdio, both eras
// (MCPStateless), for the tests of DialCommand as an MCP client.
func TestMCPStdioHelperProcess(t *testing.T) {
	if os.Getenv(mcpHelperEnv) == "" {
		t.Skip("a subprocess of the MCP stdio tests")
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	l, err := srv.Listen("stdio:")
	if err != nil {
		os.Exit(1)
	}
	<-l.Done()
	os.Exit(0)
}

func dialMCPCommand(t *testing.T, ctx context.Context, opts ...jsonrpc.DialOption) *jsonrpc.Conn {
	t.Helper()
	t.Setenv(mcpHelperEnv, "1")
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	c, err := jsonrpc.DialCommand(ctx, os.Args[0], []string{"-test.run=^TestMCPStdioHelperProcess$"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// DialCommand with WithMCPVersion negotiates the era over stdio as the
// Streamable HTTP client does: auto reaches 2026-07-28 (the greet tool's
// question answered in a second round by the handler), a pinned
// 2025-11-25 initializes (the question then comes as a request on the
// stream, answered by the same handler), and a 2025-11-25 client without
// the elicitation capability is never asked: -32021.
func TestMCPClientStdioEras(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	caps := jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{}})
	for _, tc := range []struct{ want, reached string }{
		{jsonrpc.MCPAuto, jsonrpc.MCPVersion2026},
		{jsonrpc.MCPVersion2026, jsonrpc.MCPVersion2026},
		{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2025},
	} {
		c := dialMCPCommand(t, ctx, jsonrpc.WithMCPVersion(tc.want), caps, jsonrpc.WithHandler(elicitor))
		var res struct {
			ResultType string `json:"resultType"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &res); err != nil {
			t.Fatalf("%s: greet: %v", tc.want, err)
		}
		if got := c.MCPVersion(); got != tc.reached {
			t.Errorf("%s: reached %q, want %q", tc.want, got, tc.reached)
		}
		if len(res.Content) != 1 || res.Content[0].Text != "Hello, Ada!" || (res.ResultType == "complete") != (tc.reached == jsonrpc.MCPVersion2026) {
			t.Errorf("%s: greet: %+v", tc.want, res)
		}
	}
	for _, v := range []string{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2026} {
		c := dialMCPCommand(t, ctx, jsonrpc.WithMCPVersion(v), jsonrpc.WithHandler(elicitor))
		err := c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, nil)
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != jsonrpc.CodeMissingClientCapability || !strings.Contains(string(e.Data), `"elicitation"`) {
			t.Errorf("%s, no elicitation capability: %v", v, err)
		}
		err = c.Call(ctx, "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}}, nil)
		if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || e.Message != "Unknown tool: nope" {
			t.Errorf("%s: unknown tool: %v", v, err)
		}
	}
}

// A session-era client over Streamable HTTP whose initialize declared no
// elicitation capability is never sent elicitation/create: the tool that
// needs it answers -32021, as under 2026-07-28.
func TestMCPSessionNoElicitationCapability(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ts, _ := demoMCPServer(t, jsonrpc.MCPVersion2026)
	asked := make(chan string, 4)
	h := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		asked <- req.Method
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
	})
	c, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025), jsonrpc.WithHandler(h))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var raw json.RawMessage
	err = c.Call(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, &raw)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeMissingClientCapability || string(e.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Fatalf("greet without the capability: %s %v", raw, err)
	}
	select {
	case m := <-asked:
		t.Fatalf("the server sent %s to a client without the capability", m)
	default:
	}
}
