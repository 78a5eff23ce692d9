package bench

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	reverse  = flag.Bool("bench.reverse", false, "run the implementations in reverse order (run.sh alternates passes)")
	idleMax  = flag.Int("bench.idlemax", 5000, "most connections an Idle benchmark opens (b.N is the count; use -benchtime=2000x)")
	idleProf = flag.String("bench.idleprofile", "", "write a heap profile of the server while its connections idle, to this file prefix (+ scenario name)")
	idleWait = flag.Duration("bench.idlewait", 3*time.Second, "how long the Idle benchmarks let the connections idle before measuring")
)

const (
	concurrency = 64
	batchLen    = 100
	bigSize     = 1 << 20
)

// impls returns the implementations that keep accepts, in this pass's order.
func impls(keep func(*Impl) bool) []*Impl {
	var out []*Impl
	for _, im := range Impls() {
		if keep(im) {
			out = append(out, im)
		}
	}
	if *reverse {
		slices.Reverse(out)
	}
	return out
}

func hasTCP(im *Impl) bool   { return im.ServeTCP != nil }
func hasHTTP(im *Impl) bool  { return im.HTTPHandler != nil }
func hasWS(im *Impl) bool    { return im.WSHandler != nil && im.DialWS != nil }
func hasStdio(im *Impl) bool { return im.ServeStdio != nil }

// startTCP serves im on a loopback listener and dials one client to it.
func startTCP(tb testing.TB, im *Impl, raw Params) Client {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	stop := im.ServeTCP(l)
	c, err := im.DialTCP(context.Background(), l.Addr().String(), raw)
	if err != nil {
		stop()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(); stop() })
	return c
}

// startHTTP serves im with a real loopback HTTP server and dials one client.
func startHTTP(tb testing.TB, im *Impl, raw Params) Client {
	tb.Helper()
	hc := HTTPClient()
	return startHTTPServer(tb, im, im.HTTPHandler, func(url string) (Client, error) {
		return im.DialHTTP(context.Background(), url, hc, raw)
	}, hc.CloseIdleConnections)
}

// startWS serves im's WebSocket handler on a loopback HTTP server and dials
// one client to it.
func startWS(tb testing.TB, im *Impl, raw Params) Client {
	tb.Helper()
	return startHTTPServer(tb, im, im.WSHandler, func(url string) (Client, error) {
		return im.DialWS(context.Background(), "ws"+strings.TrimPrefix(url, "http")+"/", raw)
	}, func() {})
}

// startHTTPServer serves the handler on a loopback HTTP server and dials a
// client to its URL; at cleanup the client closes, then after closed the
// server and the handler stop.
func startHTTPServer(tb testing.TB, im *Impl, handler func() (http.Handler, func()), dial func(url string) (Client, error), closed func()) Client {
	tb.Helper()
	h, stop := handler()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = countConns
	ts.Start()
	c, err := dial(ts.URL)
	if err != nil {
		ts.Close()
		stop()
		tb.Fatalf("%s: dial: %v", im.Name, err)
	}
	tb.Cleanup(func() {
		c.Close()
		closed()
		ts.CloseClientConnections()
		ts.Close()
		stop()
	})
	return c
}

// httpConns counts the connections the benchmarks' HTTP servers accepted.
var httpConns atomic.Int64

func countConns(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		httpConns.Add(1)
	}
}

// startStdio serves im on one end of a pair of pipes (see Pipes) and makes
// a client on the other end.
func startStdio(tb testing.TB, im *Impl, raw Params) Client {
	tb.Helper()
	server, client, err := Pipes()
	if err != nil {
		tb.Fatal(err)
	}
	stop := im.ServeStdio(server)
	c, err := im.DialStdio(context.Background(), client, raw)
	if err != nil {
		client.Close()
		stop()
		tb.Fatalf("%s: client on pipes: %v", im.Name, err)
	}
	tb.Cleanup(func() {
		c.Close()
		client.Close()
		stop()
	})
	return c
}

// warmUp makes one call and checks it before the timing starts.
func warmUp(b *testing.B, c Client, in Params) {
	b.Helper()
	var out Params
	if err := c.Echo(context.Background(), &in, &out); err != nil {
		b.Fatalf("warm-up call failed: %v", err)
	}
	if err := checkEcho(&in, &out); err != nil {
		b.Fatal(err)
	}
}

// runSeq makes b.N calls one after the other.
func runSeq(b *testing.B, c Client, in Params) {
	warmUp(b, c, in)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		var out Params
		if err := c.Echo(ctx, &in, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per operation since since
// (client and server together, as the process holds both): on a loaded
// machine it moves less than the wall-clock figures.
func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(processCPU()-since)/float64(b.N), "cpu-ns/op")
}

// runPar makes b.N calls from 64 goroutines sharing c.
func runPar(b *testing.B, c Client, in Params) {
	warmUp(b, c, in)
	if cc, ok := c.(interface{ Concurrent() }); ok {
		cc.Concurrent()
	}
	ctx := context.Background()
	var next atomic.Int64
	var firstErr atomic.Pointer[error]
	n := int64(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			var out Params
			for next.Add(1) <= n {
				if err := c.Echo(ctx, &in, &out); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportCPU(b, cpu)
	if p := firstErr.Load(); p != nil {
		b.Fatal(*p)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// small runs run (runSeq or runPar) with SmallParams on every
// implementation that has the transport start starts.
func small(b *testing.B, has func(*Impl) bool, start func(testing.TB, *Impl, Params) Client, run func(*testing.B, Client, Params)) {
	for _, im := range impls(has) {
		b.Run(im.Name, func(b *testing.B) { run(b, start(b, im, SmallParams), SmallParams) })
	}
}

// BenchmarkTCPSeq: one loopback TCP connection, one call at a time.
func BenchmarkTCPSeq(b *testing.B) {
	small(b, hasTCP, startTCP, runSeq)
	b.Run("json", func(b *testing.B) { runSeq(b, &JSONWork{}, SmallParams) })
}

// BenchmarkTCPPar64: the same connection shared by 64 concurrent callers.
func BenchmarkTCPPar64(b *testing.B) {
	small(b, hasTCP, startTCP, runPar)
}

// BenchmarkHTTPSeq: one HTTP POST per call, one call at a time.
func BenchmarkHTTPSeq(b *testing.B) {
	small(b, hasHTTP, startHTTP, runSeq)
}

// BenchmarkHTTPPar64: one HTTP POST per call, 64 concurrent callers sharing
// one client (and its pool of keep-alive connections).
func BenchmarkHTTPPar64(b *testing.B) {
	small(b, hasHTTP, startHTTP, runPar)
}

// BenchmarkWSSeq: one WebSocket, one call at a time.
func BenchmarkWSSeq(b *testing.B) {
	small(b, hasWS, startWS, runSeq)
}

// BenchmarkWSPar64: the same WebSocket shared by 64 concurrent callers.
func BenchmarkWSPar64(b *testing.B) {
	small(b, hasWS, startWS, runPar)
}

// BenchmarkStdioSeq: a server on a pair of pipes, as a child process's
// standard input and output, one call at a time.
func BenchmarkStdioSeq(b *testing.B) {
	small(b, hasStdio, startStdio, runSeq)
}

// BenchmarkStdioPar64: the same pipes, 64 concurrent callers.
func BenchmarkStdioPar64(b *testing.B) {
	small(b, hasStdio, startStdio, runPar)
}

// BenchmarkBatch100: a batch of 100 echo calls in one message, over TCP.
func BenchmarkBatch100(b *testing.B) {
	in := make([]Params, batchLen)
	for i := range in {
		in[i] = Params{A: i, B: "hello"}
	}
	run := func(b *testing.B, c Client) {
		ctx := context.Background()
		out := make([]Params, batchLen)
		if err := c.Batch(ctx, in, out); err != nil {
			if errors.Is(err, ErrUnsupported) {
				b.Skip(err)
			}
			b.Fatalf("warm-up batch failed: %v", err)
		}
		if !slices.Equal(in, out) {
			b.Fatal("batch results differ from params")
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			clear(out)
			if err := c.Batch(ctx, in, out); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N*batchLen)/b.Elapsed().Seconds(), "req/s")
	}
	for _, im := range impls(func(im *Impl) bool { return hasTCP(im) && im.Name != "sourcegraph" && im.Name != "raw" }) {
		b.Run(im.Name, func(b *testing.B) { run(b, startTCP(b, im, SmallParams)) })
	}
	b.Run("json", func(b *testing.B) { run(b, &JSONWork{}) })
}

// BenchmarkEcho1MiB: echo of params whose string is 1 MiB, over TCP.
func BenchmarkEcho1MiB(b *testing.B) {
	big := BigParams(bigSize)
	run := func(b *testing.B, c Client) {
		b.SetBytes(bigSize)
		runSeq(b, c, big)
	}
	for _, im := range impls(hasTCP) {
		b.Run(im.Name, func(b *testing.B) { run(b, startTCP(b, im, big)) })
	}
	b.Run("json", func(b *testing.B) { run(b, &JSONWork{}) })
}
