package connrt

import "time"

const workerIdle = 100 * time.Millisecond

// work hands jobs to idle workers (unbuffered: a send succeeds only when one
// waits). Like a sync.Pool it is shared by every connection: a worker whose
// stack grew on one connection serves the next one that needs it.
var work = make(chan func())

// Go runs f on an idle worker, or on a new goroutine when none waits.
// Goroutines that served a request are kept for a moment (workerIdle) and
// reused for the next one: their stacks have already grown to what a
// handler needs, which spares every request a stack copy.
func Go(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

func worker(f func()) {
	f()
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		select {
		case f = <-work:
			f()
			t.Reset(workerIdle)
		case <-t.C:
			return
		}
	}
}
