package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc"
)

// The Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): a tool
// registered with TaskSupport runs as a task for a client that declared
// the extension. tools/call answers at once with a CreateTaskResult
// (resultType "task"); the tool runs on, detached from the request (the
// client may disconnect), and its result or error is read with tasks/get;
// tasks/cancel stops it. Tasks are kept in memory, bounded by count
// (Server.MaxTasks) and age (TaskTTL after their last update).

// TasksExtension names the extension in capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task support of a tool (Tool.TaskSupport).
const (
	TaskOptional = "optional" // a task for a client that declared the extension, else a plain call
	TaskRequired = "required" // a task, or -32021 for a client without the extension
)

// Defaults of the task table.
const (
	DefaultMaxTasks     = 1000
	DefaultTaskTTL      = 10 * time.Minute
	DefaultTaskPollTime = 500 * time.Millisecond
)

// Task statuses.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// taskState is one task.
type taskState struct {
	ID      string
	Status  string
	Created time.Time
	Updated time.Time
	Result  *ToolResult
	Error   *jsonrpc.Error
	cancel  context.CancelFunc
}

// taskView is a task on the wire: CreateTaskResult (resultType "task")
// or tasks/get's DetailedTask (resultType "complete").
type taskView struct {
	ResultType     string         `json:"resultType"`
	TaskID         string         `json:"taskId"`
	Status         string         `json:"status"`
	CreatedAt      string         `json:"createdAt"`
	LastUpdatedAt  string         `json:"lastUpdatedAt"`
	TTLMs          int64          `json:"ttlMs"`
	PollIntervalMs int64          `json:"pollIntervalMs"`
	Result         any            `json:"result,omitzero"`
	Error          *jsonrpc.Error `json:"error,omitzero"`
}

// tasks is the server's task table.
type tasks struct {
	mu sync.Mutex
	m  map[string]*taskState
}

func (s *Server) taskTTL() time.Duration {
	if s.TaskTTL > 0 {
		return s.TaskTTL
	}
	return DefaultTaskTTL
}

// view returns t as the wire has it.
func (s *Server) view(t *taskState, resultType string) taskView {
	v := taskView{ResultType: resultType, TaskID: t.ID, Status: t.Status,
		CreatedAt: t.Created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.Updated.UTC().Format(time.RFC3339Nano),
		TTLMs: s.taskTTL().Milliseconds(), PollIntervalMs: DefaultTaskPollTime.Milliseconds()}
	if resultType == "complete" {
		if t.Result != nil {
			v.Result = struct {
				era
				*ToolResult
			}{era{ResultType: "complete"}, t.Result}
		}
		v.Error = t.Error
	}
	return v
}

// declaresTasks reports whether the client of the request ctx belongs to
// declared the Tasks extension in this request's _meta.
func declaresTasks(ctx context.Context) bool {
	m := jsonrpc.MCPMetaFromContext(ctx)
	if m == nil {
		return false
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(m.ClientCapabilities, &caps) != nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

func missingTasks() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMissingClientCapability, Message: "Missing required client capability: extensions." + TasksExtension,
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
}

// startTask runs t's handler as a task: stored before it is answered (a
// tasks/get right after finds it), detached from the request.
func (s *Server) startTask(ctx context.Context, t *tool, args json.RawMessage) (callResult, error) {
	var b [16]byte
	rand.Read(b[:])
	now := time.Now()
	ts := &taskState{ID: hex.EncodeToString(b[:]), Status: TaskWorking, Created: now, Updated: now}
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ts.cancel = cancel
	if err := s.storeTask(ts, now); err != nil {
		cancel()
		return callResult{}, err
	}
	go s.runTask(run, ts, t, args)
	v := s.view(ts, "task")
	return callResult{task: &v}, nil
}

// storeTask adds ts, dropping expired tasks first; a full table is -32603.
func (s *Server) storeTask(ts *taskState, now time.Time) error {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.m == nil {
		s.tasks.m = map[string]*taskState{}
	}
	for id, o := range s.tasks.m {
		if o.Status != TaskWorking && now.Sub(o.Updated) > s.taskTTL() {
			delete(s.tasks.m, id)
		}
	}
	max := s.MaxTasks
	if max <= 0 {
		max = DefaultMaxTasks
	}
	if len(s.tasks.m) >= max {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many tasks (%d kept)", max)}
	}
	s.tasks.m[ts.ID] = ts
	return nil
}

// runTask runs the tool and records how it ended.
func (s *Server) runTask(ctx context.Context, ts *taskState, t *tool, args json.RawMessage) {
	var r *ToolResult
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error: %v", p)}
			}
		}()
		r, err = t.call(ctx, args)
	}()
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	ts.Updated = time.Now()
	var rpcErr *jsonrpc.Error
	switch {
	case ts.Status == TaskCancelled:
	case ctx.Err() != nil:
		ts.Status = TaskCancelled
	case err == nil:
		ts.Status, ts.Result = TaskCompleted, r
	case errors.As(err, &rpcErr):
		ts.Status, ts.Error = TaskFailed, rpcErr
	default: // a tool error: the tool ran
		ts.Status, ts.Result = TaskCompleted, &ToolResult{Content: []Content{TextContent(err.Error())}, IsError: true}
	}
	ts.cancel()
}

type taskParams struct {
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitzero"`
	Meta           json.RawMessage `json:"_meta,omitzero"`
}

// task finds the task of p for a client that declared the extension.
func (s *Server) task(ctx context.Context, p taskParams) (*taskState, error) {
	if !declaresTasks(ctx) {
		return nil, missingTasks()
	}
	s.tasks.mu.Lock()
	ts := s.tasks.m[p.TaskID]
	s.tasks.mu.Unlock()
	if ts == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown task: " + p.TaskID}
	}
	return ts, nil
}

func (s *Server) registerTasks(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "tasks/get", func(ctx context.Context, p taskParams) (taskView, error) {
		ts, err := s.task(ctx, p)
		if err != nil {
			return taskView{}, err
		}
		s.tasks.mu.Lock()
		defer s.tasks.mu.Unlock()
		return s.view(ts, "complete"), nil
	})
	jsonrpc.Register(mux, "tasks/cancel", func(ctx context.Context, p taskParams) (era, error) {
		ts, err := s.task(ctx, p)
		if err != nil {
			return era{}, err
		}
		s.tasks.mu.Lock()
		if ts.Status == TaskWorking {
			ts.Status, ts.Updated = TaskCancelled, time.Now()
			ts.cancel()
		}
		s.tasks.mu.Unlock()
		return era{ResultType: "complete"}, nil
	})
	jsonrpc.Register(mux, "tasks/update", func(ctx context.Context, p taskParams) (era, error) {
		if _, err := s.task(ctx, p); err != nil {
			return era{}, err
		}
		return era{ResultType: "complete"}, nil // no task of this server waits for input
	})
}
