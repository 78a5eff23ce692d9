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

type inputTask struct {
	task
	InputRequests map[string]jsonrpc.InputRequest `json:"inputRequests"`
}

type elicited struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// inputServer serves "pick" (a task asking two questions at once, then
// one more), "cautious" (asks for sampling) and "named" (DeferTask: asks
// by multi round-trip, then becomes a task).
func inputServer(t *testing.T) string {
	s := mcp.NewServer(mcp.Implementation{Name: "input", Version: "1"})
	form := func(prop string) jsonrpc.InputRequest {
		return jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": prop + "?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{prop: map[string]any{"type": "string"}}}}}
	}
	mcp.AddTool(s, mcp.Tool{Name: "pick", TaskSupport: mcp.TaskOptional}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
		var a, b, c elicited
		if err := s.AskAll(ctx, []jsonrpc.Question{{Key: "a", Request: form("a"), Result: &a}, {Key: "b", Request: form("b"), Result: &b}}); err != nil {
			return nil, err
		}
		if err := s.Ask(ctx, "c", form("c"), &c); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(a.Content["a"].(string) + b.Content["b"].(string) + c.Content["c"].(string))}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "cautious", TaskSupport: mcp.TaskOptional}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
		var r json.RawMessage
		return nil, s.Ask(ctx, "sample", jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{"messages": []any{}, "maxTokens": 1}}, &r)
	})
	mcp.AddTool(s, mcp.Tool{Name: "named", TaskSupport: mcp.TaskRequired, DeferTask: true}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
		var n elicited
		if err := s.Ask(ctx, "name", form("name"), &n); err != nil {
			return nil, err
		}
		if err := mcp.StartTask(ctx); err != nil {
			return nil, err
		}
		if err := mcp.StartTask(ctx); err != nil { // a task already: nothing
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("hello " + n.Content["name"].(string))}}, nil
	})
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
	t.Cleanup(ts.Close)
	return ts.URL
}

// Tasks that wait for input, over real Streamable HTTP with our client:
// a task's questions show on tasks/get (input_required, inputRequests);
// tasks/update answers some (the others stay, the task stays
// input_required), an answer of the wrong shape is -32602, unknown keys
// are ignored, every ack is {resultType: "complete"}; answered, the task
// goes on to its next question and to its result. A question the client
// has no capability for fails the task with -32021; a task cancelled
// while it waits ends cancelled; a DeferTask tool asks by multi
// round-trip (answered by the client's handler) and then answers a
// CreateTaskResult.
func TestTaskInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	url := inputServer(t)
	answers := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	})
	c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithHandler(answers),
		jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	get := func(id string) inputTask {
		t.Helper()
		var got inputTask
		if err := c.Call(ctx, "tasks/get", map[string]any{"taskId": id}, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	await := func(id string, until func(inputTask) bool) inputTask {
		t.Helper()
		for {
			got := get(id)
			if until(got) || ctx.Err() != nil {
				return got
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	update := func(id string, responses map[string]any) error {
		t.Helper()
		var ack map[string]any
		err := c.Call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": responses}, &ack)
		if err == nil && (ack["resultType"] != "complete" || len(ack) != 1) {
			t.Errorf("ack: %v", ack)
		}
		return err
	}
	accept := func(k, v string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{k: v}}
	}

	var created task
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "pick"}, &created); err != nil || created.ResultType != "task" {
		t.Fatalf("create: %+v %v", created, err)
	}
	id := created.TaskID
	got := await(id, func(g inputTask) bool { return len(g.InputRequests) == 2 })
	if got.Status != mcp.TaskInputRequired || got.InputRequests["a"].Method != "elicitation/create" || got.InputRequests["b"].Method != "elicitation/create" {
		t.Fatalf("parked: %+v", got)
	}
	if err := update(id, map[string]any{"a": accept("a", "x"), "unknown": true}); err != nil {
		t.Fatal(err)
	}
	if got = get(id); got.Status != mcp.TaskInputRequired || len(got.InputRequests) != 1 || got.InputRequests["b"].Method == "" {
		t.Fatalf("after a partial update: %+v", got)
	}
	var e *jsonrpc.Error
	if err := update(id, map[string]any{"b": "not an object"}); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("a wrong answer: %v", err)
	}
	if err := update(id, map[string]any{"b": accept("b", "y")}); err != nil {
		t.Fatal(err)
	}
	got = await(id, func(g inputTask) bool { return g.InputRequests["c"].Method != "" })
	if got.Status != mcp.TaskInputRequired || len(got.InputRequests) != 1 {
		t.Fatalf("the next question: %+v", got)
	}
	if err := update(id, map[string]any{"c": accept("c", "z")}); err != nil {
		t.Fatal(err)
	}
	got = await(id, func(g inputTask) bool { return g.Status != mcp.TaskInputRequired && g.Status != mcp.TaskWorking })
	if got.Status != mcp.TaskCompleted || !strings.Contains(string(got.Result), `"text":"xyz"`) || got.InputRequests != nil {
		t.Fatalf("completed: %+v %s", got, got.Result)
	}

	// Cancelled while it waits.
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "pick"}, &created); err != nil {
		t.Fatal(err)
	}
	await(created.TaskID, func(g inputTask) bool { return g.Status == mcp.TaskInputRequired })
	if err := c.Call(ctx, "tasks/cancel", map[string]any{"taskId": created.TaskID}, nil); err != nil {
		t.Fatal(err)
	}
	if got = get(created.TaskID); got.Status != mcp.TaskCancelled || got.InputRequests != nil {
		t.Fatalf("cancelled: %+v", got)
	}

	// No sampling capability: the task fails with -32021, nothing asked.
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "cautious"}, &created); err != nil {
		t.Fatal(err)
	}
	got = await(created.TaskID, func(g inputTask) bool { return g.Status != mcp.TaskWorking })
	if got.Status != mcp.TaskFailed || got.Error == nil || got.Error.Code != jsonrpc.CodeMissingClientCapability {
		t.Fatalf("no capability: %+v", got)
	}

	// DeferTask: a multi round-trip (our client answers), then a task.
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "named"}, &created); err != nil || created.ResultType != "task" {
		t.Fatalf("deferred: %+v %v", created, err)
	}
	got = await(created.TaskID, func(g inputTask) bool { return g.Status != mcp.TaskWorking })
	if got.Status != mcp.TaskCompleted || !strings.Contains(string(got.Result), `"text":"hello Ada"`) {
		t.Fatalf("deferred result: %+v %s", got, got.Result)
	}
}
