package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type addResult struct {
	Sum float64 `json:"sum"`
}

func newTestServer(t *testing.T) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(mcp.Implementation{Name: "test", Version: "1"})
	s.PageSize = 2
	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds."}, func(_ context.Context, a addArgs) (addResult, error) {
		return addResult{Sum: a.A + a.B}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "pic"}, func(context.Context, struct{}) (*mcp.ToolResult, error) {
		return &mcp.ToolResult{Content: []mcp.Content{mcp.ImageContent([]byte{1, 2}, "image/png"), mcp.ResourceLink(mcp.Resource{URI: "test://a", Name: "a"})}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "fail"}, func(context.Context, struct{}) (*mcp.ToolResult, error) {
		return nil, errors.New("boom")
	})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(_ context.Context, uri string, v map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "item "+v["id"])}, nil
	})
	s.AddPrompt(mcp.Prompt{Name: "hi", Arguments: []mcp.PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, a map[string]string) (*mcp.PromptResult, error) {
		return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("hi " + a["who"])}}}, nil
	})
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// One server, both eras, over real Streamable HTTP: typed and raw tools,
// content types, isError, the unknown tool, pagination, a template read,
// an unknown resource, a prompt and its required argument.
func TestServerBothEras(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, url := newTestServer(t)
	for _, v := range []string{jsonrpc.MCPVersion2025, jsonrpc.MCPVersion2026} {
		c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(v))
		if err != nil {
			t.Fatal(err)
		}
		call := func(method string, params any) (string, error) {
			var raw json.RawMessage
			err := c.Call(ctx, method, params, &raw)
			return string(raw), err
		}
		want := func(method string, params any, parts ...string) {
			t.Helper()
			got, err := call(method, params)
			if err != nil {
				t.Fatalf("%s %s: %v", v, method, err)
			}
			for _, p := range parts {
				if !strings.Contains(got, p) {
					t.Errorf("%s %s: %s lacks %s", v, method, got, p)
				}
			}
			if (v == jsonrpc.MCPVersion2026) != strings.Contains(got, `"resultType":"complete"`) {
				t.Errorf("%s %s: resultType: %s", v, method, got)
			}
			if (v == jsonrpc.MCPVersion2026) != strings.Contains(got, `"_meta":{"`+jsonrpc.MetaServerInfo+`":{"name":"test"`) {
				t.Errorf("%s %s: the server's identity in _meta: %s", v, method, got)
			}
		}
		want("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, `"content":[{"type":"text","text":"{\"sum\":5}"}]`, `"structuredContent":{"sum":5}`)
		want("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": "x"}}, `"isError":true`, "/arguments/a")
		want("tools/call", map[string]any{"name": "pic"}, `{"type":"image","data":"AQI=","mimeType":"image/png"}`, `{"type":"resource_link","uri":"test://a","name":"a"}`)
		want("tools/call", map[string]any{"name": "fail"}, `"text":"boom"`, `"isError":true`)
		want("tools/list", map[string]any{}, `"tools":[{"name":"add"`, `"name":"pic"`, `"nextCursor":"`) // the order they were added
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if err := c.Call(ctx, "tools/list", map[string]any{}, &page); err != nil {
			t.Fatal(err)
		}
		want("tools/list", map[string]any{"cursor": page.NextCursor}, `"tools":[{"name":"fail"`)
		want("resources/read", map[string]any{"uri": "test://item/42"}, `"text":"item 42"`)
		want("resources/templates/list", map[string]any{}, `"uriTemplate":"test://item/{id}"`)
		want("prompts/get", map[string]any{"name": "hi", "arguments": map[string]any{"who": "Ada"}}, `"text":"hi Ada"`)
		for _, tc := range []struct {
			method string
			params any
			msg    string
		}{
			{"tools/call", map[string]any{"name": "nope"}, "Unknown tool: nope"},
			{"resources/read", map[string]any{"uri": "test://none"}, "Resource not found"},
			{"prompts/get", map[string]any{"name": "hi"}, "Missing required argument: who"},
			{"tools/list", map[string]any{"cursor": "!!"}, "Invalid cursor"},
		} {
			_, err := call(tc.method, tc.params)
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || e.Message != tc.msg {
				t.Errorf("%s %s: %v", v, tc.method, err)
			}
		}
		c.Close()
	}
}

// A tool added while a session-era client is connected: it gets
// notifications/tools/list_changed on its session.
func TestServerListChanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, url := newTestServer(t)
	got := make(chan string, 8)
	c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025),
		jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
			got <- req.Method
			return nil, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "late"}, func(context.Context, struct{}) (addResult, error) { return addResult{}, nil })
	select {
	case m := <-got:
		if m != "notifications/tools/list_changed" {
			t.Fatalf("got %s", m)
		}
	case <-ctx.Done():
		t.Fatal("no list_changed")
	}
}
