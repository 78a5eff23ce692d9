package main

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
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
	X, Y, W, H float64
	Title      string
}

type chartTick struct {
	At    float64
	Label string
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
	xTop, yTop := math.Max(xStep, math.Ceil(xMax/xStep)*xStep), math.Max(yStep, math.Ceil(yMax/yStep)*yStep)
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
	for x := 0.0; x <= xTop+xStep/2; x += xStep {
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
// calls in each latency range.
func histogramChart(id, title string, rows []histRow) chart {
	c := chart{ID: id, Title: title, YUnit: "% of calls", W: chartW, H: chartH}
	var total int64
	for _, r := range rows {
		total += r.Count
	}
	if total == 0 || len(rows) == 0 {
		return c
	}
	top := 0.0
	for _, r := range rows {
		top = max(top, float64(r.Count)/float64(total)*100)
	}
	step := niceStep(top, 4)
	yTop := math.Max(step, math.Ceil(top/step)*step)
	slot := (chartW - plotLeft - plotRight) / float64(len(rows))
	for i, r := range rows {
		share := float64(r.Count) / float64(total) * 100
		h := share / yTop * (chartH - plotTop - plotBottom)
		x := plotLeft + float64(i)*slot
		c.Bars = append(c.Bars, chartBar{X: x + slot*0.1, Y: chartH - plotBottom - h, W: slot * 0.8, H: h, Title: fmt.Sprintf("≤ %s: %d calls (%.1f%%)", fmtMS(r.LeMS), r.Count, share)})
		c.XTicks = append(c.XTicks, chartTick{At: x + slot/2, Label: "≤" + fmtMS(r.LeMS)})
	}
	for y := 0.0; y <= yTop+step/2; y += step {
		c.YTicks = append(c.YTicks, chartTick{At: chartH - plotBottom - y/yTop*(chartH-plotTop-plotBottom), Label: strconv.FormatFloat(y, 'g', 3, 64) + "%"})
	}
	return c
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
	histograms = []chart{histogramChart("histogram", "Latency histogram", r.Histogram)}
	if r.Compare != nil {
		old := r.Compare.old
		tp = append(tp, timeSeries(old, "calls/s before", "throughput", true, func(t timeRow) float64 { return t.Throughput }))
		lat = append(lat,
			timeSeries(old, "p50 before", "p50", true, func(t timeRow) float64 { return t.LatencyMS.P50 }),
			timeSeries(old, "p99 before", "p99", true, func(t timeRow) float64 { return t.LatencyMS.P99 }))
		histograms[0].Title = "Latency histogram, now"
		histograms = append(histograms, histogramChart("histogram-before", "Latency histogram, before", old.Histogram))
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
svg rect.bar { fill: #2856c5; }
.throughput { stroke: #2856c5; } .p50 { stroke: #1a7f37; } .p90 { stroke: #9a6700; } .p99 { stroke: #b42318; } .max { stroke: #6941c6; }
.legend { list-style: none; display: flex; gap: 1.2em; padding: 0; margin: .2em 0; font-size: .9em; }
.legend li::before { content: ""; display: inline-block; width: 1.6em; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: .4em; }
.legend li.dashed::before { border-top-style: dashed; }
.legend .throughput::before { border-color: #2856c5; } .legend .p50::before { border-color: #1a7f37; } .legend .p90::before { border-color: #9a6700; }
.legend .p99::before { border-color: #b42318; } .legend .max::before { border-color: #6941c6; }
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
{{end}}{{range .XTicks}}<text x="{{.At}}" y="226" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="64" x2="708" y1="210" y2="210"/><line class="axis" x1="64" x2="64" y1="12" y2="210"/>
{{range .Bars}}<rect class="bar" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Lines}}<polyline class="{{.Class}}{{if .Dashed}} dashed{{end}}" points="{{.Points}}"><title>{{.Name}}</title></polyline>
{{end}}</svg>
</figure>{{end}}
`
