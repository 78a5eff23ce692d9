package interop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// Our client waiting on tasks (WithMCPTasks) against jrpc serve
// --mcp-fixture, over Streamable HTTP and over the command's stdin and
// stdout: a task answered at once, a task that waits for input (its
// questions answered by our handler through tasks/update), two questions
// at once, a multi round-trip that becomes a task, a tool error inside a
// task, and a protocol error (the call's *jsonrpc.Error).
func TestMCPFixtureTasksOurClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 90*time.Second)
	defer cancel()
	bin := jrpcBinary(t)
	url := startJRPCServe(t, ctx, "--mcp-fixture", "--listen", "http://127.0.0.1:0/mcp")
	answers := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if strings.Contains(p.Message, "Confirm") {
			return map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, nil
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	})
	opts := []jsonrpc.DialOption{jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithHandler(answers),
		jsonrpc.WithMCPCapabilities(map[string]any{"elicitation": map[string]any{}}), jsonrpc.WithMCPTasks(nil)}
	dial := map[string]func() (*jsonrpc.Conn, error){
		"streamable-http": func() (*jsonrpc.Conn, error) { return jsonrpc.DialStreamableHTTP(ctx, url, opts...) },
		"stdio": func() (*jsonrpc.Conn, error) {
			return jsonrpc.DialCommand(ctx, bin, []string{"serve", "--mcp-fixture", "--listen", "stdio:"}, opts...)
		},
	}
	for name, dial := range dial {
		t.Run(name, func(t *testing.T) {
			c, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			text := func(tool string, args map[string]any) string {
				t.Helper()
				var res struct {
					ResultType string `json:"resultType"`
					IsError    bool   `json:"isError"`
					Content    []struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				if err := c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": args}, &res); err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				if res.ResultType != "complete" || len(res.Content) == 0 {
					t.Fatalf("%s: %+v", tool, res)
				}
				if res.IsError {
					return "error: " + res.Content[0].Text
				}
				return res.Content[0].Text
			}
			for tool, want := range map[string]struct {
				args map[string]any
				text string
			}{
				"slow_compute":        {map[string]any{"seconds": 0.2}, "computed after 0.2s"},
				"confirm_delete":      {map[string]any{"filename": "a.txt"}, "Deleted a.txt"},
				"multi_input":         {nil, "Got Ada and Ada"},
				"test_tool_with_task": {nil, "Hello, Ada! (from a task)"},
				"failing_job":         {nil, "error: the job failed"},
			} {
				if got := text(tool, want.args); got != want.text {
					t.Errorf("%s: %q, want %q", tool, got, want.text)
				}
			}
			var e *jsonrpc.Error
			if err := c.Call(ctx, "tools/call", map[string]any{"name": "protocol_error_job"}, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeInternalError {
				t.Errorf("protocol_error_job: %v, want the task's -32603", err)
			}
		})
	}
}
