package connrt

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errTimeout = errors.New("handler timeout")

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A Ctx behaves as a context from context.WithCancelCause whether or
// not anybody waited on it before it was cancelled: Err, Cause, Done,
// derived contexts and AfterFunc all see the cancellation.
func TestLazyCtxCancel(t *testing.T) {
	for _, waitFirst := range []bool{false, true} {
		parent, cancelParent := context.WithCancelCause(context.Background())
		var c Ctx[struct{}, int]
		c.Init(parent, nil)
		var done <-chan struct{}
		var child context.Context
		ran := make(chan struct{})
		if waitFirst {
			done = c.Done()
			var cancelChild context.CancelFunc
			child, cancelChild = context.WithCancel(&c)
			defer cancelChild()
			context.AfterFunc(&c, func() { close(ran) })
			if isClosed(done) || c.Err() != nil || child.Err() != nil {
				t.Fatal("cancelled before cancel")
			}
		}
		c.Cancel(context.DeadlineExceeded, errTimeout)
		c.Cancel(context.Canceled, context.Canceled)       // the second cancel changes nothing
		cancelParent(errors.New("the parent ended later")) // nor does the parent's, later
		if err := c.Err(); err != context.DeadlineExceeded {
			t.Errorf("waitFirst=%v: Err = %v", waitFirst, err)
		}
		if cause := context.Cause(&c); cause != errTimeout {
			t.Errorf("waitFirst=%v: Cause = %v", waitFirst, cause)
		}
		if !isClosed(c.Done()) {
			t.Errorf("waitFirst=%v: Done is open", waitFirst)
		}
		if waitFirst {
			if !isClosed(done) || !errors.Is(child.Err(), context.Canceled) || context.Cause(child) != errTimeout {
				t.Errorf("derived context: %v %v", child.Err(), context.Cause(child))
			}
			select {
			case <-ran:
			case <-time.After(5 * time.Second):
				t.Error("AfterFunc did not run")
			}
		}
		// A context derived after the cancellation is cancelled at once.
		late, cancelLate := context.WithCancel(&c)
		if late.Err() == nil || context.Cause(late) != errTimeout {
			t.Errorf("late child: %v %v", late.Err(), context.Cause(late))
		}
		cancelLate()
	}
}

// The parent's cancellation reaches a Ctx, waited on or not, and its
// error and cause stay when the server cancels it afterwards.
func TestLazyCtxParent(t *testing.T) {
	parentCause := errors.New("the client went away")
	for _, waitFirst := range []bool{false, true} {
		parent, cancelParent := context.WithCancelCause(context.Background())
		var c Ctx[struct{}, int]
		c.Init(parent, nil)
		var done <-chan struct{}
		if waitFirst {
			done = c.Done()
		}
		cancelParent(parentCause)
		if waitFirst && !isClosed(done) {
			t.Error("Done stayed open after the parent was cancelled")
		}
		for range 2 {
			if c.Err() != context.Canceled || context.Cause(&c) != parentCause || !isClosed(c.Done()) {
				t.Errorf("waitFirst=%v: Err %v, Cause %v", waitFirst, c.Err(), context.Cause(&c))
			}
			c.Cancel(context.DeadlineExceeded, errTimeout) // too late: the parent's reason stays
		}
	}
}

// A handler that never waits on its context costs no allocation for it.
func TestLazyCtxAllocatesNothingUnlessWaitedOn(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	type key struct{}
	c := new(Ctx[struct{}, int])
	allocs := testing.AllocsPerRun(100, func() {
		*c = Ctx[struct{}, int]{}
		c.Init(parent, nil)
		if c.Err() != nil || c.Value(key{}) != nil {
			t.Fatal("cancelled")
		}
		c.Cancel(context.Canceled, context.Canceled)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per context", allocs)
	}
}
