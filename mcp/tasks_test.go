package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

type task struct {
	ResultType string          `json:"resultType"`
	TaskID     string          `json:"taskId"`
	Status     string          `json:"status"`
	TTLMs      int64           `json:"ttlMs"`
	Result     json.RawMessage `json:"result"`
	Error      *jsonrpc.Error  `json:"error"`
}

// The Tasks extension over real Streamable HTTP (2026-07-28): a
// task-supporting tool answers a CreateTaskResult to a client that
// declared the extension and runs on; tasks/get reads it to its result;
// tasks/cancel stops one; a client without the extension gets a plain
// call, or -32021 for a required-task tool and for tasks/*; an unknown
// task is -32602; Mcp-Name, when sent on tasks/get, must be the taskId.
func TestTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := mcp.NewServer(mcp.Implementation{Name: "tasks", Version: "1"})
	release := make(chan struct{})
	mcp.AddTool(s, mcp.Tool{Name: "job", TaskSupport: mcp.TaskOptional}, func(ctx context.Context, _ struct{}) (*mcp.ToolResult, error) {
		select {
		case <-release:
			return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("done")}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	mcp.AddTool(s, mcp.Tool{Name: "must", TaskSupport: mcp.TaskRequired}, func(context.Context, struct{}) (*mcp.ToolResult, error) {
		return &mcp.ToolResult{Content: []mcp.Content{}}, nil
	})
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
	defer ts.Close()
	ext := jsonrpc.WithMCPCapabilities(map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}})
	c, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), ext)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var created task
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "job"}, &created); err != nil || created.ResultType != "task" || created.Status != mcp.TaskWorking || created.TTLMs <= 0 {
		t.Fatalf("create: %+v %v", created, err)
	}
	var got task
	if err := c.Call(ctx, "tasks/get", map[string]any{"taskId": created.TaskID}, &got); err != nil || got.Status != mcp.TaskWorking || got.ResultType != "complete" {
		t.Fatalf("get (working): %+v %v", got, err)
	}
	close(release)
	for got.Status == mcp.TaskWorking && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		if err := c.Call(ctx, "tasks/get", map[string]any{"taskId": created.TaskID}, &got); err != nil {
			t.Fatal(err)
		}
	}
	if got.Status != mcp.TaskCompleted || !strings.Contains(string(got.Result), `"text":"done"`) {
		t.Fatalf("get (completed): %+v %s", got, got.Result)
	}

	wantCode := func(what string, err error, code int64) {
		t.Helper()
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != code {
			t.Errorf("%s: %v, want %d", what, err, code)
		}
	}
	wantCode("unknown task", c.Call(ctx, "tasks/get", map[string]any{"taskId": "nope"}, nil), jsonrpc.CodeInvalidParams)

	plain, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var sync task
	if err := plain.Call(ctx, "tools/call", map[string]any{"name": "job"}, &sync); err != nil || sync.ResultType != "complete" || sync.TaskID != "" {
		t.Fatalf("job without the extension: a plain call (the release is closed: at once): %+v %v", sync, err)
	}
	wantCode("required without the extension", plain.Call(ctx, "tools/call", map[string]any{"name": "must"}, nil), jsonrpc.CodeMissingClientCapability)
	wantCode("tasks/get without the extension", plain.Call(ctx, "tasks/get", map[string]any{"taskId": created.TaskID}, nil), jsonrpc.CodeMissingClientCapability)

	// Mcp-Name on tasks/get must be the taskId.
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + created.TaskID + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.TasksExtension + `":{}}}}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tasks/get")
	req.Header.Set("Mcp-Name", "another")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":-32020`) {
		t.Errorf("mismatched Mcp-Name: %d %s", resp.StatusCode, b)
	}
}
