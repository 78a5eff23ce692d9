package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A TaskStore keeps the tasks of the Tasks extension between requests:
// what tasks/get answers from any instance that shares it. A server writes
// a task when it is created, each time its status, questions or outcome
// change, and when it is cancelled; the run itself (the handler, its
// cancellation, the answers it waits for) stays in the process running it.
//
// Contract (mcptest.TestTaskStore checks it):
//   - Create stores a new task. An id held by a live task is
//     ErrTaskExists (of concurrent Creates of one id exactly one
//     succeeds); a store bounded by count answers ErrTooManyTasks when it
//     holds that many live tasks.
//   - Get returns the task; an id never created, or whose task expired,
//     is ErrTaskNotFound.
//   - Update applies fn to the task and stores what fn leaves, atomically
//     with respect to every other Update of the id (a shared store may
//     run fn more than once, on a fresh copy, until its write wins); an
//     error of fn stores nothing and is returned as it is; ErrTaskNotFound
//     as Get. The ID cannot be changed.
//   - List returns the live tasks whose Owner is owner, oldest (Created)
//     first.
//   - Expiry: a task whose Expires is set and has passed is gone for
//     every method, and does not count against the bound; its id may be
//     created again. The zero Expires keeps a task until an Update sets
//     one (the server sets Expires when a task ends: TaskTTL after it).
//   - Tasks are values: a store keeps copies, so a caller may modify what
//     it passed or got.
//
// Every method takes a context and is safe for concurrent use; a shared
// implementation that cannot reach its service returns an error (wrapping
// the cause) no later than the context's deadline, never blocking forever.
type TaskStore interface {
	Create(ctx context.Context, t Task) error
	Get(ctx context.Context, id string) (Task, error)
	Update(ctx context.Context, id string, fn func(*Task) error) (Task, error)
	List(ctx context.Context, owner string) ([]Task, error)
}

// Task is a task as a TaskStore keeps it.
type Task struct {
	ID string
	// Owner names who may read and steer the task: the principal of the
	// request that created it (InputRounds.Subject, else a digest of its
	// Authorization header; "" for none). Others are told it is unknown.
	Owner   string
	Status  string // TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled
	Created time.Time
	Updated time.Time
	Expires time.Time // the zero time: no expiry
	// InputRequests are the questions an input_required task waits on.
	InputRequests map[string]jsonrpc.InputRequest
	// Result is a completed task's result (the tools/call result, JSON);
	// Error a failed task's error.
	Result json.RawMessage
	Error  *jsonrpc.Error
}

// Errors of a TaskStore, compared with errors.Is.
var (
	ErrTaskNotFound = errors.New("mcp: no such task")
	ErrTaskExists   = errors.New("mcp: a task with this id exists")
	ErrTooManyTasks = errors.New("mcp: too many tasks")
)

// clone copies t's maps and slices.
func (t Task) clone() Task {
	t.InputRequests = maps.Clone(t.InputRequests)
	t.Result = slices.Clone(t.Result)
	if t.Error != nil {
		e := *t.Error
		e.Data = slices.Clone(e.Data)
		t.Error = &e
	}
	return t
}

func (t *Task) expired(now time.Time) bool { return !t.Expires.IsZero() && !now.Before(t.Expires) }

// MemoryTaskStore is the TaskStore of one process.
type MemoryTaskStore struct {
	max int
	now func() time.Time

	mu    sync.Mutex
	tasks map[string]*Task
}

// NewMemoryTaskStore returns an empty store holding at most max live tasks
// (0 or less: DefaultMaxTasks), whose clock is now (nil: time.Now).
func NewMemoryTaskStore(max int, now func() time.Time) *MemoryTaskStore {
	if max <= 0 {
		max = DefaultMaxTasks
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryTaskStore{max: max, now: now, tasks: map[string]*Task{}}
}

// live returns the live task id (s.mu held), dropping it if it expired.
func (s *MemoryTaskStore) live(id string) *Task {
	t := s.tasks[id]
	if t != nil && t.expired(s.now()) {
		delete(s.tasks, id)
		return nil
	}
	return t
}

// Create implements TaskStore.
func (s *MemoryTaskStore) Create(ctx context.Context, t Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live(t.ID) != nil {
		return ErrTaskExists
	}
	if len(s.tasks) >= s.max {
		now := s.now()
		maps.DeleteFunc(s.tasks, func(_ string, o *Task) bool { return o.expired(now) })
		if len(s.tasks) >= s.max {
			return ErrTooManyTasks
		}
	}
	c := t.clone()
	s.tasks[t.ID] = &c
	return nil
}

// Get implements TaskStore.
func (s *MemoryTaskStore) Get(ctx context.Context, id string) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.live(id)
	if t == nil {
		return Task{}, ErrTaskNotFound
	}
	return t.clone(), nil
}

// Update implements TaskStore.
func (s *MemoryTaskStore) Update(ctx context.Context, id string, fn func(*Task) error) (Task, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.live(id)
	if t == nil {
		return Task{}, ErrTaskNotFound
	}
	c := t.clone()
	if err := fn(&c); err != nil {
		return Task{}, err
	}
	c.ID = id
	*t = c.clone()
	return c, nil
}

// List implements TaskStore.
func (s *MemoryTaskStore) List(ctx context.Context, owner string) ([]Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Task
	for _, t := range s.tasks {
		if t.Owner == owner && !t.expired(now) {
			out = append(out, t.clone())
		}
	}
	slices.SortFunc(out, func(a, b Task) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}
