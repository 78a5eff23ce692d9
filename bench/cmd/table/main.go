// Command table reads `go test -bench` output (files named as arguments,
// or standard input) holding one or more passes of the bench module's
// benchmarks and prints, per scenario, a Markdown table of medians over the
// passes: throughput, ns/op, B/op, allocs/op, and each implementation as a
// ratio of the raw limit and of the best peer. It ends with the targets of
// issue 20 and whether our implementation meets them.
//
// Ratios are medians of per-pass ratios (the k-th result of one
// implementation against the k-th of the other), which cancels the drift of
// a noisy machine better than a ratio of medians; the spread column is
// (max-min)/median of the throughput over the passes.
//
// Usage:
//
//	go run ./cmd/table results/bench.txt
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// scenario says how to read one benchmark family.
type scenario struct {
	name   string
	metric string // the headline metric
	lower  bool   // lower is better (memory)
	limit  string // the implementation that is the limit
	cols   []string
	title  string
}

var scenarios = []scenario{
	throughput("TCPSeq", "calls/s", "raw", "one TCP connection, one call at a time"),
	throughput("TCPPar64", "calls/s", "raw", "one TCP connection, 64 concurrent callers"),
	throughput("HTTPSeq", "calls/s", "raw", "HTTP POST per call, sequential"),
	throughput("HTTPPar64", "calls/s", "raw", "HTTP POST per call, 64 concurrent clients"),
	throughput("WSSeq", "calls/s", "raw", "one WebSocket, one call at a time; limit: a coder/websocket echo"),
	throughput("WSPar64", "calls/s", "raw", "one WebSocket, 64 concurrent callers; limit: a coder/websocket echo"),
	throughput("StdioSeq", "calls/s", "raw", "a pair of pipes (a child's standard input and output), one call at a time"),
	throughput("StdioPar64", "calls/s", "raw", "a pair of pipes, 64 concurrent callers"),
	throughput("Batch100", "req/s", "json", "batch of 100 echo calls in one message (TCP); limit: encoding/json alone"),
	throughput("Echo1MiB", "MB/s", "raw", "echo of a 1 MiB string (TCP)"),
	throughput("MCPSeq", "calls/s", "http", "MCP tools/call over Streamable HTTP, small result, one at a time; limit: our plain HTTP on the same handler"),
	throughput("MCPPar8", "calls/s", "http", "MCP tools/call over Streamable HTTP, small result, 8 workers; limit: our plain HTTP"),
	throughput("MCPPar64", "calls/s", "http", "MCP tools/call over Streamable HTTP, small result, 64 workers; limit: our plain HTTP"),
	throughput("MCP100KiBSeq", "calls/s", "http", "MCP tools/call over Streamable HTTP, 100 KiB result, one at a time; limit: our plain HTTP"),
	throughput("MCP100KiBPar8", "calls/s", "http", "MCP tools/call over Streamable HTTP, 100 KiB result, 8 workers; limit: our plain HTTP"),
	{name: "IdleTCP", metric: "B/conn", lower: true, limit: "raw", cols: []string{"B/conn", "goroutines/conn"},
		title: "server memory per idle TCP connection (lower is better)"},
	{name: "IdleWS", metric: "B/conn", lower: true, limit: "raw", cols: []string{"B/conn", "goroutines/conn"},
		title: "server memory per idle WebSocket connection (lower is better)"},
	{name: "IdleScale", metric: "B/conn", lower: true, cols: []string{"B/conn", "stackB/conn", "RSS-B/conn", "goroutines/conn", "conns/s"},
		title: "idle TCP connections by count: server heap+stack and RSS per connection, accept rate (connect and first call) of 8 dialers"},
}

// throughput is a scenario measured in unit per second (higher is better).
func throughput(name, unit, limit, title string) scenario {
	return scenario{name: name, metric: unit, limit: limit, cols: throughputCols(unit), title: title}
}

func throughputCols(unit string) []string {
	return []string{unit, "ns/op", "cpu-ns/op", "B/op", "allocs/op"}
}

var (
	peers   = []string{"jrpc2", "sourcegraph", "geth", "mcpsdk"}
	ours    = "ours"
	lineRE  = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	ordered = []string{"ours", "jrpc2", "sourcegraph", "geth", "mcpsdk", "raw", "json", "http"}
)

// results holds, per scenario and implementation, each metric's values in
// pass order.
type results map[string]map[string]map[string][]float64

func parse(r io.Reader, res results) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := lineRE.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		scen, impl, ok := strings.Cut(m[1], "/")
		if !ok {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			if res[scen] == nil {
				res[scen] = map[string]map[string][]float64{}
			}
			if res[scen][impl] == nil {
				res[scen][impl] = map[string][]float64{}
			}
			res[scen][impl][f[i+1]] = append(res[scen][impl][f[i+1]], v)
		}
	}
	return sc.Err()
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratio is the median over passes of a[k]/b[k].
func ratio(a, b []float64) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return math.NaN()
	}
	r := make([]float64, n)
	for k := range n {
		r[k] = a[k] / b[k]
	}
	return median(r)
}

// bestPeer returns, per pass, the best peer value, and the name of the best
// peer by median.
func bestPeer(sc scenario, byImpl map[string]map[string][]float64) ([]float64, string) {
	var best []float64
	bestName, bestMed := "", math.NaN()
	for _, p := range peers {
		v := byImpl[p][sc.metric]
		if len(v) == 0 {
			continue
		}
		med := median(v)
		if bestName == "" || better(sc, med, bestMed) {
			bestName, bestMed = p, med
		}
		if best == nil {
			best = slices.Clone(v)
			continue
		}
		for k := range min(len(best), len(v)) {
			if better(sc, v[k], best[k]) {
				best[k] = v[k]
			}
		}
		best = best[:min(len(best), len(v))]
	}
	return best, bestName
}

func better(sc scenario, a, b float64) bool {
	if sc.lower {
		return a < b
	}
	return a > b
}

func format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func formatRatio(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}

// implsOf lists the implementations of a scenario, known ones first.
func implsOf(byImpl map[string]map[string][]float64) []string {
	var names []string
	for _, n := range ordered {
		if byImpl[n] != nil {
			names = append(names, n)
		}
	}
	var extra []string
	for n := range byImpl {
		if !slices.Contains(ordered, n) {
			extra = append(extra, n)
		}
	}
	slices.Sort(extra)
	return append(names, extra...)
}

// target is one of issue 20's targets for our implementation.
type target struct {
	scenario string
	what     string
	value    func(rows map[string]row) float64
	ok       func(float64) bool
	show     func(float64) string
}

type row struct {
	vsLimit, vsPeer float64
	medians         map[string]float64
}

var targets = []target{
	{"TCPSeq", "≥ 0.70× the raw TCP echo", vsLimit, atLeast(0.70), formatRatio},
	{"TCPSeq", "≤ 20 allocs per call (client+server)", medianOf("allocs/op"), atMost(20), format},
	{"TCPPar64", "≥ 3× the best peer", vsPeer, atLeast(3), formatRatio},
	{"TCPPar64", "≥ 0.70× the raw TCP echo", vsLimit, atLeast(0.70), formatRatio},
	{"HTTPSeq", "≥ 0.90× the net/http echo", vsLimit, atLeast(0.90), formatRatio},
	{"HTTPPar64", "≥ 0.90× the net/http echo", vsLimit, atLeast(0.90), formatRatio},
	{"Batch100", "≥ 5× the best peer", vsPeer, atLeast(5), formatRatio},
	{"Echo1MiB", "≥ 15× the best peer", vsPeer, atLeast(15), formatRatio},
	{"MCPPar8", "≥ 5× the MCP Go SDK", vsPeer, atLeast(5), formatRatio},
	{"MCPSeq", "within 1.5× of our plain HTTP", vsLimit, atLeast(1 / 1.5), formatRatio},
	{"MCPPar8", "within 1.5× of our plain HTTP", vsLimit, atLeast(1 / 1.5), formatRatio},
	{"MCPPar64", "within 1.5× of our plain HTTP", vsLimit, atLeast(1 / 1.5), formatRatio},
	{"IdleTCP", "≤ 0.5× the best peer's memory", vsPeer, atMost(0.5), formatRatio},
	{"IdleWS", "≤ 0.5× the best peer's memory", vsPeer, atMost(0.5), formatRatio},
}

func vsPeer(rows map[string]row) float64  { return rows[ours].vsPeer }
func vsLimit(rows map[string]row) float64 { return rows[ours].vsLimit }
func medianOf(metric string) func(map[string]row) float64 {
	return func(rows map[string]row) float64 { return rows[ours].medians[metric] }
}
func atLeast(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
func atMost(x float64) func(float64) bool  { return func(v float64) bool { return v <= x } }

func render(w io.Writer, res results) {
	all := map[string]map[string]row{}
	for _, sc := range append(slices.Clone(scenarios), extraScenarios(res)...) {
		if byImpl := res[sc.name]; byImpl != nil {
			all[sc.name] = renderScenario(w, sc, byImpl)
		}
	}
	renderOpenLoops(w, res)
	renderTargets(w, all)
}

// extraScenarios are the families of res no scenario knows: shown with
// whatever metrics they have, no ratios.
func extraScenarios(res results) []scenario {
	known := map[string]bool{}
	for _, sc := range scenarios {
		known[sc.name] = true
	}
	var extra []scenario
	for name, byImpl := range res {
		if known[name] || isOpenLoop(name) {
			continue
		}
		var cols []string
		for _, impl := range byImpl {
			for m := range impl {
				if !slices.Contains(cols, m) {
					cols = append(cols, m)
				}
			}
		}
		slices.Sort(cols)
		extra = append(extra, scenario{name: name, metric: cols[0], cols: cols, title: "(not a known scenario)"})
	}
	slices.SortFunc(extra, func(a, b scenario) int { return strings.Compare(a.name, b.name) })
	return extra
}

// renderScenario writes one family's table and returns its rows by
// implementation, for the targets.
func renderScenario(w io.Writer, sc scenario, byImpl map[string]map[string][]float64) map[string]row {
	limit := byImpl[sc.limit][sc.metric]
	best, bestName := bestPeer(sc, byImpl)
	fmt.Fprintf(w, "### %s: %s\n\n| impl |", sc.name, sc.title)
	for _, c := range sc.cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, " × limit (%s) | × best peer (%s) | spread | passes |\n|---|", cmp.Or(sc.limit, "–"), cmp.Or(bestName, "–"))
	for range sc.cols {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintf(w, "---:|---:|---:|---:|\n")
	rows := map[string]row{}
	for _, impl := range implsOf(byImpl) {
		vals := byImpl[impl]
		r := row{medians: map[string]float64{}}
		for m, v := range vals {
			r.medians[m] = median(v)
		}
		main := vals[sc.metric]
		r.vsLimit, r.vsPeer = ratio(main, limit), ratio(main, best)
		rows[impl] = r
		fmt.Fprintf(w, "| %s |", impl)
		for _, c := range sc.cols {
			fmt.Fprintf(w, " %s |", format(median(vals[c])))
		}
		fmt.Fprintf(w, " %s | %s | %s | %d |\n", formatRatio(r.vsLimit), formatRatio(r.vsPeer), spreadText(main), len(main))
	}
	fmt.Fprintln(w)
	return rows
}

// spreadText is (max−min)/median of the passes, as a percentage.
func spreadText(v []float64) string {
	if len(v) < 2 {
		return "–"
	}
	spread := (slices.Max(v) - slices.Min(v)) / median(v)
	if math.IsNaN(spread) {
		return "–"
	}
	return strconv.FormatFloat(100*spread, 'f', 0, 64) + "%"
}

// renderTargets writes each target's verdict for ours.
func renderTargets(w io.Writer, all map[string]map[string]row) {
	fmt.Fprintf(w, "### Targets (issues 20 and 31), ours\n\n| scenario | target | measured | |\n|---|---|---:|---|\n")
	for _, t := range targets {
		rows, ok := all[t.scenario]
		if !ok || rows[ours].medians == nil {
			fmt.Fprintf(w, "| %s | %s | – | not measured |\n", t.scenario, t.what)
			continue
		}
		v := t.value(rows)
		verdict := "NOT met"
		if math.IsNaN(v) {
			verdict = "no comparison"
		} else if t.ok(v) {
			verdict = "met"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", t.scenario, t.what, t.show(v), verdict)
	}
}

func main() {
	res := results{}
	if len(os.Args) < 2 {
		if err := parse(os.Stdin, res); err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(1)
		}
	}
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(1)
		}
		err = parse(f, res)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "table:", err)
			os.Exit(1)
		}
	}
	if len(res) == 0 {
		fmt.Fprintln(os.Stderr, "table: no benchmark results in the input")
		os.Exit(1)
	}
	render(os.Stdout, res)
}
