// Package echoratio is a second harness for issue 41's first point, built
// apart from the bench package's Impl/Client machinery so the two can be
// checked against each other: a plain newline echo and our TCP server,
// both sides in one process on loopback, one call at a time and 64
// callers on one connection, in interleaved passes of fixed duration.
//
//	go test -v ./echoratio -run TestInterleaved -args -echoratio.passes 30 -echoratio.dur 250ms
//	go test ./echoratio -run '^$' -bench 'Seq/ours' -cpuprofile ours.cpu
//
// TestInterleaved prints each pass's calls per second and the ratio of
// ours to the raw echo, then the medians of those per-pass ratios; beside
// them the same ratio by the process's CPU time per call.
package echoratio

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

var (
	passes  = flag.Int("echoratio.passes", 0, "interleaved passes TestInterleaved runs (0: skip it)")
	passDur = flag.Duration("echoratio.dur", time.Second, "how long each implementation runs in a pass")
)

const request = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"b":"hello"}}` + "\n"

type params struct {
	A int    `json:"a"`
	B string `json:"b"`
}

// caller makes one call; it is safe for concurrent use.
type caller func(ctx context.Context) error

// impl starts a server and a client on one loopback connection, for
// callers concurrent callers.
type impl struct {
	name  string
	start func(tb testing.TB, callers int) caller
}

var impls = []impl{{"raw", startRaw}, {"ours", startOurs}}

func listen(tb testing.TB) net.Listener {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l
}

// startRaw serves a newline echo (each line written back, flushed when
// no more input is buffered) and returns a client that writes the request
// line and reads its echo: on the caller's goroutine for one caller, else
// through a reader goroutine that answers the callers in order.
func startRaw(tb testing.TB, callers int) caller {
	l := listen(tb)
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				r, w := bufio.NewReader(nc), bufio.NewWriter(nc)
				for {
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					w.Write(line)
					if r.Buffered() == 0 && w.Flush() != nil {
						return
					}
				}
			}()
		}
	}()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	msg := []byte(request)
	if callers == 1 {
		r := bufio.NewReader(nc)
		return func(ctx context.Context) error {
			if _, err := nc.Write(msg); err != nil {
				return err
			}
			line, err := r.ReadSlice('\n')
			if err == nil && len(line) != len(request) {
				err = errors.New("short echo")
			}
			return err
		}
	}
	// Replies come in order: each caller queues a channel under the same
	// lock as its write, and one reader answers them in turn.
	var mu sync.Mutex
	queue := make(chan chan error, 1024)
	go func() {
		r := bufio.NewReader(nc)
		for {
			line, err := r.ReadSlice('\n')
			if err == nil && len(line) != len(request) {
				err = errors.New("short echo")
			}
			w, ok := <-queue
			if !ok {
				return
			}
			w <- err
			if err != nil {
				return
			}
		}
	}()
	pool := sync.Pool{New: func() any { return make(chan error, 1) }}
	return func(ctx context.Context) error {
		w := pool.Get().(chan error)
		mu.Lock()
		queue <- w
		_, err := nc.Write(msg)
		mu.Unlock()
		if err != nil {
			return err
		}
		err = <-w
		pool.Put(w)
		return err
	}
}

// startOurs serves echo with our Server over newline-framed TCP and
// returns a Call on one jsonrpc.Dial connection.
func startOurs(tb testing.TB, _ int) caller {
	l := listen(tb)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p params) (params, error) { return p, nil })
	srv := &jsonrpc.Server{Handler: mux}
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	c, err := jsonrpc.Dial(context.Background(), "tcp://"+l.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	in := params{A: 1, B: "hello"}
	return func(ctx context.Context) error {
		var out params
		if err := c.Call(ctx, "echo", &in, &out); err != nil {
			return err
		}
		if out != in {
			return errors.New("echo returned other params")
		}
		return nil
	}
}

// processCPU is the CPU time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rate runs call from callers goroutines for d and returns calls per second.
func rate(call caller, callers int, d time.Duration) (float64, error) {
	r, _, err := rateCPU(call, callers, d)
	return r, err
}

// rateCPU is rate that also returns the process's CPU time per call
// (client and server together), which a loaded machine disturbs less
// than the calls per second.
func rateCPU(call caller, callers int, d time.Duration) (float64, time.Duration, error) {
	ctx := context.Background()
	var n atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	end := start.Add(d)
	cpu0 := processCPU()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				if err := call(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return 0, 0, *p
	}
	calls := max(n.Load(), 1)
	return float64(calls) / time.Since(start).Seconds(), (processCPU() - cpu0) / time.Duration(calls), nil
}

// TestInterleaved runs -echoratio.passes passes; in each, every
// implementation runs one call at a time and then 64 callers, for
// -echoratio.dur each, the order reversed every other pass.
func TestInterleaved(t *testing.T) {
	if *passes == 0 {
		t.Skip("-echoratio.passes N runs it")
	}
	callers := map[string]caller{} // by name and number of callers
	for _, im := range impls {
		for _, n := range []int{1, 64} {
			key := fmt.Sprint(im.name, n)
			callers[key] = im.start(t, n)
			if _, err := rate(callers[key], n, 50*time.Millisecond); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
		}
	}
	ratios, cpuRatios := map[string][]float64{}, map[string][]float64{}
	for p := range *passes {
		order := slices.Clone(impls)
		if p%2 == 1 {
			slices.Reverse(order)
		}
		for _, mode := range []struct {
			name    string
			callers int
		}{{"seq", 1}, {"par64", 64}} {
			got, cpu := map[string]float64{}, map[string]time.Duration{}
			for _, im := range order {
				r, c, err := rateCPU(callers[fmt.Sprint(im.name, mode.callers)], mode.callers, *passDur)
				if err != nil {
					t.Fatalf("%s %s: %v", im.name, mode.name, err)
				}
				got[im.name], cpu[im.name] = r, c
			}
			ratio, cpuRatio := got["ours"]/got["raw"], float64(cpu["raw"])/float64(cpu["ours"])
			ratios[mode.name] = append(ratios[mode.name], ratio)
			cpuRatios[mode.name] = append(cpuRatios[mode.name], cpuRatio)
			t.Logf("pass %d %-5s raw %8.0f/s %v CPU/call  ours %8.0f/s %v CPU/call  ours/raw %.3f (by CPU %.3f)", p+1, mode.name, got["raw"], cpu["raw"], got["ours"], cpu["ours"], ratio, cpuRatio)
		}
	}
	for _, m := range []string{"seq", "par64"} {
		t.Logf("median ours/raw %-5s %.3f over %d passes (min %.3f, max %.3f); by CPU per call (raw's/ours) %.3f (min %.3f, max %.3f)", m, median(ratios[m]), len(ratios[m]), slices.Min(ratios[m]), slices.Max(ratios[m]),
			median(cpuRatios[m]), slices.Min(cpuRatios[m]), slices.Max(cpuRatios[m]))
	}
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkSeq and BenchmarkPar64 are the same runs as benchmarks, for
// profiles (-cpuprofile) of one implementation at a time.
func BenchmarkSeq(b *testing.B)   { benchAll(b, 1) }
func BenchmarkPar64(b *testing.B) { benchAll(b, 64) }

func benchAll(b *testing.B, callers int) {
	for _, im := range impls {
		b.Run(im.name, func(b *testing.B) {
			call := im.start(b, callers)
			ctx := context.Background()
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						if err := call(ctx); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// TestEchoes checks both implementations answer, alone and concurrently.
func TestEchoes(t *testing.T) {
	for _, im := range impls {
		for _, n := range []int{1, 8} {
			if _, err := rate(im.start(t, n), n, 20*time.Millisecond); err != nil {
				t.Fatalf("%s, %d callers: %v", im.name, n, err)
			}
		}
	}
}
