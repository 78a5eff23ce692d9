package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

type benchFlags struct {
	concurrency int
	count       int64
	duration    time.Duration
	rate        float64
	conns       int
	json        bool
	data        string
	report      string // --report FILE.html
	compare     string // --compare OLD.json
}

func init() {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench URL METHOD [PARAMS...] -c N (-n COUNT | -t DURATION)",
		Short: "Load-test a method: throughput, errors by code, latency percentiles and histogram",
		Long: `Call METHOD again and again from -c concurrent workers, for -n calls in all or
for -t DURATION, optionally paced at --rate calls per second in all. A
progress line shows on a terminal while it runs; then the throughput, the
errors by code, the latency percentiles (p50, p90, p99, max) and a latency
histogram are printed, or one JSON object with --json. The exit code is 1
when any call got a JSON-RPC error and 3 when any failed in transport (the
report shows each kind with its count).

--rate R is an open-loop load: call k is due k/R seconds into the run
whatever the server does, and its latency counts from when it was due, not
from when a worker got to send it, so a server that falls behind is charged
for the queue it causes (no coordinated omission). -c bounds the calls in
flight: give enough workers for R times the latency you expect. Calls still
unsent when a -t run ends are reported as unsent.

--report FILE.html also writes the run as one self-contained page (inline SVG,
nothing fetched from elsewhere): throughput and latency percentiles over time,
the latency histogram, errors by code and the run's settings. --compare
OLD.json (an earlier run's --json output) sets the earlier run beside this
one: each figure with its ratio, in the terminal, the JSON and the page.

Over stream transports (tcp, unix, ws, --exec) the workers pipeline their
calls on one connection unless --conns N spreads them over N connections.
Over HTTP each connection is one keep-alive client.`,
		Example: `  jrpc bench tcp://127.0.0.1:9090 subtract '[42,23]' -c 16 -n 100000
  jrpc bench http://127.0.0.1:8080/ sum '[1,2,3]' -c 8 -t 10s --conns 8
  jrpc bench tcp://127.0.0.1:9090 sleep ms=5 -c 50 -t 5s --rate 2000 --json > before.json
  jrpc bench tcp://127.0.0.1:9090 sleep ms=5 -c 50 -t 5s --rate 2000 --compare before.json --report bench.html`,
		Args: targetArgs("METHOD [PARAMS...]", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), args, &f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.concurrency, "concurrency", "c", 1, "concurrent workers")
	fl.Int64VarP(&f.count, "requests", "n", 0, "total calls to make")
	fl.DurationVarP(&f.duration, "duration", "t", 0, "run for this long (instead of -n)")
	fl.Float64Var(&f.rate, "rate", 0, "pace calls at R per second in all (0: as fast as possible)")
	fl.IntVar(&f.conns, "conns", 1, "connections to spread the workers over")
	fl.BoolVar(&f.json, "json", false, "print the report as one JSON object")
	fl.StringVarP(&f.data, "data", "d", "", "params from `@FILE`, @- (standard input) or literal JSON")
	fl.StringVar(&f.report, "report", "", "also write the run as a self-contained HTML page to `FILE.html`")
	fl.StringVar(&f.compare, "compare", "", "set an earlier run's --json output (`OLD.json`) beside this one, with ratios")
	rootCmd.AddCommand(cmd)
}

// hist is a log-linear latency histogram: 64 sub-buckets per power of two
// of nanoseconds, so every percentile is within 1.6% of the truth.
type hist struct {
	counts [64 * 64]int64
	n      int64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

const histSub = 64

func histIndex(d time.Duration) int {
	v := uint64(max(d, 1))
	if v < histSub {
		return int(v)
	}
	exp := bits.Len64(v) - 7 // v >> exp is in [64, 128)
	return (exp+1)*histSub + int(v>>exp) - histSub
}

// histValue is the upper bound of bucket i.
func histValue(i int) time.Duration {
	if i < histSub {
		return time.Duration(i)
	}
	exp := i/histSub - 1
	return time.Duration((uint64(i%histSub+histSub) + 1) << exp)
}

func (h *hist) add(d time.Duration) {
	i := min(histIndex(d), len(h.counts)-1)
	h.counts[i]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

func (h *hist) merge(o *hist) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

func (h *hist) percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histValue(i), h.max)
		}
	}
	return h.max
}

// check rejects flags that cannot make a run.
func (f *benchFlags) check() error {
	switch {
	case f.concurrency < 1:
		return usageErrorf("-c must be at least 1")
	case f.conns < 1:
		return usageErrorf("--conns must be at least 1")
	case f.count <= 0 && f.duration <= 0:
		return usageErrorf("give -n COUNT or -t DURATION (e.g. -n 10000 or -t 10s)")
	case f.count > 0 && f.duration > 0:
		return usageErrorf("give either -n or -t, not both")
	case f.rate < 0:
		return usageErrorf("--rate must not be negative")
	}
	return nil
}

func runBench(ctx context.Context, args []string, f *benchFlags) error {
	t, rest, err := newTarget(args)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	out, err := openBenchOutputs(f)
	if err != nil {
		return err
	}
	defer out.close()
	b, err := newBench(f, t, rest)
	if err != nil {
		return err
	}
	if err := b.dial(ctx); err != nil {
		return err
	}
	defer b.close()
	if err := b.probe(ctx); err != nil {
		return err
	}
	r := b.run(ctx)
	if err := out.write(r); err != nil {
		return err
	}
	return r.exit(ctx)
}

// bench is one load test: its flags, target, call and clients, and the
// counters the workers share.
type bench struct {
	f       *benchFlags
	t       *target
	method  string
	params  any
	clients []jsonrpc.Client

	stop    context.CancelFunc // ends the run (the connection is gone)
	started time.Time          // when the run began: --rate's schedule counts from it
	issued  atomic.Int64
	done    atomic.Int64
	failed  atomic.Int64
}

// newBench makes the load test of METHOD [PARAMS...] (rest).
func newBench(f *benchFlags, t *target, rest []string) (*bench, error) {
	params, err := buildParams(rest[1:], f.data, os.Stdin)
	if err != nil {
		return nil, err
	}
	b := &bench{f: f, t: t, method: rest[0]}
	if params != nil {
		b.params = params
	}
	return b, nil
}

// dial opens --conns connections (no more than workers).
func (b *bench) dial(ctx context.Context) error {
	b.clients = make([]jsonrpc.Client, min(b.f.conns, b.f.concurrency))
	for i := range b.clients {
		dctx, cancel := callContext(ctx)
		c, err := b.t.dial(dctx)
		cancel()
		if err != nil {
			b.clients = b.clients[:i]
			b.close()
			return err
		}
		b.clients[i] = c
	}
	return nil
}

func (b *bench) close() {
	for _, c := range b.clients {
		c.Close()
	}
}

// probe makes one call first, so that a wrong method or params is
// reported at once rather than as a million errors.
func (b *bench) probe(ctx context.Context) error {
	cctx, cancel := callContext(ctx)
	err := b.clients[0].Call(cctx, b.method, b.params, nil)
	cancel()
	var re *jsonrpc.Error
	if errors.As(err, &re) && re.Code == jsonrpc.CodeMethodNotFound {
		return rpcErrorExit(re)
	}
	if err != nil && !errors.As(err, &re) {
		return b.t.transportErr(err)
	}
	return nil
}

// run makes the calls from -c workers and returns the report.
func (b *bench) run(ctx context.Context) *benchReport {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	b.stop = stop
	if b.f.duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(runCtx, b.f.duration)
		defer cancel()
	}
	workers := make([]*benchWorker, b.f.concurrency)
	for i := range workers {
		workers[i] = &benchWorker{errs: map[string]int64{}}
	}
	started := time.Now()
	b.started = started
	tl := startTimeline(started, workers)
	endProgress := b.progress(started)
	var wg sync.WaitGroup
	for i, w := range workers {
		c := b.clients[i%len(b.clients)]
		wg.Go(func() { b.work(runCtx, w, c) })
	}
	wg.Wait()
	elapsed := time.Since(started)
	tl.end()
	endProgress()
	return b.report(started, elapsed, workers, tl)
}

// take reports whether another call may start and when it was meant to.
// Without --rate a call starts at once. With --rate R the calls follow a
// fixed schedule, call k (from 0) at k/R seconds into the run, whatever
// the server does: a worker waits for its call's time, and a call whose
// time has passed (every worker was busy) starts at once but is timed
// from its intended time, so a server that falls behind is charged for
// the backlog it causes (no coordinated omission).
func (b *bench) take(ctx context.Context) (intended time.Time, ok bool) {
	if ctx.Err() != nil {
		return time.Time{}, false
	}
	k := b.issued.Add(1)
	if b.f.count > 0 && k > b.f.count {
		return time.Time{}, false
	}
	if b.f.rate <= 0 {
		return time.Now(), true
	}
	intended = b.started.Add(time.Duration(float64(k-1) / b.f.rate * float64(time.Second)))
	if wait := time.Until(intended); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return time.Time{}, false
		}
	}
	return intended, true
}

// work is one worker's loop.
func (b *bench) work(ctx context.Context, w *benchWorker, c jsonrpc.Client) {
	for {
		intended, ok := b.take(ctx)
		if !ok {
			return
		}
		lat, err := b.call(ctx, c, intended)
		if err != nil && ctx.Err() != nil && b.f.duration > 0 {
			return // cut by the end of the run: not counted
		}
		b.done.Add(1)
		if err != nil {
			b.failed.Add(1)
		}
		if w.record(lat, err) {
			b.stop() // the connection is gone: stop rather than spin
			return
		}
	}
}

// call makes one call, bounded by --timeout, and times it from intended.
func (b *bench) call(ctx context.Context, c jsonrpc.Client, intended time.Time) (time.Duration, error) {
	if global.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, global.timeout)
		defer cancel()
	}
	err := c.Call(ctx, b.method, b.params, nil)
	return time.Since(intended), err
}

// progress shows a progress line on a terminal until the returned
// function is called.
func (b *bench) progress(started time.Time) (end func()) {
	if !isTerminal(os.Stderr.Fd()) {
		return func() {}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				fmt.Fprint(os.Stderr, "\r\x1b[K")
				return
			case <-tk.C:
				fmt.Fprint(os.Stderr, b.progressLine(time.Since(started)))
			}
		}
	}()
	return func() { close(stop); <-stopped }
}

func (b *bench) progressLine(el time.Duration) string {
	n := b.done.Load()
	line := fmt.Sprintf("\r\x1b[K  %d calls  %.0f/s  %d errors  %s", n, float64(n)/el.Seconds(), b.failed.Load(), el.Round(100*time.Millisecond))
	if b.f.count > 0 {
		return line + fmt.Sprintf("  %d%%", n*100/b.f.count)
	}
	return line + fmt.Sprintf(" / %s", b.f.duration)
}

// benchWorker holds one worker's tallies: the whole run's, read once the
// worker is done, and those since the timeline's last sample (under mu).
type benchWorker struct {
	h      hist
	errs   map[string]int64 // by error code, or "transport"
	lastTE string           // the last transport error's text

	mu      sync.Mutex
	cur     hist
	curErrs int64
}

// record counts one call; it reports whether the connection is gone.
func (w *benchWorker) record(lat time.Duration, err error) (gone bool) {
	w.h.add(lat)
	w.mu.Lock()
	w.cur.add(lat)
	if err != nil {
		w.curErrs++
	}
	w.mu.Unlock()
	if err == nil {
		return false
	}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		w.errs[strconv.FormatInt(re.Code, 10)]++
		return false
	}
	w.errs["transport"]++
	w.lastTE = err.Error()
	return errors.Is(err, jsonrpc.ErrClosed)
}

// report tallies the workers into the run's report.
func (b *bench) report(started time.Time, elapsed time.Duration, workers []*benchWorker, tl *timeline) *benchReport {
	var total hist
	errs := map[string]int64{}
	lastTE := ""
	for _, w := range workers {
		total.merge(&w.h)
		for k, v := range w.errs {
			errs[k] += v
		}
		if w.lastTE != "" {
			lastTE = w.lastTE
		}
	}
	var unsent int64
	if b.f.rate > 0 && b.f.duration > 0 {
		due := int64(math.Floor(min(elapsed, b.f.duration).Seconds()*b.f.rate)) + 1
		unsent = max(0, due-total.n)
	}
	return &benchReport{
		Unsent: unsent,
		Target: b.t.String(), Method: b.method, Params: quoteParams(b.params),
		Concurrency: b.f.concurrency, Connections: len(b.clients), Rate: b.f.rate,
		Started: started.UTC().Format(time.RFC3339), Version: version(),
		Requests: total.n, OK: total.n - b.failed.Load(), Errors: errs, LastTransportError: lastTE,
		DurationS: elapsed.Seconds(), Throughput: float64(total.n) / elapsed.Seconds(),
		LatencyMS: map[string]float64{
			"min": ms(total.min), "mean": ms(meanOf(&total)), "p50": ms(total.percentile(50)), "p90": ms(total.percentile(90)),
			"p99": ms(total.percentile(99)), "max": ms(total.max),
		},
		Histogram: histogramRows(&total, histRows),
		Buckets:   histBuckets(&total),
		hist:      &total,
		Timeline:  tl.rows(),
	}
}

// quoteParams is the params as the report shows them (cut to a line).
func quoteParams(p any) string {
	if p == nil {
		return ""
	}
	b, err := json.Marshal(p)
	if err != nil {
		return ""
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
