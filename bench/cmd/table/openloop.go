package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The OpenLoop families (BenchmarkOpenLoopTCP, BenchmarkOpenLoopHTTP) name
// their results IMPL/NNpct: latency percentiles at NN% of the
// implementation's peak. They get a table of their own.

// openLoopLevels are the load levels in the order the table shows them.
var openLoopLevels = []string{"25pct", "50pct", "90pct"}

// isOpenLoop reports whether a family is an open-loop one.
func isOpenLoop(name string) bool { return strings.HasPrefix(name, "OpenLoop") }

// renderOpenLoops prints every open-loop family of res, by name.
func renderOpenLoops(w io.Writer, res results) {
	for _, name := range slices.Sorted(maps.Keys(res)) {
		if isOpenLoop(name) {
			renderOpenLoop(w, name, res[name])
		}
	}
}

// openLoopRow prints one implementation's row: its peak, each level's
// medians, the calls left unsent and the passes.
func openLoopRow(w io.Writer, impl string, lvs map[string]map[string][]float64) {
	var peak, closed []float64 // every level reports the peak it is a share of
	for _, lv := range openLoopLevels {
		peak = append(peak, lvs[lv]["peak-calls/s"]...)
		closed = append(closed, lvs[lv]["closedpeak-calls/s"]...)
	}
	fmt.Fprintf(w, "| %s | %s", impl, format(median(peak)))
	if len(closed) > 0 { // the closed-loop peak it was lowered from (SustainedPeak)
		fmt.Fprintf(w, " (%s)", format(median(closed)))
	}
	fmt.Fprintf(w, " |")
	unsent, passes := 0.0, 0
	for _, lv := range openLoopLevels {
		m := lvs[lv]
		fmt.Fprintf(w, " %s / %s / %s |", format(median(m["p50-µs"])), format(median(m["p99-µs"])), format(median(m["p99.9-µs"])))
		for _, u := range m["unsent"] {
			unsent += u
		}
		passes = max(passes, len(m["p99-µs"]))
	}
	fmt.Fprintf(w, " %s | %d |\n", strconv.FormatFloat(unsent, 'f', 0, 64), passes)
}

// renderOpenLoop prints one open-loop family: per implementation its peak
// and, at each level, the medians over passes of p50, p99 and p99.9 (µs);
// then, per level, whether ours has the lowest p99.
func renderOpenLoop(w io.Writer, name string, byImpl map[string]map[string][]float64) {
	level := map[string]map[string]map[string][]float64{} // impl -> level -> metric
	for key, m := range byImpl {
		impl, lv, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		if level[impl] == nil {
			level[impl] = map[string]map[string][]float64{}
		}
		level[impl][lv] = m
	}
	fmt.Fprintf(w, "### %s: latency from each call's due time (µs) at a fixed offered load, 25%%, 50%% and 90%% of each implementation's own peak\n\n", name)
	fmt.Fprintf(w, "| impl | peak calls/s (closed loop) |")
	for _, lv := range openLoopLevels {
		fmt.Fprintf(w, " %s p50 / p99 / p99.9 |", strings.TrimSuffix(lv, "pct")+"%")
	}
	fmt.Fprintf(w, " unsent | passes |\n|---|---:|")
	for range openLoopLevels {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintf(w, "---:|---:|\n")
	names := slices.Sorted(maps.Keys(level))
	slices.SortStableFunc(names, func(a, b string) int { return orderOf(a) - orderOf(b) })
	for _, impl := range names {
		openLoopRow(w, impl, level[impl])
	}
	fmt.Fprintln(w)
	for _, lv := range openLoopLevels {
		best, bestP99 := "", math.Inf(1)
		for _, impl := range names {
			if impl == "raw" {
				continue
			}
			if v := median(level[impl][lv]["p99-µs"]); v < bestP99 {
				best, bestP99 = impl, v
			}
		}
		if best == "" {
			continue // no library measured at this level
		}
		verdict := "NOT met"
		if best == ours {
			verdict = "met"
		}
		fmt.Fprintf(w, "- %s, %s of peak: lowest p99 among the libraries: %s (%s µs); ours lowest: %s\n", name, strings.TrimSuffix(lv, "pct")+"%", best, format(bestP99), verdict)
	}
	fmt.Fprintln(w)
}

// orderOf is an implementation's place in the tables (unknown ones last).
func orderOf(impl string) int {
	if i := slices.Index(ordered, impl); i >= 0 {
		return i
	}
	return len(ordered)
}
