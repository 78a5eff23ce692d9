package connrt

import (
	"sync"
	"sync/atomic"
	"time"
)

// Timers arms timers that call Fire with the value they were armed for
// (a message served under a timeout), reused from one value to the next:
// arming one per message costs no allocation once the pool is warm (a
// time.AfterFunc per message would cost two). The zero value with Fire set
// is ready to use; it is safe for concurrent use.
type Timers[T any] struct {
	// Fire runs on the timer's goroutine when a timer fires before it is
	// stopped (it must be set before the first Arm).
	Fire func(*T)
	pool sync.Pool
}

// Timer is one armed timer.
type Timer[T any] struct {
	t     *time.Timer
	x     atomic.Pointer[T] // the value it is armed for
	owner *Timers[T]
}

func (t *Timer[T]) fire() { t.owner.Fire(t.x.Load()) }

// Arm starts a timer that calls Fire(x) after d unless stopped first.
func (ts *Timers[T]) Arm(x *T, d time.Duration) *Timer[T] {
	t, _ := ts.pool.Get().(*Timer[T])
	if t == nil {
		t = &Timer[T]{owner: ts}
		t.x.Store(x)
		t.t = time.AfterFunc(d, t.fire)
		return t
	}
	t.x.Store(x)
	t.t.Reset(d)
	return t
}

// Stop stops the timer. One stopped before it fired goes back to the pool;
// one that fired, or is firing, is left to the garbage collector (Fire may
// still be running). Stop reports whether it stopped the timer before it
// fired. The timer must not be used after Stop.
func (t *Timer[T]) Stop() bool {
	if !t.t.Stop() {
		return false
	}
	t.x.Store(nil)
	t.owner.pool.Put(t)
	return true
}
