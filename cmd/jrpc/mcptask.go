package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/seedhq/jsonrpc"
)

// jrpc and MCP's Tasks extension: jrpc declares it, so a server may answer
// a tools/call with a task; call then waits for it (tasks/get every
// pollIntervalMs, a status line on stderr), prints its result, and
// cancels it (tasks/cancel) on Ctrl-C. `jrpc task get|cancel URL ID`
// reads or stops a task.

// tasksExtension names the extension in capabilities.extensions.
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskPollBound bounds one wait's polls (a server that never finishes).
const taskPollBound = 100000

// mcpTask is a task on the wire.
type mcpTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
	Error          *jsonrpc.Error  `json:"error"`
}

// awaitTask returns result as it is, or, when it is a CreateTaskResult,
// the result of the task once finished.
func awaitTask(ctx context.Context, c client, result json.RawMessage) (json.RawMessage, error) {
	var tk mcpTask
	if json.Unmarshal(result, &tk) != nil || tk.ResultType != "task" || tk.TaskID == "" {
		return result, nil
	}
	start := time.Now()
	every := max(time.Duration(tk.PollIntervalMs)*time.Millisecond, 50*time.Millisecond)
	last := ""
	for range taskPollBound {
		if line := fmt.Sprintf("task %s: %s", tk.TaskID, tk.Status); line != last {
			fmt.Fprintf(os.Stderr, "%s (%.1fs)\n", line, time.Since(start).Seconds())
			last = line
		}
		switch tk.Status {
		case "completed":
			return tk.Result, nil
		case "failed":
			if tk.Error != nil {
				return nil, tk.Error
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task failed"}
		case "cancelled":
			return nil, fmt.Errorf("task %s was cancelled", tk.TaskID)
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = c.Call(cctx, "tasks/cancel", map[string]any{"taskId": tk.TaskID}, nil)
			cancel()
			fmt.Fprintf(os.Stderr, "task %s: cancel sent\n", tk.TaskID)
			return nil, ctx.Err()
		case <-time.After(every):
		}
		if err := c.Call(ctx, "tasks/get", map[string]any{"taskId": tk.TaskID}, &tk); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("task %s: still %s after %d polls", tk.TaskID, tk.Status, taskPollBound)
}

func init() {
	task := &cobra.Command{Use: "task", Short: "MCP's Tasks extension: read (get) or stop (cancel) a task"}
	for _, verb := range []string{"get", "cancel"} {
		task.AddCommand(&cobra.Command{
			Use:   verb + " URL ID",
			Short: map[string]string{"get": "Print a task: its status, and its result or error once finished (tasks/get)", "cancel": "Cancel a task (tasks/cancel)"}[verb],
			Args:  targetArgs("ID", 1, 1),
			RunE: func(cmd *cobra.Command, args []string) error {
				t, rest, err := newTarget(args)
				if err != nil {
					return err
				}
				ctx, cancel := callContext(cmd.Context())
				defer cancel()
				c, err := t.dial(ctx)
				if err != nil {
					return err
				}
				defer c.Close()
				var result json.RawMessage
				if err := c.Call(ctx, "tasks/"+verb, map[string]any{"taskId": rest[0]}, &result); err != nil {
					return callErr(t, err)
				}
				outputFor(os.Stdout).print(os.Stdout, result)
				return nil
			},
		})
	}
	rootCmd.AddCommand(task)
}
