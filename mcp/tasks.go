package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

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
// Server.Tasks (a TaskStore; by default in memory, bounded by
// Server.MaxTasks), a finished one TaskTTL after it ended; the run of a
// task stays in the process that started it, so tasks/update and a
// cancellation's stopping of the handler work there (tasks/get and the
// cancelled status from any instance sharing the store).

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

func terminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// errTaskEnded refuses a change to a task that ended (cancelled).
var errTaskEnded = errors.New("mcp: the task ended")

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
	Result         json.RawMessage                 `json:"result,omitzero"`
	Error          *jsonrpc.Error                  `json:"error,omitzero"`
}

// view returns t as the wire has it.
func (s *Server) view(t Task, resultType string) taskView {
	v := taskView{ResultType: resultType, TaskID: t.ID, Status: t.Status,
		CreatedAt: t.Created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.Updated.UTC().Format(time.RFC3339Nano),
		TTLMs: s.taskTTL().Milliseconds(), PollIntervalMs: max(cmp.Or(s.TaskPollInterval, DefaultTaskPollTime).Milliseconds(), 1)}
	if resultType == "complete" {
		v.Result, v.Error = t.Result, t.Error
		if t.Status == TaskInputRequired {
			v.InputRequests = t.InputRequests
		}
	}
	return v
}

func (s *Server) taskTTL() time.Duration {
	if s.TaskTTL > 0 {
		return s.TaskTTL
	}
	return DefaultTaskTTL
}

// taskStore is s.Tasks, a memory store bounded by MaxTasks when nil.
func (s *Server) taskStore() TaskStore {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Tasks == nil {
		s.Tasks = NewMemoryTaskStore(s.MaxTasks, nil)
	}
	return s.Tasks
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

// owner names the principal of the request ctx belongs to (Task.Owner).
func (s *Server) owner(ctx context.Context) string {
	if s.Rounds != nil && s.Rounds.Subject != nil {
		return s.Rounds.Subject(ctx)
	}
	if p, ok := jsonrpc.PeerFromContext(ctx); ok && p.Header != nil && p.Header.Get("Authorization") != "" {
		sum := sha256.Sum256([]byte(p.Header.Get("Authorization")))
		return hex.EncodeToString(sum[:])
	}
	return ""
}

// storeError is the JSON-RPC error of a TaskStore's error.
func storeError(id string, err error) error {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return err
	case errors.Is(err, ErrTaskNotFound):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown task: " + id}
	case errors.Is(err, ErrTooManyTasks):
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many tasks"}
	}
	return fmt.Errorf("mcp: task store: %w", err)
}

// running are the tasks this process runs, by id.
type running struct {
	mu sync.Mutex
	m  map[string]*taskRun
}

// taskRun is a tool call that runs as a task, or may come to (DeferTask):
// found in its handler's context.
type taskRun struct {
	s       *Server
	cancel  context.CancelFunc
	started chan taskView // DeferTask: StartTask's CreateTaskResult for the request
	id      string        // set before active
	active  atomic.Bool   // the call is a task

	mu      sync.Mutex // serializes the questions' changes and their writes to the store
	pending map[string]*question
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

type taskKey struct{}

// StartTask makes the call of a DeferTask tool a task from here on: the
// request is answered with the CreateTaskResult, the handler goes on
// detached, and what it asks next parks the task (input_required). It
// does nothing when the call is a task already or cannot be one (a tool
// without DeferTask, a client without the extension): the handler goes
// on as it was. A full task store is -32603.
func StartTask(ctx context.Context) error {
	tr, _ := ctx.Value(taskKey{}).(*taskRun)
	if tr == nil || tr.started == nil || tr.active.Load() {
		return nil
	}
	if err := ctx.Err(); err != nil { // the request went away: no task for nobody
		return err
	}
	v, err := tr.s.newTask(ctx, tr)
	if err != nil {
		return err
	}
	tr.started <- v
	return nil
}

// newTask stores a new working task for tr (before it is answered: a
// tasks/get right after finds it) and returns its CreateTaskResult.
func (s *Server) newTask(ctx context.Context, tr *taskRun) (taskView, error) {
	var b [16]byte
	rand.Read(b[:])
	now := time.Now()
	t := Task{ID: hex.EncodeToString(b[:]), Owner: s.owner(ctx), Status: TaskWorking, Created: now, Updated: now}
	s.running.mu.Lock()
	if s.running.m == nil {
		s.running.m = map[string]*taskRun{}
	}
	s.running.m[t.ID] = tr // before the store has it: a cancel finds the run
	s.running.mu.Unlock()
	if err := s.taskStore().Create(context.WithoutCancel(ctx), t); err != nil {
		s.running.mu.Lock()
		delete(s.running.m, t.ID)
		s.running.mu.Unlock()
		return taskView{}, storeError(t.ID, err)
	}
	tr.id = t.ID
	tr.active.Store(true)
	return s.view(t, "task"), nil
}

// startTask runs t's handler as a task, detached from the request.
func (s *Server) startTask(ctx context.Context, t *tool, args json.RawMessage) (callResult, error) {
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	tr := &taskRun{s: s, cancel: cancel}
	v, err := s.newTask(ctx, tr)
	if err != nil {
		cancel()
		return callResult{}, err
	}
	go func() {
		r, err := safeCall(context.WithValue(run, taskKey{}, tr), t, args)
		s.finish(run, tr, r, err)
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
		if tr.active.Load() {
			s.finish(run, tr, r, err)
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

// ended sets t's status to a terminal one, and its expiry.
func (s *Server) ended(t *Task, status string) {
	t.Status, t.InputRequests = status, nil
	t.Updated = time.Now()
	t.Expires = t.Updated.Add(s.taskTTL())
}

// finish records how the task's run ended (a cancelled task stays so).
func (s *Server) finish(ctx context.Context, tr *taskRun, r *ToolResult, err error) {
	defer func() {
		s.running.mu.Lock()
		delete(s.running.m, tr.id)
		s.running.mu.Unlock()
		tr.cancel()
	}()
	var rpcErr *jsonrpc.Error
	var result json.RawMessage
	switch {
	case ctx.Err() != nil:
	case err == nil:
		if r.Content == nil {
			r.Content = []Content{}
		}
		result, err = jsonv2.Marshal(struct {
			era
			*ToolResult
		}{era{ResultType: "complete"}, r})
		if err != nil {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: " + err.Error()}
		}
	case errors.As(err, &rpcErr):
	default: // a tool error: the tool ran
		result, _ = jsonv2.Marshal(callResult{era: era{ResultType: "complete"}, ToolResult: &ToolResult{Content: []Content{TextContent(err.Error())}, IsError: true}})
	}
	_, _ = s.taskStore().Update(context.WithoutCancel(ctx), tr.id, func(t *Task) error {
		switch {
		case terminal(t.Status):
			return errTaskEnded
		case ctx.Err() != nil:
			s.ended(t, TaskCancelled)
		case rpcErr != nil:
			s.ended(t, TaskFailed)
			t.Error = rpcErr
		default:
			s.ended(t, TaskCompleted)
			t.Result = result
		}
		return nil
	})
}

// askInTask parks the task in input_required with qs until tasks/update
// answers them all (or the task is cancelled).
func (s *Server) askInTask(ctx context.Context, tr *taskRun, qs []jsonrpc.Question) error {
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
	if err := tr.park(ctx, qs, rd); err != nil {
		return err
	}
	select {
	case <-rd.done:
		return nil
	case <-ctx.Done():
		tr.mu.Lock()
		for _, q := range qs {
			if p := tr.pending[q.Key]; p != nil && p.round == rd {
				delete(tr.pending, q.Key)
			}
		}
		tr.mu.Unlock()
		return ctx.Err()
	}
}

// park adds qs to the questions tr waits on, and tells the store.
func (tr *taskRun) park(ctx context.Context, qs []jsonrpc.Question, rd *round) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, q := range qs {
		if tr.pending[q.Key] != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: task " + tr.id + " asks " + q.Key + " twice"}
		}
	}
	if tr.pending == nil {
		tr.pending = map[string]*question{}
	}
	for _, q := range qs {
		tr.pending[q.Key] = &question{q: q, round: rd}
	}
	if err := tr.save(ctx); err != nil {
		for _, q := range qs {
			delete(tr.pending, q.Key)
		}
		return err
	}
	return nil
}

// save writes tr's questions to the store (tr.mu held): input_required
// while it has any, else working; a task that ended refuses.
func (tr *taskRun) save(ctx context.Context) error {
	_, err := tr.s.taskStore().Update(context.WithoutCancel(ctx), tr.id, func(t *Task) error {
		if terminal(t.Status) {
			return errTaskEnded
		}
		t.Status, t.InputRequests, t.Updated = TaskWorking, nil, time.Now()
		if len(tr.pending) > 0 {
			t.Status, t.InputRequests = TaskInputRequired, make(map[string]jsonrpc.InputRequest, len(tr.pending))
			for k, p := range tr.pending {
				t.InputRequests[k] = p.q.Request
			}
		}
		return nil
	})
	if errors.Is(err, errTaskEnded) {
		return context.Canceled
	}
	return err
}

// answer delivers tasks/update's inputResponses to the questions tr waits
// on; keys it does not wait on are ignored, an answer that does not
// decode into its question's result is -32602 (and stays unanswered).
func (tr *taskRun) answer(ctx context.Context, responses map[string]json.RawMessage) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var answered []*question
	var bad error
	for key, raw := range responses {
		p := tr.pending[key]
		if p == nil {
			continue
		}
		if p.q.Result != nil {
			if err := json.Unmarshal(raw, p.q.Result); err != nil { // members the result does not name are ignored
				bad = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: inputResponses." + key + ": " + err.Error()}
				continue
			}
		}
		delete(tr.pending, key)
		answered = append(answered, p)
	}
	if len(answered) == 0 {
		return bad
	}
	if err := tr.save(ctx); err != nil && !errors.Is(err, context.Canceled) { // a store error: still asked
		for _, p := range answered {
			tr.pending[p.q.Key] = p
		}
		return err
	}
	for _, p := range answered {
		if p.round.left--; p.round.left == 0 {
			close(p.round.done)
		}
	}
	return bad
}

type taskParams struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitzero"`
	Meta           json.RawMessage            `json:"_meta,omitzero"`
}

// task finds the task of p for a client that declared the extension and
// owns it.
func (s *Server) task(ctx context.Context, p taskParams) (Task, error) {
	if !declaresTasks(ctx) {
		return Task{}, missingTasks()
	}
	t, err := s.taskStore().Get(ctx, p.TaskID)
	if err == nil && t.Owner != s.owner(ctx) {
		err = ErrTaskNotFound
	}
	if err != nil {
		return Task{}, storeError(p.TaskID, err)
	}
	return t, nil
}

func (s *Server) registerTasks(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "tasks/get", func(ctx context.Context, p taskParams) (taskView, error) {
		t, err := s.task(ctx, p)
		if err != nil {
			return taskView{}, err
		}
		return s.view(t, "complete"), nil
	})
	jsonrpc.Register(mux, "tasks/cancel", func(ctx context.Context, p taskParams) (era, error) {
		if _, err := s.task(ctx, p); err != nil {
			return era{}, err
		}
		_, err := s.taskStore().Update(ctx, p.TaskID, func(t *Task) error {
			if terminal(t.Status) {
				return errTaskEnded
			}
			s.ended(t, TaskCancelled)
			return nil
		})
		if err != nil && !errors.Is(err, errTaskEnded) {
			return era{}, storeError(p.TaskID, err)
		}
		s.running.mu.Lock()
		tr := s.running.m[p.TaskID]
		s.running.mu.Unlock()
		if tr != nil {
			tr.cancel()
		}
		return era{ResultType: "complete"}, nil
	})
	jsonrpc.Register(mux, "tasks/update", func(ctx context.Context, p *taskParams) (era, error) {
		if !declaresTasks(ctx) {
			return era{}, missingTasks()
		}
		if p == nil || p.InputResponses == nil {
			return era{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: tasks/update needs taskId and inputResponses"}
		}
		t, err := s.task(ctx, *p)
		if err != nil {
			return era{}, err
		}
		s.running.mu.Lock()
		tr := s.running.m[p.TaskID]
		s.running.mu.Unlock()
		switch {
		case tr != nil:
			err = tr.answer(ctx, p.InputResponses)
		case t.Status == TaskInputRequired:
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task " + p.TaskID + " waits for input in another process"}
		}
		return era{ResultType: "complete"}, err
	})
}
