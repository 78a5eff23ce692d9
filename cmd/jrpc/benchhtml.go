package main

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The --report page: one HTML file with its styles and charts (inline
// SVG) in it, no script, and a Content-Security-Policy that lets it load
// nothing from anywhere.

// chart is an SVG chart: lines or bars in a plot area, with axis ticks;
// coordinates are in the viewBox's units.
type chart struct {
	ID, Title, YUnit string
	W, H             float64
	Lines            []chartLine
	Bars             []chartBar
	XTicks, YTicks   []chartTick
	Legend           []chartLine
}

type chartLine struct {
	Name, Class string
	Points      string // "x,y x,y …"
	Dashed      bool
}

type chartBar struct {
	Class      string // "now" or "before"
	X, Y, W, H float64
	Title      string
}

type chartTick struct {
	At     float64
	Label  string
	Anchor string // the label's text-anchor: "" (middle), "start" or "end"
}

// The plot area inside a chart's viewBox.
const (
	chartW, chartH                           = 720.0, 240.0
	plotLeft, plotRight, plotTop, plotBottom = 64.0, 12.0, 12.0, 30.0
)

// series is one line's points in data units.
type series struct {
	name, class string
	dashed      bool
	xs, ys      []float64
}

// lineChart plots series against time (seconds) from 0 to the longest.
func lineChart(id, title, yUnit string, ss []series, yLabel func(float64) string) chart {
	var xMax, yMax float64
	for _, s := range ss {
		for i := range s.xs {
			xMax, yMax = max(xMax, s.xs[i]), max(yMax, s.ys[i])
		}
	}
	xStep, yStep := niceStep(xMax, 6), niceStep(yMax, 4)
	// The time axis ends where the longest run ends (a 4.02 s run is not
	// drawn on a 5 s axis); the latency or throughput axis at a round step.
	xTop, yTop := xMax, math.Max(yStep, math.Ceil(yMax/yStep)*yStep)
	if xTop <= 0 {
		xTop = xStep
	}
	c := chart{ID: id, Title: title, YUnit: yUnit, W: chartW, H: chartH}
	px := func(x float64) float64 { return plotLeft + x/xTop*(chartW-plotLeft-plotRight) }
	py := func(y float64) float64 { return chartH - plotBottom - y/yTop*(chartH-plotTop-plotBottom) }
	for _, s := range ss {
		pts := make([]string, len(s.xs))
		for i := range s.xs {
			pts[i] = fmt.Sprintf("%.1f,%.1f", px(s.xs[i]), py(s.ys[i]))
		}
		l := chartLine{Name: s.name, Class: s.class, Points: strings.Join(pts, " "), Dashed: s.dashed}
		c.Lines = append(c.Lines, l)
		c.Legend = append(c.Legend, l)
	}
	for i := 0; float64(i)*xStep <= xTop*(1+1e-9); i++ {
		x := float64(i) * xStep
		c.XTicks = append(c.XTicks, chartTick{At: px(x), Label: strconv.FormatFloat(x, 'g', 4, 64) + "s"})
	}
	for y := 0.0; y <= yTop+yStep/2; y += yStep {
		c.YTicks = append(c.YTicks, chartTick{At: py(y), Label: yLabel(y)})
	}
	return c
}

// niceStep is a round step (1, 2 or 5 times a power of ten) that cuts
// 0..top into about n parts.
func niceStep(top float64, n int) float64 {
	if top <= 0 {
		return 1
	}
	raw := top / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// histogramChart draws the latency histogram as bars of the share of
// calls in each latency range; with before (the earlier run's calls in
// the same ranges) each range has two bars side by side, before on the
// left. The x axis labels the ranges' upper bounds, leaving out a label
// that would run into the one before it.
func histogramChart(id, title string, rows, before []histRow) chart {
	c := chart{ID: id, Title: title, YUnit: "% of calls", W: chartW, H: chartH}
	now, was := histShares(rows), histShares(before)
	if len(rows) == 0 || now == nil && was == nil {
		return c
	}
	top := 0.0
	for _, v := range append(slices.Clone(now), was...) {
		top = max(top, v)
	}
	step := niceStep(top, 4)
	yTop := math.Max(step, math.Ceil(top/step)*step)
	plotW, plotH := chartW-plotLeft-plotRight, chartH-plotTop-plotBottom
	slot := plotW / float64(len(rows))
	bar := func(class string, x, pct float64, n int64, le float64) chartBar {
		h := pct / yTop * plotH
		title := fmt.Sprintf("≤ %s: %d calls (%.1f%%)", fmtMS(le), n, pct)
		if before != nil {
			title = class + " " + title
		}
		return chartBar{Class: class, X: x, Y: chartH - plotBottom - h, W: slot * 0.4, H: h, Title: title}
	}
	nowX := slot * 0.3 // alone, centred in its slot
	if before != nil {
		c.Legend = []chartLine{{Name: "before", Class: "bar-before"}, {Name: "now", Class: "bar"}}
		nowX = slot * 0.5
	}
	for i, r := range rows {
		x := plotLeft + float64(i)*slot
		if before != nil {
			c.Bars = append(c.Bars, bar("before", x+slot*0.1, shareAt(was, i), before[i].Count, r.LeMS))
		}
		c.Bars = append(c.Bars, bar("now", x+nowX, shareAt(now, i), r.Count, r.LeMS))
		t := chartTick{At: x + slot, Label: fmtMS(r.LeMS)}
		if i == len(rows)-1 {
			t.Anchor = "end"
		}
		c.XTicks = addLabel(c.XTicks, t)
	}
	for y := 0.0; y <= yTop+step/2; y += step {
		c.YTicks = append(c.YTicks, chartTick{At: chartH - plotBottom - y/yTop*plotH, Label: strconv.FormatFloat(y, 'g', 3, 64) + "%"})
	}
	return c
}

// histShares are the rows' shares of their calls in percent (nil for no
// calls).
func histShares(rows []histRow) []float64 {
	total := histTotal(rows)
	if total == 0 {
		return nil
	}
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = float64(r.Count) / float64(total) * 100
	}
	return out
}

func shareAt(shares []float64, i int) float64 {
	if i < len(shares) {
		return shares[i]
	}
	return 0
}

// addLabel appends t to the x-axis labels unless it would run into the
// one before it; the last label (anchored at the end) pushes out those it
// would run into instead, as the highest bound matters more.
func addLabel(ticks []chartTick, t chartTick) []chartTick {
	from, _ := t.extent()
	for len(ticks) > 0 {
		if _, lastEnd := ticks[len(ticks)-1].extent(); from >= lastEnd+labelGap {
			break
		}
		if t.Anchor != "end" {
			return ticks
		}
		ticks = ticks[:len(ticks)-1]
	}
	return append(ticks, t)
}

func histTotal(rows []histRow) int64 {
	var n int64
	for _, r := range rows {
		n += r.Count
	}
	return n
}

// labelGap is the least space between two x-axis labels, and labelChar
// the width of a label's character, in viewBox units (11px text).
const labelGap, labelChar = 6.0, 6.6

// extent is where an x-axis label's text starts and ends, by its anchor.
func (t chartTick) extent() (from, to float64) {
	w := float64(utf8.RuneCountInString(t.Label)) * labelChar
	switch t.Anchor {
	case "end":
		return t.At - w, t.At
	case "start":
		return t.At, t.At + w
	}
	return t.At - w/2, t.At + w/2
}

// timeSeries is one figure of a run's timeline as a series.
func timeSeries(r *benchReport, name, class string, dashed bool, y func(timeRow) float64) series {
	s := series{name: name, class: class, dashed: dashed}
	for _, row := range r.Timeline {
		if row.Calls == 0 && class != "throughput" {
			continue // no latency without calls
		}
		s.xs = append(s.xs, row.EndS)
		s.ys = append(s.ys, y(row))
	}
	return s
}

// pageCharts are the page's charts: this run's, the earlier one's beside.
func pageCharts(r *benchReport) (throughput, latency chart, histograms []chart) {
	tp := []series{timeSeries(r, "calls/s", "throughput", false, func(t timeRow) float64 { return t.Throughput })}
	lat := []series{
		timeSeries(r, "p50", "p50", false, func(t timeRow) float64 { return t.LatencyMS.P50 }),
		timeSeries(r, "p90", "p90", false, func(t timeRow) float64 { return t.LatencyMS.P90 }),
		timeSeries(r, "p99", "p99", false, func(t timeRow) float64 { return t.LatencyMS.P99 }),
		timeSeries(r, "max", "max", false, func(t timeRow) float64 { return t.LatencyMS.Max }),
	}
	if r.Compare == nil {
		histograms = []chart{histogramChart("histogram", "Latency histogram", r.Histogram, nil)}
	} else {
		histograms = []chart{histogramChart("histogram", "Latency histogram, before and now", r.Histogram, r.Compare.Histogram)}
		old := r.Compare.old
		tp = append(tp, timeSeries(old, "calls/s before", "throughput", true, func(t timeRow) float64 { return t.Throughput }))
		lat = append(lat,
			timeSeries(old, "p50 before", "p50", true, func(t timeRow) float64 { return t.LatencyMS.P50 }),
			timeSeries(old, "p99 before", "p99", true, func(t timeRow) float64 { return t.LatencyMS.P99 }))
	}
	throughput = lineChart("throughput", "Throughput over time", "calls/s", tp, func(y float64) string { return strconv.FormatFloat(y, 'f', -1, 64) })
	latency = lineChart("latency", "Latency percentiles over time", "ms", lat, fmtMS)
	return throughput, latency, histograms
}

// pageFigure is one figure of the summary.
type pageFigure struct {
	Metric, Text string
	Value        float64
}

func pageFigures(r *benchReport) []pageFigure {
	figs := []pageFigure{
		{"requests", strconv.FormatInt(r.Requests, 10), float64(r.Requests)},
		{"ok", strconv.FormatInt(r.OK, 10), float64(r.OK)},
		{"errors", strconv.FormatInt(r.Requests-r.OK, 10), float64(r.Requests - r.OK)},
		{"throughput", fmt.Sprintf("%.0f calls/s", r.Throughput), r.Throughput},
		{"duration", fmt.Sprintf("%.2fs", r.DurationS), r.DurationS},
	}
	for _, p := range []string{"p50", "p90", "p99", "max", "mean"} {
		figs = append(figs, pageFigure{p, fmtMS(r.LatencyMS[p]), r.LatencyMS[p]})
	}
	return figs
}

// pageSetting is one line of the run's settings.
type pageSetting struct{ Name, Value string }

func pageSettings(r *benchReport) []pageSetting {
	rate := "as fast as possible"
	if r.Rate > 0 {
		rate = strconv.FormatFloat(r.Rate, 'g', -1, 64) + " calls/s"
	}
	return []pageSetting{
		{"target", r.Target}, {"method", r.Method}, {"params", r.Params},
		{"workers (-c)", strconv.Itoa(r.Concurrency)}, {"connections", strconv.Itoa(r.Connections)},
		{"rate", rate}, {"started", r.Started}, {"jrpc", r.Version},
	}
}

// pageError is one row of the errors by code.
type pageError struct {
	Code  string
	Count int64
}

func pageErrors(r *benchReport) []pageError {
	var out []pageError
	for k, v := range r.Errors {
		out = append(out, pageError{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Count > out[j].Count || out[i].Count == out[j].Count && out[i].Code < out[j].Code
	})
	return out
}

var benchPage = template.Must(template.New("page").Funcs(template.FuncMap{
	"ratio": func(c compareRow) string {
		if math.IsNaN(c.Ratio) {
			return "—"
		}
		return fmt.Sprintf("%.2f×", c.Ratio)
	},
	"rawRatio": func(c compareRow) string {
		if math.IsNaN(c.Ratio) {
			return ""
		}
		return strconv.FormatFloat(c.Ratio, 'g', 6, 64)
	},
	"num":    func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) },
	"plural": plural,
}).Parse(benchPageHTML))

// writeBenchPage writes r as the --report page.
func writeBenchPage(w io.Writer, r *benchReport) error {
	tp, lat, hists := pageCharts(r)
	return benchPage.Execute(w, map[string]any{
		"R": r, "Figures": pageFigures(r), "Settings": pageSettings(r), "Errors": pageErrors(r),
		"Throughput": tp, "Latency": lat, "Histograms": hists,
	})
}

const benchPageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>jrpc bench: {{.R.Method}} on {{.R.Target}}</title>
<style>
:root { --fg: #1d2330; --muted: #667085; --line: #dde1e8; --ok: #1a7f37; --bad: #b42318; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: #f7f8fa; }
body { margin: 0 auto; padding: 1em 1.5em 3em; max-width: 1500px; }
h1 { font-size: 1.3em; margin: .2em 0; } h2 { font-size: 1.05em; margin: 1.4em 0 .4em; }
.muted { color: var(--muted); }
table { border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
td, th { padding: .25em .8em; border-bottom: 1px solid var(--line); text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.figures { display: flex; flex-wrap: wrap; gap: .6em; margin: .6em 0; }
.figure { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4em .9em; min-width: 7em; }
.figure .label { color: var(--muted); font-size: .85em; }
.figure .value { font-size: 1.25em; font-weight: 600; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .5em; flex: 1 1 620px; max-width: 900px; }
figcaption { font-weight: 600; }
svg { width: 100%; height: auto; display: block; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
svg .axis { stroke: #98a2b3; stroke-width: 1; }
svg .grid { stroke: var(--line); stroke-width: 1; }
svg polyline { fill: none; stroke-width: 2; }
svg .dashed { stroke-dasharray: 6 4; stroke-width: 1.5; opacity: .8; }
svg rect.bar { fill: #2856c5; } svg rect.bar-before { fill: #98a2b3; }
.throughput { stroke: #2856c5; } .p50 { stroke: #1a7f37; } .p90 { stroke: #9a6700; } .p99 { stroke: #b42318; } .max { stroke: #6941c6; }
.legend { list-style: none; display: flex; gap: 1.2em; padding: 0; margin: .2em 0; font-size: .9em; }
.legend li::before { content: ""; display: inline-block; width: 1.6em; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: .4em; }
.legend li.dashed::before { border-top-style: dashed; }
.legend .throughput::before { border-color: #2856c5; } .legend .p50::before { border-color: #1a7f37; } .legend .p90::before { border-color: #9a6700; }
.legend .p99::before { border-color: #b42318; } .legend .max::before { border-color: #6941c6; }
.legend .bar::before, .legend .bar-before::before { width: .9em; border-top-width: .9em; } .legend .bar::before { border-color: #2856c5; } .legend .bar-before::before { border-color: #98a2b3; }
.better { color: var(--ok); font-weight: 600; } .worse { color: var(--bad); font-weight: 600; }
</style>
</head>
<body>
<h1>jrpc bench: <code>{{.R.Method}}</code> on <code>{{.R.Target}}</code></h1>
<p class="muted">{{.R.Requests}} calls in {{printf "%.2f" .R.DurationS}}s from {{plural .R.Concurrency "worker"}} on {{plural .R.Connections "connection"}}{{if .R.Started}}, started {{.R.Started}}{{end}}</p>
<section id="summary" class="figures">
{{range .Figures}}<div class="figure" data-metric="{{.Metric}}" data-value="{{num .Value}}"><div class="label">{{.Metric}}</div><div class="value">{{.Text}}</div></div>
{{end}}</section>
{{with .R.Compare}}
<h2>Compared with {{.File}}{{if .Started}} <span class="muted">({{.Started}})</span>{{end}}</h2>
<table id="compare">
<tr><th>figure</th><th class="num">before</th><th class="num">now</th><th class="num">ratio (now / before)</th><th></th></tr>
{{range .Rows}}<tr data-metric="{{.Metric}}" data-ratio="{{rawRatio .}}"><td>{{.Metric}}</td><td class="num">{{.Unit .Before}}</td><td class="num">{{.Unit .Now}}</td><td class="num">{{ratio .}}</td><td class="{{.Verdict}}">{{.Verdict}}</td></tr>
{{end}}</table>
{{end}}
<div class="charts">
{{template "chart" .Throughput}}
{{template "chart" .Latency}}
{{range .Histograms}}{{template "chart" .}}{{end}}
</div>
<h2>Errors by code</h2>
{{if .Errors}}<table id="errors"><tr><th>code</th><th class="num">calls</th></tr>
{{range .Errors}}<tr data-code="{{.Code}}"><td>{{.Code}}</td><td class="num">{{.Count}}</td></tr>
{{end}}</table>
{{with .R.LastTransportError}}<p class="muted">last transport error: {{.}}</p>{{end}}
{{else}}<p id="errors" class="muted">none: every call succeeded</p>{{end}}
<h2>Settings</h2>
<table id="settings">
{{range .Settings}}{{if .Value}}<tr><th>{{.Name}}</th><td><code>{{.Value}}</code></td></tr>
{{end}}{{end}}</table>
</body>
</html>
{{define "chart"}}<figure id="{{.ID}}">
<figcaption>{{.Title}} <span class="muted">({{.YUnit}})</span></figcaption>
{{if .Legend}}<ul class="legend">{{range .Legend}}<li class="{{.Class}}{{if .Dashed}} dashed{{end}}">{{.Name}}</li>{{end}}</ul>{{end}}
<svg viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
{{range .YTicks}}<line class="grid" x1="64" x2="708" y1="{{.At}}" y2="{{.At}}"/><text x="58" y="{{.At}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<line class="axis" x1="{{.At}}" x2="{{.At}}" y1="210" y2="214"/><text x="{{.At}}" y="226" text-anchor="{{or .Anchor "middle"}}">{{.Label}}</text>
{{end}}<line class="axis" x1="64" x2="708" y1="210" y2="210"/><line class="axis" x1="64" x2="64" y1="12" y2="210"/>
{{range .Bars}}<rect class="{{if eq .Class "before"}}bar-before{{else}}bar{{end}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Lines}}<polyline class="{{.Class}}{{if .Dashed}} dashed{{end}}" points="{{.Points}}"><title>{{.Name}}</title></polyline>
{{end}}</svg>
</figure>{{end}}
`
