package main

import (
	"math"
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkTCPSeq/ours-2         	    5125	     40000 ns/op	     25000 calls/s	    1129 B/op	      23 allocs/op
BenchmarkTCPSeq/jrpc2-2        	    3303	     80000 ns/op	     12500 calls/s	    5770 B/op	     129 allocs/op
BenchmarkTCPSeq/raw-2          	   14204	     20000 ns/op	     50000 calls/s	      24 B/op	       1 allocs/op
BenchmarkTCPSeq/raw-2          	   14204	     25000 ns/op	     40000 calls/s	      24 B/op	       1 allocs/op
BenchmarkTCPSeq/jrpc2-2        	    3303	     50000 ns/op	     20000 calls/s	    5770 B/op	     129 allocs/op
BenchmarkTCPSeq/ours-2         	    5125	     50000 ns/op	     20000 calls/s	    1129 B/op	      21 allocs/op
BenchmarkTCPSeq/ours-2         	    5125	     50000 ns/op	     30000 calls/s	    1129 B/op	      19 allocs/op
BenchmarkTCPSeq/jrpc2          	    3303	     50000 ns/op	     10000 calls/s	    5770 B/op	     129 allocs/op
BenchmarkTCPSeq/raw-2          	   14204	     25000 ns/op	     60000 calls/s	      24 B/op	       1 allocs/op
BenchmarkIdleTCP/ours-2        	     847	    263048 ns/op	      4000 B/conn	         1.000 goroutines/conn
BenchmarkIdleTCP/geth-2        	     832	    510141 ns/op	     10000 B/conn	         3.000 goroutines/conn
BenchmarkIdleTCP/sourcegraph-2 	     832	    510141 ns/op	      9000 B/conn	         2.000 goroutines/conn
BenchmarkIdleTCP/raw-2         	    1071	    216844 ns/op	      2000 B/conn	         1.000 goroutines/conn
BenchmarkWSSeq/ours-2          	     100	     20000 ns/op	     50000 calls/s	    1400 B/op	       8 allocs/op
BenchmarkWSSeq/geth-2          	     100	     40000 ns/op	     25000 calls/s	    4800 B/op	      88 allocs/op
BenchmarkWSSeq/raw-2           	     100	     10000 ns/op	    100000 calls/s	      24 B/op	       1 allocs/op
BenchmarkStdioPar64/ours-2     	     100	     12500 ns/op	     80000 calls/s	     570 B/op	       6 allocs/op
BenchmarkStdioPar64/raw-2      	     100	      2500 ns/op	    400000 calls/s	      16 B/op	       1 allocs/op
PASS
`

func TestParseAndRatios(t *testing.T) {
	res := results{}
	if err := parse(strings.NewReader(sample), res); err != nil {
		t.Fatal(err)
	}
	got := res["TCPSeq"]["ours"]["calls/s"]
	if len(got) != 3 || got[0] != 25000 || got[2] != 30000 {
		t.Fatalf("ours calls/s = %v", got)
	}
	if n := len(res["TCPSeq"]["jrpc2"]["calls/s"]); n != 3 {
		t.Fatalf("a name without the -N suffix was not parsed: %d passes", n)
	}
	if m := median(got); m != 25000 {
		t.Fatalf("median = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Fatalf("even median = %v", m)
	}
	// Per-pass ratios to raw: 0.5, 0.5, 0.5.
	if r := ratio(got, res["TCPSeq"]["raw"]["calls/s"]); r != 0.5 {
		t.Fatalf("ratio to raw = %v", r)
	}
	// Against jrpc2 per pass: 2, 1, 3 -> median 2.
	best, name := bestPeer(scenarios[0], res["TCPSeq"])
	if name != "jrpc2" || len(best) != 3 {
		t.Fatalf("best peer %q %v", name, best)
	}
	if r := ratio(got, best); r != 2 {
		t.Fatalf("ratio to best peer = %v", r)
	}
	if !math.IsNaN(ratio(nil, best)) {
		t.Fatal("ratio of nothing should be NaN")
	}
}

func TestRender(t *testing.T) {
	res := results{}
	if err := parse(strings.NewReader(sample), res); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	render(&sb, res)
	out := sb.String()
	for _, want := range []string{
		"| ours | 25000 | 50000 | – | 1129 | 21.0 | 0.50× | 2.00× | 40% | 3 |",
		"× best peer (sourcegraph)",
		"| ours | 4000 | 1.00 | 2.00× | 0.44× | – | 1 |", // lower is better: 4000/9000
		"| TCPSeq | ≤ 20 allocs per call (client+server) | 21.0 | NOT met |",
		"| TCPSeq | ≥ 0.70× the raw TCP echo | 0.50× | NOT met |",
		"| TCPPar64 | ≥ 3× the best peer | – | not measured |",
		"### WSSeq: one WebSocket, one call at a time; limit: a coder/websocket echo",
		"| ours | 50000 | 20000 | – | 1400 | 8.00 | 0.50× | 2.00× | – | 1 |",
		"### StdioPar64: a pair of pipes, 64 concurrent callers",
		"| ours | 80000 | 12500 | – | 570 | 6.00 | 0.20× | – | – | 1 |",
		"| IdleTCP | ≤ 0.5× the best peer's memory | 0.44× | met |",
		"| Batch100 | ≥ 5× the best peer | – | not measured |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

const openLoopSample = `BenchmarkOpenLoopTCP/ours/25pct-2   1  4753 calls/s  21000 closedpeak-calls/s  4791 offered-calls/s  500 p50-µs  900 p99-µs  1000 p99.9-µs  19166 peak-calls/s  300 sendlag-p99-µs  0 unsent
BenchmarkOpenLoopTCP/ours/90pct-2   1  4753 calls/s  21000 closedpeak-calls/s  4791 offered-calls/s  700 p50-µs  3000 p99-µs  4000 p99.9-µs  19166 peak-calls/s  300 sendlag-p99-µs  0 unsent
BenchmarkOpenLoopTCP/geth/25pct-2   1  4753 calls/s  4791 offered-calls/s  400 p50-µs  800 p99-µs  900 p99.9-µs  27000 peak-calls/s  300 sendlag-p99-µs  0 unsent
BenchmarkOpenLoopTCP/geth/90pct-2   1  4753 calls/s  4791 offered-calls/s  900 p50-µs  5000 p99-µs  6000 p99.9-µs  27000 peak-calls/s  300 sendlag-p99-µs  2 unsent
BenchmarkOpenLoopTCP/raw/90pct-2    1  4753 calls/s  4791 offered-calls/s  100 p50-µs  200 p99-µs  300 p99.9-µs  29000 peak-calls/s  300 sendlag-p99-µs  0 unsent
`

// TestOpenLoopTable: the open-loop families get their own table, one row
// per implementation with its percentiles at each level, and a verdict per
// level on whether ours has the lowest p99 among the libraries (raw is
// not a library).
func TestOpenLoopTable(t *testing.T) {
	res := results{}
	if err := parse(strings.NewReader(openLoopSample), res); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	render(&b, res)
	out := b.String()
	for _, want := range []string{
		"### OpenLoopTCP:",
		"| ours | 19166 (21000) | 500 / 900 / 1000 | – / – / – | 700 / 3000 / 4000 | 0 | 1 |",
		"| geth | 27000 | 400 / 800 / 900 | – / – / – | 900 / 5000 / 6000 | 2 | 1 |",
		"25% of peak: lowest p99 among the libraries: geth (800 µs); ours lowest: NOT met",
		"90% of peak: lowest p99 among the libraries: ours (3000 µs); ours lowest: met",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not a known scenario") {
		t.Errorf("an open-loop family shown as an unknown one:\n%s", out)
	}
}
