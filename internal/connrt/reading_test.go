package connrt

import (
	"sync/atomic"
	"testing"
	"time"
)

// reader counts the loops started and the reads interrupted.
type reader struct{ loops, interrupts atomic.Int32 }

func (r *reader) StartLoop()      { r.loops.Add(1) }
func (r *reader) Interrupt() bool { r.interrupts.Add(1); return true }

func newOwner() (*ReadOwner, *reader) {
	r := new(reader)
	o := new(ReadOwner)
	o.Init(r)
	return o, r
}

// eventually waits (generously: the machine may be loaded) until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// Hand changes the state once per word: a stale word changes nothing and
// starts no loop.
func TestHandStaleWord(t *testing.T) {
	o, r := newOwner()
	w0 := o.Load()
	w1, ok := o.Hand(w0, Caller, false)
	if !ok || w1.State() != Caller || w1 == w0 || o.Load() != w1 {
		t.Fatalf("Hand = %x %v, state %v", w1, ok, o.Load().State())
	}
	if w, ok := o.Hand(w0, Loop, true); ok || w != w0 || o.Load() != w1 || r.loops.Load() != 0 {
		t.Errorf("a stale Hand took effect: %x %v, loops %d", w, ok, r.loops.Load())
	}
	w2, ok := o.Hand(w1, Loop, true)
	if !ok || w2.State() != Loop || r.loops.Load() != 1 {
		t.Errorf("Hand to a fresh loop: %v %v, loops %d", w2.State(), ok, r.loops.Load())
	}
	if _, ok := o.Hand(w2, Ended, false); !ok || o.Load().State() != Ended {
		t.Error("Hand to Ended failed")
	}
	o.Stop()
}

// A request served inline past its budget, or reading parked past its
// budget, hands reading to a fresh loop; one that returns in time does not.
func TestBudgetsHandToFreshLoop(t *testing.T) {
	for _, s := range []ReadState{Inline, Parked} {
		o, r := newOwner()
		w, _ := o.Hand(o.Load(), s, false)
		eventually(t, "the timer did not hand reading on", func() bool { return o.Load().State() == Loop })
		if r.loops.Load() != 1 || o.Load() == w {
			t.Errorf("state %d: loops %d", s, r.loops.Load())
		}
		o.Stop()
	}
	o, r := newOwner()
	w, _ := o.Hand(o.Load(), Inline, false)
	if _, ok := o.Hand(w, Loop, false); !ok {
		t.Fatal("the inline request could not hand back")
	}
	time.Sleep(5 * InlineBudget)
	if r.loops.Load() != 0 || o.Load().State() != Loop {
		t.Errorf("a loop started though the request returned in time: %d", r.loops.Load())
	}
	if !o.Grown() {
		t.Error("a loop that served inline is not marked grown")
	}
	// Idle past IdleRefresh on a grown stack: its read is interrupted.
	eventually(t, "the idle loop was not refreshed", func() bool { return r.interrupts.Load() == 1 })
	o.Hand(o.Load(), Loop, true)
	if o.Grown() {
		t.Error("a fresh loop is marked grown")
	}
	o.Stop()
}
