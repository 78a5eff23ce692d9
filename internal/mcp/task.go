package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// The client's side of the Tasks extension (io.modelcontextprotocol/tasks):
// a call answered with a task (CreateTaskResult) waits for it.

// TasksExtension names the extension in capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// DefaultPollInterval is the wait between two tasks/get of a task whose
// server suggests none; MinPollInterval the shortest wait whatever it
// suggests.
const (
	DefaultPollInterval = time.Second
	MinPollInterval     = 10 * time.Millisecond
)

// declareExtension adds name to the capabilities' extensions (kept when
// declared already).
func (cs *ClientState) declareExtension(name string) error {
	var caps map[string]json.RawMessage
	if err := jsonv2.Unmarshal(cs.Caps, &caps); err != nil {
		return err
	}
	var ext map[string]json.RawMessage
	if raw, ok := caps["extensions"]; ok {
		if err := jsonv2.Unmarshal(raw, &ext); err != nil {
			return fmt.Errorf("jsonrpc: WithMCPCapabilities: extensions: %w", err)
		}
	}
	if _, ok := ext[name]; ok {
		return nil
	}
	if ext == nil {
		ext = map[string]json.RawMessage{}
	}
	ext[name] = json.RawMessage("{}")
	caps["extensions"], _ = jsonv2.Marshal(ext, jsonv2.Deterministic(true))
	b, err := jsonv2.Marshal(caps, jsonv2.Deterministic(true))
	cs.Caps = b
	return err
}

// task is a task as tasks/get (or tools/call's CreateTaskResult) has it.
type task struct {
	ResultType     string                `json:"resultType"`
	TaskID         string                `json:"taskId"`
	Status         string                `json:"status"`
	PollIntervalMs int64                 `json:"pollIntervalMs"`
	InputRequests  map[string]InputQuery `json:"inputRequests"`
	Result         json.RawMessage       `json:"result"`
	Error          *Error                `json:"error"`
}

// TaskWaiter waits for the task a call was answered with.
type TaskWaiter struct {
	// Call makes a call of the task's revision (tasks/get, tasks/update,
	// tasks/cancel) and returns its result.
	Call func(ctx context.Context, method string, params any, result *json.RawMessage) error
	// Answer answers a request for input of an input_required task.
	Answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Status, when not nil, sees each status of the task read.
	Status func(taskID, status string)
}

var taskType = []byte(`"task"`)

// TaskError is the error of a failed task; the root package sets it to
// return its own *Error in init.
var TaskError = func(e *Error) error { return e }

// Wait returns result as it is unless it is a CreateTaskResult; then it
// reads the task with tasks/get, every pollIntervalMs, until it ends, and
// returns its result: a completed task's result, a failed task's error
// (*Error), an error wrapping context.Canceled for a cancelled task. The
// questions of an input_required task are answered with Answer and sent
// with tasks/update (a question Answer fails cancels the task and fails
// the call). When ctx ends first the task is cancelled (tasks/cancel,
// bounded by 5s) and ctx's error returned.
func (w *TaskWaiter) Wait(ctx context.Context, result json.RawMessage) (json.RawMessage, error) {
	var t task
	if !bytes.Contains(result, taskType) || jsonv2.Unmarshal(result, &t) != nil || t.ResultType != "task" || t.TaskID == "" {
		return result, nil
	}
	id, last := t.TaskID, ""
	for {
		if t.Status != last && w.Status != nil {
			w.Status(id, t.Status)
		}
		last = t.Status
		if ended, raw, err := t.outcome(); ended {
			return raw, err
		}
		if t.Status == "input_required" {
			if err := w.answer(ctx, id, t.InputRequests); err != nil {
				return nil, w.cancel(ctx, id, err)
			}
		}
		if err := pause(ctx, t.PollIntervalMs); err != nil {
			return nil, w.cancel(ctx, id, err)
		}
		var raw json.RawMessage
		err := w.Call(ctx, "tasks/get", map[string]string{"taskId": id}, &raw)
		if err == nil {
			t = task{}
			err = jsonv2.Unmarshal(raw, &t)
		}
		if err != nil {
			return nil, w.cancel(ctx, id, err)
		}
	}
}

// outcome is the result or error of a task that ended (ended false for
// one that did not).
func (t *task) outcome() (ended bool, result json.RawMessage, err error) {
	switch t.Status {
	case "completed":
		return true, t.Result, nil
	case "failed":
		if t.Error == nil {
			return true, nil, fmt.Errorf("jsonrpc: MCP task %s failed without an error", t.TaskID)
		}
		return true, nil, TaskError(t.Error)
	case "cancelled":
		return true, nil, fmt.Errorf("jsonrpc: MCP task %s was cancelled: %w", t.TaskID, context.Canceled)
	}
	return false, nil, nil
}

// answer answers the task's questions and sends the answers.
func (w *TaskWaiter) answer(ctx context.Context, id string, queries map[string]InputQuery) error {
	if len(queries) == 0 {
		return nil
	}
	answers := make(map[string]json.RawMessage, len(queries))
	for key, q := range queries {
		a, err := w.Answer(ctx, q.Method, q.Params)
		if err != nil {
			return fmt.Errorf("jsonrpc: answering the server's %s (input %q of task %s): %w", q.Method, key, id, err)
		}
		answers[key] = a
	}
	return w.Call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, new(json.RawMessage))
}

// cancel cancels the task (for a ctx that ended, on a context of its own)
// and returns err.
func (w *TaskWaiter) cancel(ctx context.Context, id string, err error) error {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_ = w.Call(cctx, "tasks/cancel", map[string]string{"taskId": id}, new(json.RawMessage))
	return err
}

// pause waits the poll interval the server suggested (ms; 0: the default).
func pause(ctx context.Context, ms int64) error {
	d := max(time.Duration(ms)*time.Millisecond, MinPollInterval)
	if ms <= 0 {
		d = DefaultPollInterval
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
