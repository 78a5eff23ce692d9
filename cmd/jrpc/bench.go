package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
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

Over stream transports (tcp, unix, ws, --exec) the workers pipeline their
calls on one connection unless --conns N spreads them over N connections.
Over HTTP each connection is one keep-alive client.`,
		Example: `  jrpc bench tcp://127.0.0.1:9090 subtract '[42,23]' -c 16 -n 100000
  jrpc bench http://127.0.0.1:8080/ sum '[1,2,3]' -c 8 -t 10s --conns 8
  jrpc bench tcp://127.0.0.1:9090 sleep ms=5 -c 50 -t 5s --rate 2000 --json`,
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

// benchWorker holds one worker's tallies.
type benchWorker struct {
	h      hist
	errs   map[string]int64 // by error code, or "transport"
	lastTE string           // the last transport error's text
}

func runBench(ctx context.Context, args []string, f *benchFlags) error {
	t, rest, err := newTarget(args)
	if err != nil {
		return err
	}
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
	method := rest[0]
	params, err := buildParams(rest[1:], f.data, os.Stdin)
	if err != nil {
		return err
	}
	var p any
	if params != nil {
		p = params
	}
	conns := min(f.conns, f.concurrency)
	clients := make([]jsonrpc.Client, conns)
	for i := range clients {
		dctx, cancel := callContext(ctx)
		clients[i], err = t.dial(dctx)
		cancel()
		if err != nil {
			for _, c := range clients[:i] {
				c.Close()
			}
			return err
		}
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	// One call first, so a wrong method or params is reported at once
	// rather than as a million errors.
	{
		cctx, cancel := callContext(ctx)
		err := clients[0].Call(cctx, method, p, nil)
		cancel()
		var re *jsonrpc.Error
		if errors.As(err, &re) && re.Code == jsonrpc.CodeMethodNotFound {
			return rpcErrorExit(re)
		}
		if err != nil && !errors.As(err, &re) {
			return t.transportErr(err)
		}
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	if f.duration > 0 {
		var c context.CancelFunc
		runCtx, c = context.WithTimeout(runCtx, f.duration)
		defer c()
	}
	var (
		issued atomic.Int64
		done   atomic.Int64
		failed atomic.Int64
	)
	// take reports whether another call may start, pacing by --rate.
	var tick <-chan time.Time
	if f.rate > 0 {
		interval := time.Duration(float64(time.Second) / f.rate)
		tk := time.NewTicker(max(interval, time.Microsecond))
		defer tk.Stop()
		tick = tk.C
	}
	take := func() bool {
		if runCtx.Err() != nil {
			return false
		}
		if f.count > 0 && issued.Add(1) > f.count {
			return false
		}
		if tick != nil {
			select {
			case <-tick:
			case <-runCtx.Done():
				return false
			}
		}
		return true
	}
	workers := make([]*benchWorker, f.concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := &benchWorker{errs: map[string]int64{}}
		workers[i] = w
		c := clients[i%conns]
		wg.Go(func() {
			for take() {
				cctx := runCtx
				var cancel context.CancelFunc = func() {}
				if global.timeout > 0 {
					cctx, cancel = context.WithTimeout(runCtx, global.timeout)
				}
				t0 := time.Now()
				err := c.Call(cctx, method, p, nil)
				lat := time.Since(t0)
				cancel()
				if err != nil && runCtx.Err() != nil && f.duration > 0 {
					return // cut by the end of the run: not counted
				}
				w.h.add(lat)
				done.Add(1)
				if err != nil {
					failed.Add(1)
					var re *jsonrpc.Error
					if errors.As(err, &re) {
						w.errs[strconv.FormatInt(re.Code, 10)]++
					} else {
						w.errs["transport"]++
						w.lastTE = err.Error()
						if errors.Is(err, jsonrpc.ErrClosed) {
							stop() // the connection is gone: stop rather than spin
							return
						}
					}
				}
			}
		})
	}
	progressDone := make(chan struct{})
	if isTerminal(os.Stderr.Fd()) {
		go func() {
			tk := time.NewTicker(200 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-progressDone:
					fmt.Fprint(os.Stderr, "\r\x1b[K")
					return
				case <-tk.C:
					el := time.Since(start)
					n := done.Load()
					line := fmt.Sprintf("\r\x1b[K  %d calls  %.0f/s  %d errors  %s", n, float64(n)/el.Seconds(), failed.Load(), el.Round(100*time.Millisecond))
					if f.count > 0 {
						line += fmt.Sprintf("  %d%%", n*100/f.count)
					} else {
						line += fmt.Sprintf(" / %s", f.duration)
					}
					fmt.Fprint(os.Stderr, line)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(progressDone)
	if isTerminal(os.Stderr.Fd()) {
		time.Sleep(10 * time.Millisecond) // let the progress line clear
	}

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
	r := benchReport{
		Target: t.String(), Method: method, Concurrency: f.concurrency, Connections: conns,
		Requests: total.n, OK: total.n - failed.Load(), Errors: errs,
		DurationS: elapsed.Seconds(), Throughput: float64(total.n) / elapsed.Seconds(),
		LatencyMS: map[string]float64{
			"min": ms(total.min), "mean": ms(meanOf(&total)), "p50": ms(total.percentile(50)), "p90": ms(total.percentile(90)),
			"p99": ms(total.percentile(99)), "max": ms(total.max),
		},
		Histogram: histogramRows(&total, 12),
	}
	if f.json {
		b, _ := json.Marshal(r)
		os.Stdout.Write(append(b, '\n'))
	} else {
		r.print(os.Stdout, lastTE)
	}
	if ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted"), quiet: true}
	}
	if errs["transport"] > 0 && r.OK == 0 {
		return transportError(fmt.Errorf("every call failed: %s", lastTE), "")
	}
	if failed := r.Requests - r.OK; failed > 0 {
		code := exitRPCError
		if errs["transport"] > 0 {
			code = exitTransport
		}
		return &exitError{code: code, err: fmt.Errorf("%d of %d calls failed (%s)", failed, r.Requests, errorBreakdown(errs))}
	}
	return nil
}

func meanOf(h *hist) time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// benchReport is the result of a bench run (the --json output).
type benchReport struct {
	Target      string             `json:"target"`
	Method      string             `json:"method"`
	Concurrency int                `json:"concurrency"`
	Connections int                `json:"connections"`
	Requests    int64              `json:"requests"`
	OK          int64              `json:"ok"`
	Errors      map[string]int64   `json:"errors"`
	DurationS   float64            `json:"duration_s"`
	Throughput  float64            `json:"throughput"`
	LatencyMS   map[string]float64 `json:"latency_ms"`
	Histogram   []histRow          `json:"histogram"`
}

// histRow is one bar of the histogram: calls with latency up to LeMS.
type histRow struct {
	LeMS  float64 `json:"le_ms"`
	Count int64   `json:"count"`
}

// histogramRows groups the histogram into about n rows of equal width on
// a log scale between min and max.
func histogramRows(h *hist, n int) []histRow {
	if h.n == 0 {
		return []histRow{}
	}
	lo, hi := float64(max(h.min, 1)), float64(max(h.max, 1))
	if hi <= lo*1.01 {
		return []histRow{{LeMS: ms(h.max), Count: h.n}}
	}
	step := math.Pow(hi/lo, 1/float64(n))
	rows := make([]histRow, n)
	for i := range rows {
		rows[i].LeMS = ms(time.Duration(lo * math.Pow(step, float64(i+1))))
	}
	rows[n-1].LeMS = ms(h.max)
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		v := float64(min(histValue(i), h.max))
		k := 0
		if v > lo {
			k = min(n-1, int(math.Log(v/lo)/math.Log(step)))
		}
		rows[k].Count += c
	}
	return rows
}

func (r *benchReport) print(w io.Writer, lastTE string) {
	fmt.Fprintf(w, "%s %s: %d calls in %.2fs, %s on %s\n", r.Target, r.Method, r.Requests, r.DurationS, plural(r.Concurrency, "worker"), plural(r.Connections, "connection"))
	fmt.Fprintf(w, "  throughput  %.0f calls/s\n", r.Throughput)
	nerr := r.Requests - r.OK
	fmt.Fprintf(w, "  ok          %d\n", r.OK)
	if nerr == 0 {
		fmt.Fprintf(w, "  errors      0\n")
	} else {
		fmt.Fprintf(w, "  errors      %d (%s)\n", nerr, errorBreakdown(r.Errors))
		if lastTE != "" {
			fmt.Fprintf(w, "  last transport error: %s\n", lastTE)
		}
	}
	l := r.LatencyMS
	fmt.Fprintf(w, "  latency     p50 %s  p90 %s  p99 %s  max %s  (mean %s)\n", fmtMS(l["p50"]), fmtMS(l["p90"]), fmtMS(l["p99"]), fmtMS(l["max"]), fmtMS(l["mean"]))
	if len(r.Histogram) == 0 {
		return
	}
	fmt.Fprintln(w, "  histogram")
	var top int64
	for _, row := range r.Histogram {
		top = max(top, row.Count)
	}
	const width = 40
	for _, row := range r.Histogram {
		bar := int(math.Round(float64(row.Count) / float64(top) * width))
		if row.Count > 0 && bar == 0 {
			bar = 1
		}
		fmt.Fprintf(w, "    ≤ %9s  %-*s %d\n", fmtMS(row.LeMS), width, strings.Repeat("█", bar), row.Count)
	}
}

// errorBreakdown lists the errors by code (or "transport"): "-32042 ×90".
func errorBreakdown(errs map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(errs) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, errs[k]))
	}
	return strings.Join(parts, ", ")
}

func fmtMS(v float64) string {
	switch {
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 100:
		return fmt.Sprintf("%.2fms", v)
	case v < 10000:
		return fmt.Sprintf("%.0fms", v)
	}
	return fmt.Sprintf("%.1fs", v/1000)
}

// plural returns "1 worker", "2 workers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
