package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/internal/browsertest"
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
	if !strings.Contains(string(html), `default-src 'none'`) || strings.Count(string(html), "<svg") != 4 {
		t.Fatalf("the page lacks its policy or its four charts")
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
		browsertest.Need(t, browserDir)
		browsertest.Script(t, browserDir, "report.mjs", "--report", page, "--json", now, "--compare", before, "--screenshot", "out/bench-report.png")
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
