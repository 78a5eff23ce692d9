package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

func meanOf(h *hist) time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// benchReport is the result of a bench run (the --json output, which
// --compare reads back).
type benchReport struct {
	Target      string  `json:"target"`
	Method      string  `json:"method"`
	Params      string  `json:"params,omitempty"`
	Concurrency int     `json:"concurrency"`
	Connections int     `json:"connections"`
	Rate        float64 `json:"rate,omitempty"`
	Started     string  `json:"started,omitempty"`
	Version     string  `json:"jrpc_version,omitempty"`
	Requests    int64   `json:"requests"`
	OK          int64   `json:"ok"`
	// Unsent counts the calls --rate's schedule made due before a -t run
	// ended that no worker was free to send.
	Unsent             int64              `json:"unsent,omitempty"`
	Errors             map[string]int64   `json:"errors"`
	LastTransportError string             `json:"last_transport_error,omitempty"`
	DurationS          float64            `json:"duration_s"`
	Throughput         float64            `json:"throughput"`
	LatencyMS          map[string]float64 `json:"latency_ms"`
	Histogram          []histRow          `json:"histogram"`
	// Buckets are the histogram at full resolution (histBuckets).
	Buckets  [][2]int64 `json:"buckets,omitempty"`
	Timeline []timeRow  `json:"timeline"`
	// Compare sets an earlier run (--compare) beside this one.
	Compare *comparison `json:"compare,omitempty"`

	hist *hist // this run's calls (nil for a report read back)
}

// histRows is how many ranges the histogram has.
const histRows = 12

// histRow is one bar of the histogram: calls with latency up to LeMS.
type histRow struct {
	LeMS  float64 `json:"le_ms"`
	Count int64   `json:"count"`
}

// histBuckets are a histogram's non-empty buckets as [upper bound in ns,
// count] pairs: enough to rebuild it (fromBuckets), so that --compare can
// put an earlier run's calls into this run's ranges.
func histBuckets(h *hist) [][2]int64 {
	out := [][2]int64{}
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		v := histValue(i) // the bucket's highest value, so that histIndex(v) is i
		if i >= histSub {
			v--
		}
		out = append(out, [2]int64{int64(min(v, h.max)), c})
	}
	return out
}

// fromBuckets rebuilds a histogram from histBuckets' pairs (the sum, and
// so the mean, is not kept).
func fromBuckets(bs [][2]int64) *hist {
	h := &hist{}
	for _, b := range bs {
		h.addCount(time.Duration(b[0]), b[1])
	}
	return h
}

// addCount counts c calls of latency d (sum aside).
func (h *hist) addCount(d time.Duration, c int64) {
	if c <= 0 {
		return
	}
	h.counts[min(histIndex(d), len(h.counts)-1)] += c
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.n += c
	h.max = max(h.max, d)
}

// histEdges are the upper bounds of about n ranges of equal width on a log
// scale from lo to hi (the last is hi).
func histEdges(lo, hi time.Duration, n int) []time.Duration {
	flo, fhi := float64(max(lo, 1)), float64(max(hi, 1))
	if fhi <= flo*1.01 {
		return []time.Duration{hi}
	}
	step := math.Pow(fhi/flo, 1/float64(n))
	edges := make([]time.Duration, n)
	for i := range edges {
		edges[i] = time.Duration(flo * math.Pow(step, float64(i+1)))
	}
	edges[n-1] = hi
	return edges
}

// histogramOn counts h's calls in the ranges that end at edges: a bucket
// goes to the first range whose edge is at or above its value (clamped to
// h.max), the last range taking what is above every edge.
func histogramOn(h *hist, edges []time.Duration) []histRow {
	rows := make([]histRow, len(edges))
	for i, e := range edges {
		rows[i].LeMS = ms(e)
	}
	if len(edges) == 0 {
		return rows
	}
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		v := min(histValue(i), h.max)
		k, _ := slices.BinarySearch(edges, v)
		rows[min(k, len(rows)-1)].Count += c
	}
	return rows
}

// histogramRows groups the histogram into about n rows of equal width on
// a log scale between min and max.
func histogramRows(h *hist, n int) []histRow {
	if h.n == 0 {
		return []histRow{}
	}
	return histogramOn(h, histEdges(h.min, h.max, n))
}

func (r *benchReport) print(w io.Writer) {
	fmt.Fprintf(w, "%s %s: %d calls in %.2fs, %s on %s\n", r.Target, r.Method, r.Requests, r.DurationS, plural(r.Concurrency, "worker"), plural(r.Connections, "connection"))
	fmt.Fprintf(w, "  throughput  %.0f calls/s\n", r.Throughput)
	if r.Rate > 0 {
		fmt.Fprintf(w, "  rate        %s calls/s offered (latency from each call's due time)\n", strconv.FormatFloat(r.Rate, 'g', -1, 64))
	}
	if r.Unsent > 0 {
		fmt.Fprintf(w, "  unsent      %d due calls found every worker busy until the end (raise -c)\n", r.Unsent)
	}
	nerr := r.Requests - r.OK
	fmt.Fprintf(w, "  ok          %d\n", r.OK)
	if nerr == 0 {
		fmt.Fprintf(w, "  errors      0\n")
	} else {
		fmt.Fprintf(w, "  errors      %d (%s)\n", nerr, errorBreakdown(r.Errors))
		if r.LastTransportError != "" {
			fmt.Fprintf(w, "  last transport error: %s\n", r.LastTransportError)
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

// exit is the run's exit: 130 when interrupted, 3 when every call failed
// in transport or any did, 1 when any call got a JSON-RPC error.
func (r *benchReport) exit(ctx context.Context) error {
	if ctx.Err() != nil {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted"), quiet: true}
	}
	if r.Errors["transport"] > 0 && r.OK == 0 {
		return transportError(fmt.Errorf("every call failed: %s", r.LastTransportError), "")
	}
	if failed := r.Requests - r.OK; failed > 0 {
		code := exitRPCError
		if r.Errors["transport"] > 0 {
			code = exitTransport
		}
		return &exitError{code: code, err: fmt.Errorf("%d of %d calls failed (%s)", failed, r.Requests, errorBreakdown(r.Errors))}
	}
	return nil
}

// Timeline --------------------------------------------------------------

// The timeline samples the workers every timelineTick into at most
// timelineMax points; when full, neighbours merge and each point spans
// twice as long from then on, so a run of any length keeps exact
// per-point percentiles in bounded memory.
const (
	timelineTick = 100 * time.Millisecond
	timelineMax  = 120
)

type timeline struct {
	started time.Time
	workers []*benchWorker
	width   time.Duration // the least span of a point
	points  []*timePoint
	stop    chan struct{}
	stopped chan struct{}
}

// timePoint is the calls that ended in one span of the run: from the end
// of the point before (or the start) to end.
type timePoint struct {
	end  time.Duration
	h    hist
	errs int64
}

func (p *timePoint) merge(o *timePoint) {
	p.h.merge(&o.h)
	p.errs += o.errs
	p.end = max(p.end, o.end)
}

// timeRow is one point of the timeline in the report: the calls that
// ended in the span (StartS, EndS] seconds into the run.
type timeRow struct {
	StartS     float64   `json:"start_s"`
	EndS       float64   `json:"end_s"`
	Calls      int64     `json:"calls"`
	Errors     int64     `json:"errors"`
	Throughput float64   `json:"throughput"`
	LatencyMS  latencyMS `json:"latency_ms"`
}

type latencyMS struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// startTimeline samples workers until end is called.
func startTimeline(started time.Time, workers []*benchWorker) *timeline {
	tl := &timeline{started: started, workers: workers, width: timelineTick, stop: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(tl.stopped)
		tk := time.NewTicker(timelineTick)
		defer tk.Stop()
		for {
			select {
			case <-tl.stop:
				return
			case now := <-tk.C:
				tl.add(tl.sample(now), false)
			}
		}
	}()
	return tl
}

// end stops the sampling and adds what is left to the last point (a
// sliver of a span would make a spike of throughput).
func (tl *timeline) end() {
	close(tl.stop)
	<-tl.stopped
	tl.add(tl.sample(time.Now()), true)
}

// sample takes what the workers counted since the last sample.
func (tl *timeline) sample(now time.Time) *timePoint {
	p := &timePoint{end: now.Sub(tl.started)}
	for _, w := range tl.workers {
		w.mu.Lock()
		p.h.merge(&w.cur)
		p.errs += w.curErrs
		w.cur, w.curErrs = hist{}, 0
		w.mu.Unlock()
	}
	return p
}

// add appends p, or merges it into the last point while that spans less
// than width (or last is set); when full, the points merge pairwise.
func (tl *timeline) add(p *timePoint, last bool) {
	if n := len(tl.points); n > 0 && (last || p.end-tl.startOf(n-1) <= tl.width) {
		tl.points[n-1].merge(p)
		return
	}
	tl.points = append(tl.points, p)
	if len(tl.points) > timelineMax {
		merged := tl.points[:0]
		for i := 0; i < len(tl.points); i += 2 {
			if i+1 < len(tl.points) {
				tl.points[i].merge(tl.points[i+1])
			}
			merged = append(merged, tl.points[i])
		}
		clear(tl.points[len(merged):])
		tl.points = merged
		tl.width *= 2
	}
}

// startOf is where point i's span begins.
func (tl *timeline) startOf(i int) time.Duration {
	if i == 0 {
		return 0
	}
	return tl.points[i-1].end
}

// rows are the timeline's points in the report.
func (tl *timeline) rows() []timeRow {
	rows := make([]timeRow, 0, len(tl.points))
	for i, p := range tl.points {
		from := tl.startOf(i)
		row := timeRow{StartS: from.Seconds(), EndS: p.end.Seconds(), Calls: p.h.n, Errors: p.errs}
		if span := p.end - from; span > 0 {
			row.Throughput = float64(p.h.n) / span.Seconds()
		}
		if p.h.n > 0 {
			row.LatencyMS = latencyMS{P50: ms(p.h.percentile(50)), P90: ms(p.h.percentile(90)), P99: ms(p.h.percentile(99)), Max: ms(p.h.max)}
		}
		rows = append(rows, row)
	}
	return rows
}

// Comparison --------------------------------------------------------------

// comparison is an earlier run (--compare OLD.json) beside this one.
type comparison struct {
	File    string       `json:"file"`
	Started string       `json:"started,omitempty"`
	Rows    []compareRow `json:"rows"`
	// Histogram is the earlier run's calls in this run's latency ranges,
	// which then span both runs (the report's histogram shares its edges).
	Histogram []histRow    `json:"histogram"`
	old       *benchReport // for the page's side-by-side charts
}

// compareRow is one figure of both runs; Ratio is now/before.
type compareRow struct {
	Metric       string  `json:"metric"`
	Before       float64 `json:"before"`
	Now          float64 `json:"now"`
	Ratio        float64 `json:"ratio"`
	HigherBetter bool    `json:"higher_is_better"`
}

// Verdict says whether now is an improvement on before ("better",
// "worse"), a ratio within 3% of 1 counting as "same".
func (c compareRow) Verdict() string {
	switch {
	case c.Before == c.Now || !math.IsNaN(c.Ratio) && math.Abs(c.Ratio-1) < 0.03:
		return "same"
	case (c.Now > c.Before) == c.HigherBetter:
		return "better"
	}
	return "worse"
}

// Unit formats a value of the row's metric.
func (c compareRow) Unit(v float64) string {
	switch c.Metric {
	case "throughput":
		return fmt.Sprintf("%.0f/s", v)
	case "error rate":
		return fmt.Sprintf("%.2f%%", v*100)
	}
	return fmtMS(v)
}

// compareWith sets old beside r.
func (r *benchReport) compareWith(file string, old *benchReport) {
	c := &comparison{File: file, Started: old.Started, old: old}
	add := func(metric string, before, now float64, higherBetter bool) {
		ratio := now / before
		if before == 0 {
			ratio = math.NaN()
			if now == 0 {
				ratio = 1
			}
		}
		c.Rows = append(c.Rows, compareRow{Metric: metric, Before: before, Now: now, Ratio: ratio, HigherBetter: higherBetter})
	}
	add("throughput", old.Throughput, r.Throughput, true)
	for _, p := range []string{"p50", "p90", "p99", "max", "mean"} {
		add(p, old.LatencyMS[p], r.LatencyMS[p], false)
	}
	add("error rate", errorRate(old), errorRate(r), false)
	r.Histogram, c.Histogram = sharedHistograms(r, old)
	r.Compare = c
}

// sharedHistograms puts both runs' calls into the same latency ranges,
// from the lower of their fastest calls to the higher of their slowest.
// An earlier run saved without its buckets counts each of its rows at
// the row's upper bound.
func sharedHistograms(r, old *benchReport) (now, before []histRow) {
	hn, ho := r.hist, fromBuckets(old.Buckets)
	if hn == nil {
		hn = fromBuckets(r.Buckets)
	}
	if len(old.Buckets) == 0 {
		for _, row := range old.Histogram {
			ho.addCount(time.Duration(row.LeMS*1e6), row.Count)
		}
	}
	if hn.n == 0 && ho.n == 0 {
		return []histRow{}, []histRow{}
	}
	lo, hi := hn.min, max(hn.max, ho.max)
	if hn.n == 0 || ho.n > 0 && ho.min < lo {
		lo = ho.min
	}
	edges := histEdges(lo, hi, histRows)
	return histogramOn(hn, edges), histogramOn(ho, edges)
}

func errorRate(r *benchReport) float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Requests-r.OK) / float64(r.Requests)
}

// MarshalJSON keeps NaN ratios (a figure that was 0) out of the JSON.
func (c compareRow) MarshalJSON() ([]byte, error) {
	type plain compareRow
	if math.IsNaN(c.Ratio) || math.IsInf(c.Ratio, 0) {
		c.Ratio = 0
	}
	return json.Marshal(plain(c))
}

// printComparison prints the comparison under the report.
func (c *comparison) print(w io.Writer) {
	fmt.Fprintf(w, "  compared with %s", c.File)
	if c.Started != "" {
		fmt.Fprintf(w, " (%s)", c.Started)
	}
	fmt.Fprintf(w, "\n    %-11s %10s %10s  %s\n", "", "before", "now", "ratio")
	for _, row := range c.Rows {
		ratio := "—"
		if !math.IsNaN(row.Ratio) {
			ratio = fmt.Sprintf("%.2f×", row.Ratio)
		}
		fmt.Fprintf(w, "    %-11s %10s %10s  %s %s\n", row.Metric, row.Unit(row.Before), row.Unit(row.Now), ratio, row.Verdict())
	}
}

// loadBenchReport reads an earlier run's --json output.
func loadBenchReport(path string) (*benchReport, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("--compare: %w", err)}
	}
	var old benchReport
	if err := json.Unmarshal(raw, &old); err != nil || old.LatencyMS == nil || old.Requests == 0 {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("--compare: %s is not the output of jrpc bench --json (with calls made)", path), hint: "jrpc bench URL METHOD ... --json > before.json"}
	}
	return &old, nil
}

// Outputs ------------------------------------------------------------------

// benchOutputs are where the report goes: stdout (text or --json), the
// --report page (created before the run, so a bad path fails at once) and
// the --compare run read beforehand.
type benchOutputs struct {
	f    *benchFlags
	page *os.File
	old  *benchReport
}

func openBenchOutputs(f *benchFlags) (*benchOutputs, error) {
	out := &benchOutputs{f: f}
	if f.compare != "" {
		old, err := loadBenchReport(f.compare)
		if err != nil {
			return nil, err
		}
		out.old = old
	}
	if f.report != "" {
		page, err := os.Create(f.report)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--report: %w", err)}
		}
		out.page = page
	}
	return out, nil
}

// write prints the report and writes the page.
func (out *benchOutputs) write(r *benchReport) error {
	if out.old != nil {
		r.compareWith(out.f.compare, out.old)
	}
	if out.f.json {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		os.Stdout.Write(append(b, '\n'))
	} else {
		r.print(os.Stdout)
		if r.Compare != nil {
			r.Compare.print(os.Stdout)
		}
	}
	if out.page == nil {
		return nil
	}
	if err := writeBenchPage(out.page, r); err != nil {
		return fmt.Errorf("--report %s: %w", out.f.report, err)
	}
	if err := out.page.Close(); err != nil {
		return fmt.Errorf("--report %s: %w", out.f.report, err)
	}
	out.page = nil
	fmt.Fprintf(os.Stderr, "report written to %s\n", out.f.report)
	return nil
}

// close removes a page left unwritten (the run failed before its report).
func (out *benchOutputs) close() {
	if out.page != nil {
		out.page.Close()
		os.Remove(out.page.Name())
	}
}
