package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

// Our client waiting on tasks (WithMCPTasks), over real Streamable HTTP
// against package mcp's server: a call answered with a task returns the
// task's result, polling at the interval the server suggests (counted at
// the server); a failed task's error is the call's *jsonrpc.Error; the
// questions of an input_required task are answered by the client's
// handler; a question the handler cannot answer, and a ctx that ends,
// cancel the task.
func TestClientWaitsOnTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const interval = 50 * time.Millisecond
	s := mcp.NewServer(mcp.Implementation{Name: "wait", Version: "1"})
	store := mcp.NewMemoryTaskStore(0, nil)
	s.Tasks, s.TaskPollInterval = store, interval
	mcp.AddTool(s, mcp.Tool{Name: "slow", TaskSupport: mcp.TaskRequired}, func(ctx context.Context, a struct {
		Ms int `json:"ms"`
	}) (*mcp.ToolResult, error) {
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("slept")}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	mcp.AddTool(s, mcp.Tool{Name: "broken", TaskSupport: mcp.TaskRequired}, func(context.Context, struct{}) (*mcp.ToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: "broken job"}
	})
	mcp.AddTool(s, mcp.Tool{Name: "ask", TaskSupport: mcp.TaskRequired}, func(ctx context.Context, q struct {
		Question string `json:"question"`
	}) (*mcp.ToolResult, error) {
		var a elicited
		if err := s.Ask(ctx, "who", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": q.Question}}, &a); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("hi " + a.Content["name"].(string))}}, nil
	})
	var gets atomic.Int64
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	h := srv.StreamableHTTPHandler(s.StreamableHTTPOptions())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tasks/get" {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	var mu sync.Mutex
	var statuses []string
	answerer := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		if strings.Contains(string(req.Params), "nobody") {
			return nil, &jsonrpc.Error{Code: -32001, Message: "cannot say"}
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	})
	c, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithHandler(answerer),
		jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{}}),
		jsonrpc.WithMCPTasks(func(id, status string) { mu.Lock(); statuses = append(statuses, status); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var res struct {
		ResultType string        `json:"resultType"`
		Content    []mcp.Content `json:"content"`
	}
	start := time.Now()
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 300}}, &res); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if res.ResultType != "complete" || len(res.Content) != 1 || res.Content[0].Text != "slept" {
		t.Fatalf("the task's result: %+v", res)
	}
	if n, most := gets.Load(), int64(took/interval)+1; n < 2 || n > most {
		t.Errorf("%d tasks/get in %v, want 2..%d (one per pollIntervalMs, %v)", n, took, most, interval)
	}
	mu.Lock()
	if strings.Join(statuses, " ") != "working completed" {
		t.Errorf("statuses seen: %v", statuses)
	}
	mu.Unlock()

	var e *jsonrpc.Error
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "broken"}, &res); !errors.As(err, &e) || e.Code != -32000 || e.Message != "broken job" {
		t.Fatalf("a failed task: %v, want its error", err)
	}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"question": "who?"}}, &res); err != nil || res.Content[0].Text != "hi Ada" {
		t.Fatalf("a task asking for input: %+v %v", res, err)
	}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"question": "nobody?"}}, &res); err == nil || !strings.Contains(err.Error(), "cannot say") {
		t.Fatalf("a question the handler cannot answer: %v, want its error", err)
	}

	short, stop := context.WithTimeout(ctx, 150*time.Millisecond)
	defer stop()
	if err := c.Call(short, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 60000}}, &res); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call whose ctx ends: %v", err)
	}
	cancelled := 0
	all, err := store.List(ctx, "")
	for _, tk := range all {
		if tk.Status == mcp.TaskCancelled {
			cancelled++
		}
	}
	if err != nil || cancelled != 2 {
		t.Fatalf("tasks at the end: %d cancelled of %d (%v), want 2 (the question not answered, the ctx that ended)", cancelled, len(all), err)
	}
}
