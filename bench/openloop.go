package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// An open-loop load offers calls on a fixed schedule, call k (from 0) due
// at k/Rate seconds after the start, whatever the server does. Each call's
// latency is measured from the time it was due, not from when it was
// sent, so a server that stalls is charged for every call that queued
// behind the stall (a closed loop, whose callers wait for each answer
// before sending the next call, would record one slow call and send
// nothing in the meantime: coordinated omission).

// LoadSpec is an open-loop load.
type LoadSpec struct {
	Rate     float64       // calls per second offered
	Duration time.Duration // calls are due during this long
	// Callers bounds the calls in flight. A call due while all callers are
	// busy waits for one, and the wait counts in its latency.
	Callers int
	// Drain bounds how long after Duration the calls still queued may
	// run; those not started by then are counted in Unsent.
	Drain time.Duration
}

// LoadResult is what an open-loop load measured.
type LoadResult struct {
	Spec    LoadSpec
	Due     int             // calls the schedule made due
	Errors  int             // calls that failed
	Unsent  int             // due calls not started before the drain ended
	Elapsed time.Duration   // from the start to the last answer
	Latency []time.Duration // of every call made, from its due time, sorted
	// SendLag is how late each call was sent after its due time, sorted:
	// the generator's own lateness plus any wait for a free caller.
	SendLag []time.Duration
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of sorted d: the
// smallest value at or above which p percent of the values lie (0 for
// none).
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(d))*p/100)) - 1
	return d[min(max(rank, 0), len(d)-1)]
}

// Throughput is the calls answered per second over the whole run.
func (r *LoadResult) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latency)) / r.Elapsed.Seconds()
}

// OpenLoop offers call at spec.Rate for spec.Duration from spec.Callers
// goroutines and measures every call from its due time. It returns when
// every due call has been answered, or the drain has ended, or ctx is
// done (the calls then made are cancelled through their context).
func OpenLoop(ctx context.Context, spec LoadSpec, call func(context.Context) error) *LoadResult {
	n := int(spec.Rate * spec.Duration.Seconds())
	if spec.Rate <= 0 || n <= 0 {
		return &LoadResult{Spec: spec}
	}
	callers := max(spec.Callers, 1)
	lat := make([]time.Duration, n)
	lag := make([]time.Duration, n)
	sent := make([]bool, n)
	failed := make([]bool, n)
	interval := float64(time.Second) / spec.Rate
	start := time.Now()
	stopAt := start.Add(spec.Duration + spec.Drain)
	var next atomic.Int64
	var last atomic.Int64 // the latest answer, in ns after start
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				due := start.Add(time.Duration(float64(k) * interval))
				if !waitUntil(ctx, timer, due) || time.Now().After(stopAt) {
					return
				}
				lag[k] = time.Since(due)
				sent[k] = true
				err := call(ctx)
				end := time.Now()
				lat[k], failed[k] = end.Sub(due), err != nil
				for l := end.Sub(start); ; {
					old := last.Load()
					if int64(l) <= old || last.CompareAndSwap(old, int64(l)) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	r := &LoadResult{Spec: spec, Due: n, Elapsed: time.Duration(last.Load())}
	for k := range n {
		if !sent[k] {
			r.Unsent++
			continue
		}
		if failed[k] {
			r.Errors++
		}
		r.Latency = append(r.Latency, lat[k])
		r.SendLag = append(r.SendLag, lag[k])
	}
	slices.Sort(r.Latency)
	slices.Sort(r.SendLag)
	return r
}

// waitUntil sleeps on timer until t (at once if t has passed); it reports
// false if ctx ends first.
func waitUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer.Reset(d)
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// KeptUp reports whether the load kept up with its schedule: every due
// call sent and answered, the last within max(Duration/50, 10 ms) of the
// schedule's end, so no queue was left growing.
func (r *LoadResult) KeptUp() bool {
	slack := max(r.Spec.Duration/50, 10*time.Millisecond)
	return r.Unsent == 0 && r.Errors == 0 && r.Elapsed <= r.Spec.Duration+slack
}

// SustainedPeak is the peak an open-loop load is a share of: the highest
// of upper·0.9^i (upper a ClosedLoopPeak, i < steps) that OpenLoop keeps
// up with (KeptUp) for d with callers, or the lowest, untried, when none
// of the others does. A closed loop has no timers and
// no idle moments, so it reaches rates an open-loop load cannot sustain,
// and by more the cheaper each call is: a fixed cost per call (the
// schedule's timers, waking idle processors) is a larger share of it.
func SustainedPeak(ctx context.Context, upper float64, d time.Duration, callers, steps int, call func(context.Context) error) float64 {
	rate := upper
	for i := 1; i < steps && !OpenLoop(ctx, LoadSpec{Rate: rate, Duration: d, Callers: callers, Drain: d}, call).KeptUp(); i++ {
		rate *= 0.9
	}
	return rate
}

// ClosedLoopPeak is the calls per second callers goroutines make calling
// as fast as they can for d: the upper bound of SustainedPeak.
func ClosedLoopPeak(ctx context.Context, callers int, d time.Duration, call func(context.Context) error) (float64, error) {
	var calls atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				if err := call(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return 0, *p
	}
	return float64(calls.Load()) / time.Since(start).Seconds(), nil
}
