// Package mcptest checks implementations of package mcp's interfaces
// against their contracts, as package state/statetest does for package
// state: an implementation's test calls TestTaskStore with a function that
// makes a fresh, empty store. TestSharedSession checks, on two real HTTP
// servers, that an MCP session's log level and subscriptions travel with
// it through a state.SessionStore.
//
// The checks use real time only for expiry (a wait of about 100ms) and
// bound every wait.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

// MakeTaskStore returns a fresh, empty store holding at most max live
// tasks; it registers with t.Cleanup whatever must be closed.
type MakeTaskStore func(t *testing.T, max int) mcp.TaskStore

// TestTaskStore checks the TaskStore contract: what a task keeps,
// refusals, updates (atomic, refused by fn), copies, lists by owner,
// expiry, the bound, concurrent creates of one id and concurrent updates
// of one task.
func TestTaskStore(t *testing.T, mk MakeTaskStore) {
	t.Run("Keep", func(t *testing.T) { testKeep(t, mk(t, 100)) })
	t.Run("Update", func(t *testing.T) { testUpdate(t, mk(t, 100)) })
	t.Run("Copies", func(t *testing.T) { testCopies(t, mk(t, 100)) })
	t.Run("List", func(t *testing.T) { testList(t, mk(t, 100)) })
	t.Run("Expiry", func(t *testing.T) { testExpiry(t, mk(t, 100)) })
	t.Run("Bound", func(t *testing.T) { testBound(t, mk(t, 3)) })
	t.Run("ConcurrentCreate", func(t *testing.T) { testConcurrentCreate(t, mk(t, 100)) })
	t.Run("ConcurrentUpdate", func(t *testing.T) { testConcurrentUpdate(t, mk(t, 100)) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, mk(t, 100)) })
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// task is a task with every field set.
func task(id, owner string, created time.Time) mcp.Task {
	return mcp.Task{ID: id, Owner: owner, Status: mcp.TaskInputRequired, Created: created, Updated: created.Add(time.Second),
		InputRequests: map[string]jsonrpc.InputRequest{"q": {Method: "elicitation/create", Params: map[string]any{"message": "name?"}}},
		Result:        json.RawMessage(`{"content":[{"type":"text","text":"r"}]}`),
		Error:         &jsonrpc.Error{Code: -32603, Message: "m", Data: json.RawMessage(`{"d":1}`)}}
}

func create(t *testing.T, s mcp.TaskStore, tk mcp.Task) {
	t.Helper()
	if err := s.Create(ctxOf(t), tk); err != nil {
		t.Fatalf("Create(%s): %v", tk.ID, err)
	}
}

// same reports whether a and b are the same task (times to the
// millisecond, JSON by value).
func same(a, b mcp.Task) bool {
	ja, _ := json.Marshal(a.InputRequests)
	jb, _ := json.Marshal(b.InputRequests)
	ea, _ := json.Marshal(a.Error)
	eb, _ := json.Marshal(b.Error)
	near := func(x, y time.Time) bool { return x.Sub(y).Abs() < time.Millisecond && x.IsZero() == y.IsZero() }
	return a.ID == b.ID && a.Owner == b.Owner && a.Status == b.Status && near(a.Created, b.Created) && near(a.Updated, b.Updated) &&
		near(a.Expires, b.Expires) && bytes.Equal(ja, jb) && bytes.Equal(ea, eb) && jsonEqual(a.Result, b.Result)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	jx, _ := json.Marshal(x)
	jy, _ := json.Marshal(y)
	return bytes.Equal(jx, jy)
}

func want(t *testing.T, s mcp.TaskStore, w mcp.Task) {
	t.Helper()
	got, err := s.Get(ctxOf(t), w.ID)
	if err != nil {
		t.Fatalf("Get(%s): %v", w.ID, err)
	}
	if !same(got, w) {
		t.Fatalf("Get(%s) = %+v, want %+v", w.ID, got, w)
	}
}

func wantNotFound(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, mcp.ErrTaskNotFound) {
		t.Fatalf("%s: %v, want ErrTaskNotFound", what, err)
	}
}

func testKeep(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	a := task("a", "alice", time.Now())
	create(t, s, a)
	want(t, s, a)
	if err := s.Create(ctx, task("a", "bob", time.Now())); !errors.Is(err, mcp.ErrTaskExists) {
		t.Errorf("Create of a held id: %v, want ErrTaskExists", err)
	}
	want(t, s, a)
	_, err := s.Get(ctx, "never")
	wantNotFound(t, err, "Get of an unknown id")
	_, err = s.Update(ctx, "never", func(*mcp.Task) error { return nil })
	wantNotFound(t, err, "Update of an unknown id")
}

func testUpdate(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	a := task("a", "alice", time.Now())
	create(t, s, a)
	w := a
	w.Status, w.InputRequests, w.Result, w.Error, w.Updated = mcp.TaskCompleted, nil, json.RawMessage(`{"content":[]}`), nil, a.Updated.Add(time.Second)
	got, err := s.Update(ctx, "a", func(tk *mcp.Task) error {
		if !same(*tk, a) {
			t.Errorf("fn got %+v, want %+v", *tk, a)
		}
		tk.Status, tk.InputRequests, tk.Result, tk.Error, tk.Updated = w.Status, nil, w.Result, nil, w.Updated
		tk.ID = "changed"
		return nil
	})
	if err != nil || !same(got, w) {
		t.Fatalf("Update = %+v, %v; want %+v", got, err, w)
	}
	want(t, s, w)
	refused := errors.New("refused")
	_, err = s.Update(ctx, "a", func(tk *mcp.Task) error {
		tk.Status = mcp.TaskFailed
		return fmt.Errorf("wrapped: %w", refused)
	})
	if !errors.Is(err, refused) {
		t.Errorf("Update whose fn fails: %v, want its error", err)
	}
	want(t, s, w)
	_, err = s.Get(ctx, "changed")
	wantNotFound(t, err, "Get of the id an fn tried to set")
}

func testCopies(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	a := task("a", "alice", time.Now())
	passed := task("a", "alice", a.Created)
	create(t, s, passed)
	passed.InputRequests["other"] = jsonrpc.InputRequest{Method: "roots/list"}
	passed.Result[2] = 'X'
	passed.Error.Message = "changed"
	want(t, s, a)
	got, err := s.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	got.InputRequests["other"] = jsonrpc.InputRequest{Method: "roots/list"}
	got.Result[2] = 'X'
	got.Error.Message = "changed"
	want(t, s, a)
	var kept *mcp.Task
	if _, err := s.Update(ctx, "a", func(tk *mcp.Task) error { kept = tk; return nil }); err != nil {
		t.Fatal(err)
	}
	kept.InputRequests["other"] = jsonrpc.InputRequest{Method: "roots/list"}
	kept.Status = mcp.TaskCancelled
	want(t, s, a)
}

func testList(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	now := time.Now()
	for i, o := range []string{"alice", "bob", "alice", "", "alice"} {
		create(t, s, task("t"+strconv.Itoa(i), o, now.Add(time.Duration(5-i)*time.Second)))
	}
	gone := task("gone", "alice", now.Add(-time.Hour))
	gone.Expires = now.Add(-time.Minute)
	if err := s.Create(ctx, gone); err != nil {
		t.Fatal(err)
	}
	for owner, ids := range map[string][]string{"alice": {"t4", "t2", "t0"}, "bob": {"t1"}, "": {"t3"}, "carol": nil} {
		got, err := s.List(ctx, owner)
		if err != nil {
			t.Fatalf("List(%q): %v", owner, err)
		}
		var gotIDs []string
		for _, tk := range got {
			gotIDs = append(gotIDs, tk.ID)
		}
		if fmt.Sprint(gotIDs) != fmt.Sprint(ids) {
			t.Errorf("List(%q) = %v, want %v (oldest first, live only)", owner, gotIDs, ids)
		}
	}
}

func testExpiry(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	now := time.Now()
	past := task("past", "alice", now)
	past.Expires = now.Add(-time.Millisecond)
	if err := s.Create(ctx, past); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, "past")
	wantNotFound(t, err, "Get of an expired task")
	_, err = s.Update(ctx, "past", func(*mcp.Task) error { return nil })
	wantNotFound(t, err, "Update of an expired task")
	again := task("past", "bob", now)
	create(t, s, again)
	want(t, s, again)

	forever := task("forever", "alice", now)
	create(t, s, forever)
	soon := task("soon", "alice", now)
	soon.Expires = time.Now().Add(100 * time.Millisecond)
	create(t, s, soon)
	want(t, s, soon)
	time.Sleep(150 * time.Millisecond)
	_, err = s.Get(ctx, "soon")
	wantNotFound(t, err, "Get after Expires")
	want(t, s, forever)

	if _, err := s.Update(ctx, "forever", func(tk *mcp.Task) error { tk.Expires = time.Now().Add(-time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "forever")
	wantNotFound(t, err, "Get of a task an Update expired")
	if got, err := s.List(ctx, "alice"); err != nil || len(got) != 0 {
		t.Errorf("List after every task of alice expired: %v %v", got, err)
	}
}

func testBound(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	now := time.Now()
	for i := range 3 {
		create(t, s, task("t"+strconv.Itoa(i), "", now))
	}
	if err := s.Create(ctx, task("t3", "", now)); !errors.Is(err, mcp.ErrTooManyTasks) {
		t.Fatalf("Create past the bound: %v, want ErrTooManyTasks", err)
	}
	if _, err := s.Update(ctx, "t0", func(tk *mcp.Task) error { tk.Expires = time.Now().Add(-time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	create(t, s, task("t3", "", now)) // an expired task does not count
	if err := s.Create(ctx, task("t4", "", now)); !errors.Is(err, mcp.ErrTooManyTasks) {
		t.Fatalf("Create past the bound again: %v, want ErrTooManyTasks", err)
	}
}

func testConcurrentCreate(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Create(ctx, task("one", strconv.Itoa(i), time.Now())) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, mcp.ErrTaskExists):
			t.Errorf("a losing Create: %v, want ErrTaskExists", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent Creates of one id succeeded, want 1", won, len(errs))
	}
}

func testConcurrentUpdate(t *testing.T, s mcp.TaskStore) {
	ctx := ctxOf(t)
	a := task("a", "", time.Now())
	a.Result = json.RawMessage(`0`)
	create(t, s, a)
	const n = 32
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := s.Update(ctx, "a", func(tk *mcp.Task) error {
				v, err := strconv.Atoi(string(tk.Result))
				tk.Result = json.RawMessage(strconv.Itoa(v + 1))
				return err
			})
			if err != nil {
				t.Errorf("Update: %v", err)
			}
		})
	}
	wg.Wait()
	if got, err := s.Get(ctx, "a"); err != nil || string(got.Result) != strconv.Itoa(n) {
		t.Fatalf("after %d concurrent increments: %s %v (an update was lost)", n, got.Result, err)
	}
}

func testCanceled(t *testing.T, s mcp.TaskStore) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Create(ctx, task("a", "", time.Now())); err == nil {
		t.Error("Create with a canceled context: no error")
	}
	if _, err := s.Get(ctx, "a"); err == nil {
		t.Error("Get with a canceled context: no error")
	}
	if _, err := s.Update(ctx, "a", func(*mcp.Task) error { return nil }); err == nil {
		t.Error("Update with a canceled context: no error")
	}
	if _, err := s.List(ctx, ""); err == nil {
		t.Error("List with a canceled context: no error")
	}
}
