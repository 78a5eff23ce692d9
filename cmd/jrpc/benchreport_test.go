package main

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/internal/demo"
)

// TestTimelineBounded feeds a timeline six minutes of samples: it keeps at
// most timelineMax points, contiguous, every call counted once, the
// slowest call in its point, and the last sample merged into the last
// point rather than a sliver of its own.
func TestTimelineBounded(t *testing.T) {
	tl := &timeline{width: timelineTick}
	const samples = 3600
	for i := 1; i <= samples; i++ {
		p := &timePoint{end: time.Duration(i) * timelineTick}
		p.h.add(time.Duration(i) * time.Microsecond)
		if i%10 == 0 {
			p.errs = 1
		}
		tl.add(p, false)
	}
	last := &timePoint{end: samples*timelineTick + time.Millisecond}
	last.h.add(time.Microsecond)
	tl.add(last, true)
	rows := tl.rows()
	if len(rows) > timelineMax || len(rows) < timelineMax/2 {
		t.Fatalf("%d points, want between %d and %d", len(rows), timelineMax/2, timelineMax)
	}
	var calls, errs int64
	for i, r := range rows {
		calls += r.Calls
		errs += r.Errors
		if i > 0 && r.StartS != rows[i-1].EndS || r.EndS <= r.StartS {
			t.Fatalf("point %d spans (%v, %v] after one ending at %v", i, r.StartS, r.EndS, rows[max(i-1, 0)].EndS)
		}
		if r.Throughput <= 0 || r.LatencyMS.P50 > r.LatencyMS.P99 || r.LatencyMS.P99 > r.LatencyMS.Max {
			t.Fatalf("point %d: %+v", i, r)
		}
	}
	if calls != samples+1 || errs != samples/10 {
		t.Fatalf("%d calls and %d errors in the points, want %d and %d", calls, errs, samples+1, samples/10)
	}
	end := rows[len(rows)-1]
	if want := float64(samples) * timelineTick.Seconds(); end.LatencyMS.Max != ms(samples*time.Microsecond) || end.EndS < want {
		t.Fatalf("the last point %+v, want max %v ending after %vs", end, ms(samples*time.Microsecond), want)
	}
}

// TestBenchReport runs bench twice against the shared server, the second
// time with --report and --compare: the JSON carries the timeline and
// the ratios, the terminal shows them, the page is self-contained, and
// headless Chromium renders it with this run's numbers.
func TestBenchReport(t *testing.T) {
	dir := t.TempDir()
	before, now, page := filepath.Join(dir, "before.json"), filepath.Join(dir, "now.json"), filepath.Join(dir, "report.html")
	r := run(t, "", "bench", urls["tcp"], "sleep", "ms=1", "-c", "4", "-t", "1s", "--json")
	expect(t, r, 0, "")
	os.WriteFile(before, []byte(r.stdout), 0o600)
	r = run(t, "", "bench", urls["tcp"], "error", "-d", `{"code":-32042,"message":"x"}`, "-c", "2", "-t", "1200ms", "--json", "--report", page, "--compare", before)
	expect(t, r, exitRPCError, "")
	os.WriteFile(now, []byte(r.stdout), 0o600)
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Timeline) < 5 || rep.Compare == nil || len(rep.Compare.Rows) != 7 || rep.Errors["-32042"] != rep.Requests {
		t.Fatalf("report: %d timeline points, compare %+v, errors %v of %d", len(rep.Timeline), rep.Compare, rep.Errors, rep.Requests)
	}
	var calls int64
	for _, p := range rep.Timeline {
		calls += p.Calls
	}
	if calls != rep.Requests {
		t.Fatalf("the timeline counts %d calls of %d", calls, rep.Requests)
	}
	if row := rep.Compare.Rows[0]; row.Metric != "throughput" || row.Now != rep.Throughput || row.Ratio <= 0 {
		t.Fatalf("compare row %+v", row)
	}
	if row := rep.Compare.Rows[6]; row.Metric != "error rate" || row.Before != 0 || row.Now != 1 || row.Verdict() != "worse" {
		t.Fatalf("from no errors to all: %+v, %s", row, row.Verdict())
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: no script, nothing fetched (src=, href=, url(), @import).
	if m := regexp.MustCompile(`(?i)<script|\bsrc=|\bhref=|url\(|@import|https?://`).Find(html); m != nil {
		t.Fatalf("the page refers elsewhere: %q", m)
	}
	if !strings.Contains(string(html), `default-src 'none'`) || strings.Count(string(html), "<svg") != 3 {
		t.Fatalf("the page lacks its policy or its three charts")
	}
	// The terminal shows the comparison too.
	r = run(t, "", "bench", urls["tcp"], "sleep", "ms=1", "-c", "2", "-n", "50", "--compare", before)
	expect(t, r, 0, "")
	for _, w := range []string{"compared with " + before, "throughput", "ratio", "×"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("the comparison lacks %q:\n%s", w, r.stdout)
		}
	}
	t.Run("browser", func(t *testing.T) {
		demo.NeedBrowser(t, browserDir)
		demo.BrowserScript(t, browserDir, "report.mjs", "--report", page, "--json", now, "--compare", before, "--screenshot", "out/bench-report.png")
	})
}

// TestBenchReportUsage checks that a bad --compare or --report is a usage
// error (exit 2) found before the run, and that no page is left behind.
func TestBenchReportUsage(t *testing.T) {
	dir := t.TempDir()
	notReport := filepath.Join(dir, "x.json")
	os.WriteFile(notReport, []byte(`{"a":1}`), 0o600)
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"--compare", filepath.Join(dir, "missing.json")}, "--compare"},
		{[]string{"--compare", notReport}, "is not the output of jrpc bench --json"},
		{[]string{"--report", filepath.Join(dir, "no", "such", "dir.html")}, "--report"},
	} {
		r := run(t, "", append([]string{"bench", urls["tcp"], "sum", "[1]", "-n", "100000"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.say) || r.stdout != "" {
			t.Errorf("bench %v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", c.args, r.code, r.stdout, r.stderr, c.say)
		}
	}
	page := filepath.Join(dir, "gone.html")
	r := run(t, "", "bench", urls["tcp"], "nope", "-n", "5", "--report", page)
	if _, err := os.Stat(page); r.code != exitRPCError || err == nil {
		t.Errorf("a run refused at once: exit %d, page left: %v", r.code, err == nil)
	}
}

// fakeRun is a report of a run of secs seconds whose calls took lat(i)
// for i in [0, n), as bench.report makes it (timeline points every 0.1 s,
// the last ending a little after secs, as a real run's does).
func fakeRun(secs float64, n int, lat func(i int) time.Duration) *benchReport {
	var h hist
	for i := range n {
		h.add(lat(i))
	}
	r := &benchReport{Requests: h.n, OK: h.n, DurationS: secs, Throughput: float64(h.n) / secs,
		LatencyMS: map[string]float64{"p50": ms(h.percentile(50)), "p99": ms(h.percentile(99)), "max": ms(h.max)},
		Histogram: histogramRows(&h, histRows), Buckets: histBuckets(&h), hist: &h}
	for t := 0.1; t < secs; t += 0.1 {
		r.Timeline = append(r.Timeline, timeRow{StartS: t - 0.1, EndS: t, Calls: 10, Throughput: 100, LatencyMS: latencyMS{P50: 1, P90: 2, P99: 3, Max: 4}})
	}
	r.Timeline[len(r.Timeline)-1].EndS = secs + 0.003
	return r
}

var (
	svgFigure = regexp.MustCompile(`(?s)<figure id="([a-z-]+)">(.*?)</figure>`)
	svgTick   = regexp.MustCompile(`<text x="([0-9.]+)" y="226" text-anchor="([a-z]+)">([^<]*)</text>`)
	svgBar    = regexp.MustCompile(`<rect class="(bar|bar-before)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)
)

// pageSVGs returns the page's charts by id.
func pageSVGs(t *testing.T, r *benchReport) map[string]string {
	t.Helper()
	var b strings.Builder
	if err := writeBenchPage(&b, r); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range svgFigure.FindAllStringSubmatch(b.String(), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// TestBenchPageAxes (issue 39): a 4 s run's time axis ends at 4 s, and
// the x-axis labels of every chart neither overlap nor leave the chart.
func TestBenchPageAxes(t *testing.T) {
	r := fakeRun(4, 3000, func(i int) time.Duration { return time.Duration(1+i*i%997) * 37 * time.Microsecond })
	r.compareWith("old.json", fakeRun(4, 2000, func(i int) time.Duration { return time.Duration(1+i%50) * 1500 * time.Microsecond }))
	for id, svg := range pageSVGs(t, r) {
		ticks := svgTick.FindAllStringSubmatch(svg, -1)
		if len(ticks) < 3 {
			t.Fatalf("%s: %d x-axis labels", id, len(ticks))
		}
		lastEnd := math.Inf(-1)
		for _, m := range ticks {
			at, _ := strconv.ParseFloat(m[1], 64)
			anchor := m[2]
			if anchor == "middle" {
				anchor = ""
			}
			from, to := chartTick{At: at, Label: m[3], Anchor: anchor}.extent()
			if from < lastEnd+labelGap-1e-9 || from < 0 || to > chartW {
				t.Errorf("%s: the label %q spans %.1f..%.1f, after one ending at %.1f (chart 0..%v)", id, m[3], from, to, lastEnd, chartW)
			}
			lastEnd = to
		}
		if id == "throughput" || id == "latency" {
			if last := ticks[len(ticks)-1][3]; last != "4s" {
				t.Errorf("%s: a 4 s run's time axis ends with the label %q", id, last)
			}
		}
	}
}

// TestBenchCompareHistogram (issue 39): with --compare, both runs'
// histograms share their ranges and are drawn in one chart, each range's
// two bars side by side (before, then now) in the same slot; an earlier
// run read back from its JSON keeps every call.
func TestBenchCompareHistogram(t *testing.T) {
	now := fakeRun(2, 4000, func(i int) time.Duration { return time.Duration(200+i%300) * time.Microsecond })
	old := fakeRun(2, 3000, func(i int) time.Duration { return time.Duration(1+i%40) * time.Millisecond })
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	var back benchReport
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	now.compareWith("old.json", &back)
	if len(now.Histogram) != histRows || len(now.Compare.Histogram) != histRows {
		t.Fatalf("%d and %d ranges, want %d each", len(now.Histogram), len(now.Compare.Histogram), histRows)
	}
	if histTotal(now.Histogram) != now.Requests || histTotal(now.Compare.Histogram) != old.Requests {
		t.Fatalf("the shared ranges hold %d and %d calls of %d and %d", histTotal(now.Histogram), histTotal(now.Compare.Histogram), now.Requests, old.Requests)
	}
	for i := range now.Histogram {
		if now.Histogram[i].LeMS != now.Compare.Histogram[i].LeMS {
			t.Fatalf("range %d ends at %v now and %v before", i, now.Histogram[i].LeMS, now.Compare.Histogram[i].LeMS)
		}
	}
	if first, last := now.Histogram[0].LeMS, now.Histogram[histRows-1].LeMS; first > 0.5 || last != 40 {
		t.Fatalf("the ranges run to %vms..%vms, want from under 0.5ms (now's fastest) to 40ms (before's slowest)", first, last)
	}
	svgs := pageSVGs(t, now)
	if _, ok := svgs["histogram-before"]; ok || len(svgs) != 3 {
		t.Fatalf("charts %v: want one histogram for both runs", slices.Sorted(maps.Keys(svgs)))
	}
	bars := svgBar.FindAllStringSubmatch(svgs["histogram"], -1)
	if len(bars) != 2*histRows {
		t.Fatalf("%d bars, want %d", len(bars), 2*histRows)
	}
	for i := 0; i < len(bars); i += 2 {
		b, n := bars[i], bars[i+1]
		bx, _ := strconv.ParseFloat(b[2], 64)
		bw, _ := strconv.ParseFloat(b[3], 64)
		nx, _ := strconv.ParseFloat(n[2], 64)
		slot := (chartW - plotLeft - plotRight) / histRows
		if b[1] != "bar-before" || n[1] != "bar" || nx < bx+bw-1e-6 || int((bx-plotLeft)/slot) != i/2 || int((nx-plotLeft)/slot) != i/2 {
			t.Fatalf("range %d: bars %q at %v (width %v) and %q at %v; want before then now, side by side in slot %d", i/2, b[1], bx, bw, n[1], nx, i/2)
		}
	}
}

// TestBenchRateOpenLoop (issue 41): --rate keeps its schedule and times
// each call from when it was due. One worker offered 100 calls/s of a
// 20 ms method falls behind by 10 ms a call, and the report says so (a
// closed loop would show 20 ms); 8 workers at 100/s make 50 calls in no
// less than the 0.49 s the schedule takes.
func TestBenchRateOpenLoop(t *testing.T) {
	var rep benchReport
	r := run(t, "", "bench", urls["tcp"], "sleep", "ms=20", "-c", "1", "--rate", "100", "-t", "1s", "--json")
	expect(t, r, 0, "")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// Call k is sent at k*20ms at the soonest and due at k*10ms: the median
	// call (k about 25) waited about 250 ms.
	if p50 := rep.LatencyMS["p50"]; p50 < 150 || rep.Requests > 55 || rep.Unsent < 40 || rep.Requests+rep.Unsent < 95 {
		t.Fatalf("behind schedule: p50 %vms (want ≥ 150ms), %d calls, %d unsent (want about 50 and 50)", p50, rep.Requests, rep.Unsent)
	}
	r = run(t, "", "bench", urls["tcp"], "sleep", "ms=1", "-c", "8", "--rate", "100", "-n", "50", "--json")
	expect(t, r, 0, "")
	rep = benchReport{}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 50 || rep.DurationS < 0.49 || rep.Unsent != 0 || rep.LatencyMS["min"] < 1 {
		t.Fatalf("50 calls at 100/s: %d calls in %vs, %d unsent, fastest %vms (want 50 in ≥ 0.49s, none unsent, none under 1ms)", rep.Requests, rep.DurationS, rep.Unsent, rep.LatencyMS["min"])
	}
}
