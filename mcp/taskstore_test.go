package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"

	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/mcp/mcptest"
)

func TestMemoryTaskStore(t *testing.T) {
	mcptest.TestTaskStore(t, func(_ *testing.T, max int) mcp.TaskStore { return mcp.NewMemoryTaskStore(max, nil) })
}

// Two servers (two instances) sharing one TaskStore, over real Streamable
// HTTP: a task started on one is read and cancelled from the other; a
// task is its owner's (another Authorization is told it is unknown); the
// store's bound is -32603; tasks/update reaches a task only where it runs;
// a finished task is gone TaskTTL after it ended.
func TestSharedTaskStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := mcp.NewMemoryTaskStore(3, nil)
	release := make(chan struct{})
	serve := func() string {
		s := mcp.NewServer(mcp.Implementation{Name: "shared", Version: "1"})
		s.Tasks, s.TaskTTL = store, 200*time.Millisecond
		mcp.AddTool(s, mcp.Tool{Name: "job", TaskSupport: mcp.TaskRequired}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
			select {
			case <-release:
				return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("done")}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		mcp.AddTool(s, mcp.Tool{Name: "ask", TaskSupport: mcp.TaskRequired}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
			var a elicited
			return &mcp.ToolResult{Content: []mcp.Content{}}, s.Ask(ctx, "q", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{}}, &a)
		})
		srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
		ts := httptest.NewServer(srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	a, b := serve(), serve()
	dial := func(url, auth string) *jsonrpc.Conn {
		c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithHeader("Authorization", auth),
			jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	onA, onB, eve := dial(a, "Bearer alice"), dial(b, "Bearer alice"), dial(b, "Bearer eve")
	var first, second task
	if err := onA.Call(ctx, "tools/call", map[string]any{"name": "job"}, &first); err != nil || first.ResultType != "task" {
		t.Fatalf("create: %+v %v", first, err)
	}
	var got task
	if err := onB.Call(ctx, "tasks/get", map[string]any{"taskId": first.TaskID}, &got); err != nil || got.Status != mcp.TaskWorking {
		t.Fatalf("tasks/get on the other instance: %+v %v", got, err)
	}
	var e *jsonrpc.Error
	if err := eve.Call(ctx, "tasks/get", map[string]any{"taskId": first.TaskID}, &got); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("tasks/get by another principal: %v, want -32602", err)
	}
	var asking task
	if err := onA.Call(ctx, "tools/call", map[string]any{"name": "ask"}, &asking); err != nil {
		t.Fatal(err)
	}
	for got.TaskID != asking.TaskID || got.Status != mcp.TaskInputRequired {
		if err := onB.Call(ctx, "tasks/get", map[string]any{"taskId": asking.TaskID}, &got); err != nil {
			t.Fatal(err)
		}
	}
	update := map[string]any{"taskId": asking.TaskID, "inputResponses": map[string]any{"q": map[string]any{"action": "decline"}}}
	if err := onB.Call(ctx, "tasks/update", update, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError {
		t.Fatalf("tasks/update on the instance not running the task: %v, want -32603", err)
	}
	if err := onA.Call(ctx, "tasks/update", update, nil); err != nil {
		t.Fatal(err)
	}
	for got.Status != mcp.TaskCompleted {
		if err := onB.Call(ctx, "tasks/get", map[string]any{"taskId": asking.TaskID}, &got); err != nil {
			t.Fatal(err)
		}
	}
	if err := onB.Call(ctx, "tools/call", map[string]any{"name": "job"}, &second); err != nil {
		t.Fatal(err)
	}
	if err := onA.Call(ctx, "tools/call", map[string]any{"name": "job"}, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError {
		t.Fatalf("a fourth task in a store of 3: %v, want -32603", err)
	}
	if err := onB.Call(ctx, "tasks/cancel", map[string]any{"taskId": first.TaskID}, nil); err != nil {
		t.Fatal(err)
	}
	close(release) // first's handler (on a) ends now: its task stays cancelled
	for _, id := range []string{first.TaskID, second.TaskID} {
		for got.TaskID != id || got.Status == mcp.TaskWorking {
			if err := onA.Call(ctx, "tasks/get", map[string]any{"taskId": id}, &got); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := onA.Call(ctx, "tasks/get", map[string]any{"taskId": first.TaskID}, &got); err != nil || got.Status != mcp.TaskCancelled {
		t.Fatalf("cancelled on b, ended on a: %+v %v", got, err)
	}
	if err := onA.Call(ctx, "tasks/get", map[string]any{"taskId": second.TaskID}, &got); err != nil || got.Status != mcp.TaskCompleted {
		t.Fatalf("second: %+v %v", got, err)
	}
	time.Sleep(250 * time.Millisecond) // TaskTTL
	if err := onA.Call(ctx, "tasks/get", map[string]any{"taskId": second.TaskID}, &got); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("tasks/get past TaskTTL: %v, want -32602", err)
	}
	if err := onA.Call(ctx, "tools/call", map[string]any{"name": "job"}, &first); err != nil {
		t.Fatalf("a task once the others expired: %v", err)
	}
	alice := sha256.Sum256([]byte("Bearer alice"))
	if tasks, err := store.List(ctx, hex.EncodeToString(alice[:])); err != nil || len(tasks) != 1 || tasks[0].ID != first.TaskID {
		t.Fatalf("List of alice's tasks (by the digest of her Authorization): %+v %v", tasks, err)
	}
}
