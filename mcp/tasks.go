package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc"
	imcp "github.com/seedhq/jsonrpc/internal/mcp"
)

// The Tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): a tool
// registered with TaskSupport runs as a task for a client that declared
// the extension. tools/call answers at once with a CreateTaskResult
// (resultType "task"); the tool runs on, detached from the request (the
// client may disconnect), and its result or error is read with tasks/get;
// tasks/cancel stops it. A task's handler that asks for input (Ask,
// AskAll) parks the task in input_required: tasks/get shows the questions
// (inputRequests), tasks/update brings the answers, and the handler goes
// on once all its questions are answered. A tool with DeferTask runs in
// the request until it calls StartTask: its questions before are multi
// round-trip rounds, and the call becomes a task there. Tasks are kept in
// memory, bounded by count (Server.MaxTasks) and age (TaskTTL after their
// last update).

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
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
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
	pending map[string]*question // what the handler waits on (input_required)
}

// question is a question a task's handler waits on; round counts the
// questions of its AskAll not answered yet.
type question struct {
	q     jsonrpc.Question
	round *round
}

type round struct {
	left int
	done chan struct{} // closed when left reaches 0
}

// taskView is a task on the wire: CreateTaskResult (resultType "task")
// or tasks/get's DetailedTask (resultType "complete").
type taskView struct {
	ResultType     string                          `json:"resultType"`
	TaskID         string                          `json:"taskId"`
	Status         string                          `json:"status"`
	CreatedAt      string                          `json:"createdAt"`
	LastUpdatedAt  string                          `json:"lastUpdatedAt"`
	TTLMs          int64                           `json:"ttlMs"`
	PollIntervalMs int64                           `json:"pollIntervalMs"`
	InputRequests  map[string]jsonrpc.InputRequest `json:"inputRequests,omitzero"`
	Result         any                             `json:"result,omitzero"`
	Error          *jsonrpc.Error                  `json:"error,omitzero"`
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

// view returns t as the wire has it; s.tasks.mu is held.
func (s *Server) view(t *taskState, resultType string) taskView {
	v := taskView{ResultType: resultType, TaskID: t.ID, Status: t.Status,
		CreatedAt: t.Created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.Updated.UTC().Format(time.RFC3339Nano),
		TTLMs: s.taskTTL().Milliseconds(), PollIntervalMs: DefaultTaskPollTime.Milliseconds()}
	if resultType != "complete" {
		return v
	}
	if t.Result != nil {
		v.Result = struct {
			era
			*ToolResult
		}{era{ResultType: "complete"}, t.Result}
	}
	v.Error = t.Error
	if t.Status == TaskInputRequired {
		v.InputRequests = make(map[string]jsonrpc.InputRequest, len(t.pending))
		for k, q := range t.pending {
			v.InputRequests[k] = q.q.Request
		}
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

// taskRun is a tool call that runs as a task, or may come to (DeferTask):
// found in its handler's context.
type taskRun struct {
	s       *Server
	cancel  context.CancelFunc
	ts      atomic.Pointer[taskState] // set once the call is a task
	started chan taskView             // DeferTask: StartTask's CreateTaskResult for the request
}

type taskKey struct{}

// StartTask makes the call of a DeferTask tool a task from here on: the
// request is answered with the CreateTaskResult, the handler goes on
// detached, and what it asks next parks the task (input_required). It
// does nothing when the call is a task already or cannot be one (a tool
// without DeferTask, a client without the extension): the handler goes
// on as it was. A full task table is -32603.
func StartTask(ctx context.Context) error {
	tr, _ := ctx.Value(taskKey{}).(*taskRun)
	if tr == nil || tr.started == nil || tr.ts.Load() != nil {
		return nil
	}
	ts, v, err := tr.s.newTask(tr.cancel)
	if err != nil {
		return err
	}
	tr.ts.Store(ts)
	tr.started <- v
	return nil
}

// newTask stores a new working task (before it is answered: a tasks/get
// right after finds it) and returns it with its CreateTaskResult.
func (s *Server) newTask(cancel context.CancelFunc) (*taskState, taskView, error) {
	var b [16]byte
	rand.Read(b[:])
	now := time.Now()
	ts := &taskState{ID: hex.EncodeToString(b[:]), Status: TaskWorking, Created: now, Updated: now, cancel: cancel}
	if err := s.storeTask(ts, now); err != nil {
		return nil, taskView{}, err
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	return ts, s.view(ts, "task"), nil
}

// startTask runs t's handler as a task, detached from the request.
func (s *Server) startTask(ctx context.Context, t *tool, args json.RawMessage) (callResult, error) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ts, v, err := s.newTask(cancel)
	if err != nil {
		cancel()
		return callResult{}, err
	}
	tr := &taskRun{s: s, cancel: cancel}
	tr.ts.Store(ts)
	go func() {
		r, err := safeCall(context.WithValue(run, taskKey{}, tr), t, args)
		s.finish(run, ts, r, err)
	}()
	return callResult{task: &v}, nil
}

// deferTask runs t's handler in the request until it calls StartTask (the
// request is answered with the CreateTaskResult) or returns (its result
// is the request's, an InputRequiredResult among them).
func (s *Server) deferTask(ctx context.Context, t *tool, args json.RawMessage) (callResult, error) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	tr := &taskRun{s: s, cancel: cancel, started: make(chan taskView, 1)}
	type outcome struct {
		r   *ToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := safeCall(context.WithValue(run, taskKey{}, tr), t, args)
		if ts := tr.ts.Load(); ts != nil {
			s.finish(run, ts, r, err)
			return
		}
		cancel()
		done <- outcome{r, err}
	}()
	select {
	case v := <-tr.started:
		return callResult{task: &v}, nil
	case o := <-done:
		return s.outcome(ctx, o.r, o.err)
	case <-ctx.Done():
		cancel()
		return callResult{}, ctx.Err()
	}
}

// safeCall runs t, a panic becoming -32603.
func safeCall(ctx context.Context, t *tool, args json.RawMessage) (r *ToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	return t.call(ctx, args)
}

// storeTask adds ts, dropping expired tasks first; a full table is -32603.
func (s *Server) storeTask(ts *taskState, now time.Time) error {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.m == nil {
		s.tasks.m = map[string]*taskState{}
	}
	for id, o := range s.tasks.m {
		if terminal(o.Status) && now.Sub(o.Updated) > s.taskTTL() {
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

func terminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// finish records how the task's run ended.
func (s *Server) finish(ctx context.Context, ts *taskState, r *ToolResult, err error) {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	ts.Updated = time.Now()
	ts.pending = nil
	var rpcErr *jsonrpc.Error
	switch {
	case ts.Status == TaskCancelled:
	case ctx.Err() != nil:
		ts.Status = TaskCancelled
	case err == nil:
		if r.Content == nil {
			r.Content = []Content{}
		}
		ts.Status, ts.Result = TaskCompleted, r
	case errors.As(err, &rpcErr):
		ts.Status, ts.Error = TaskFailed, rpcErr
	default: // a tool error: the tool ran
		ts.Status, ts.Result = TaskCompleted, &ToolResult{Content: []Content{TextContent(err.Error())}, IsError: true}
	}
	ts.cancel()
}

// askInTask parks the task in input_required with qs until tasks/update
// answers them all (or the task is cancelled).
func (s *Server) askInTask(ctx context.Context, ts *taskState, qs []jsonrpc.Question) error {
	has := func(name string) bool { h, known := jsonrpc.MCPClientCapability(ctx, name); return h || !known }
	for _, q := range qs {
		if e := imcp.MissingCapability(q.Request.Method, has); e != nil {
			return (*jsonrpc.Error)(e)
		}
	}
	if len(qs) == 0 {
		return nil
	}
	rd := &round{left: len(qs), done: make(chan struct{})}
	if err := s.park(ts, qs, rd); err != nil {
		return err
	}
	select {
	case <-rd.done:
		return nil
	case <-ctx.Done():
		s.tasks.mu.Lock()
		for _, q := range qs {
			if p := ts.pending[q.Key]; p != nil && p.round == rd {
				delete(ts.pending, q.Key)
			}
		}
		s.tasks.mu.Unlock()
		return ctx.Err()
	}
}

// park adds qs to the questions ts waits on.
func (s *Server) park(ts *taskState, qs []jsonrpc.Question, rd *round) error {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if terminal(ts.Status) {
		return context.Canceled
	}
	for _, q := range qs {
		if ts.pending[q.Key] != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: task " + ts.ID + " asks " + q.Key + " twice"}
		}
	}
	if ts.pending == nil {
		ts.pending = map[string]*question{}
	}
	for _, q := range qs {
		ts.pending[q.Key] = &question{q: q, round: rd}
	}
	ts.Status, ts.Updated = TaskInputRequired, time.Now()
	return nil
}

// answer delivers tasks/update's inputResponses to the questions ts
// waits on; keys it does not wait on are ignored, an answer that does not
// decode into its question's result is -32602 (and stays unanswered).
func (s *Server) answer(ts *taskState, responses map[string]json.RawMessage) error {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	defer func() {
		if len(ts.pending) == 0 && ts.Status == TaskInputRequired {
			ts.Status, ts.Updated = TaskWorking, time.Now()
		}
	}()
	for key, raw := range responses {
		p := ts.pending[key]
		if p == nil {
			continue
		}
		if p.q.Result != nil {
			if err := json.Unmarshal(raw, p.q.Result); err != nil { // members the result does not name are ignored
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: inputResponses." + key + ": " + err.Error()}
			}
		}
		delete(ts.pending, key)
		ts.Updated = time.Now()
		if p.round.left--; p.round.left == 0 {
			close(p.round.done)
		}
	}
	return nil
}

type taskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitzero"`
	Meta           json.RawMessage            `json:"_meta,omitzero"`
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
		if !terminal(ts.Status) {
			ts.Status, ts.Updated = TaskCancelled, time.Now()
			ts.cancel()
		}
		s.tasks.mu.Unlock()
		return era{ResultType: "complete"}, nil
	})
	jsonrpc.Register(mux, "tasks/update", func(ctx context.Context, p *taskParams) (era, error) {
		if !declaresTasks(ctx) {
			return era{}, missingTasks()
		}
		if p == nil || p.InputResponses == nil {
			return era{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: tasks/update needs taskId and inputResponses"}
		}
		ts, err := s.task(ctx, *p)
		if err != nil {
			return era{}, err
		}
		return era{ResultType: "complete"}, s.answer(ts, p.InputResponses)
	})
}
