package connrt

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type job struct {
	name  string
	fired chan string
}

func TestTimerFires(t *testing.T) {
	ts := Timers[job]{Fire: func(j *job) { j.fired <- j.name }}
	j := &job{name: "late", fired: make(chan string, 1)}
	tm := ts.Arm(j, time.Millisecond)
	select {
	case got := <-j.fired:
		if got != "late" {
			t.Fatalf("fired for %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the timer never fired")
	}
	if tm.Stop() {
		t.Error("Stop after firing reported it stopped the timer")
	}
}

func TestTimerStoppedIsReused(t *testing.T) {
	var fired atomic.Int32
	ts := Timers[job]{Fire: func(j *job) { fired.Add(1); j.fired <- j.name }}
	a := &job{name: "a", fired: make(chan string, 1)}
	tm := ts.Arm(a, time.Hour)
	if !tm.Stop() {
		t.Fatal("Stop before the deadline reported the timer had fired")
	}
	// The pool may hand the same timer back: armed for another value, it
	// fires for that one.
	b := &job{name: "b", fired: make(chan string, 1)}
	ts.Arm(b, time.Millisecond)
	select {
	case got := <-b.fired:
		if got != "b" {
			t.Fatalf("fired for %q, want b", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the rearmed timer never fired")
	}
	if n := fired.Load(); n != 1 {
		t.Errorf("Fire ran %d times, want once (the stopped timer must not fire)", n)
	}
}

func TestArmAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop values at random")
	}
	ts := Timers[job]{Fire: func(*job) {}}
	j := &job{}
	ts.Arm(j, time.Hour).Stop() // warm the pool
	allocs := testing.AllocsPerRun(1000, func() { ts.Arm(j, time.Hour).Stop() })
	if allocs > 0.1 { // the pool may be emptied by a GC now and then
		t.Errorf("Arm+Stop allocates %.2f times, want none once warm", allocs)
	}
}
