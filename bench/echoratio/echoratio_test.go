// Package echoratio is a second harness for issue 41's first point, built
// apart from the bench package's Impl/Client machinery so the two can be
// checked against each other: a plain newline echo and our TCP server,
// both sides in one process on loopback, one call at a time and 64
// callers on one connection, in interleaved passes of fixed duration.
//
//	go test -run TestInterleaved -echoratio.passes 6 ./echoratio
//	go test -run '^$' -bench 'Seq/ours' -cpuprofile ours.cpu ./echoratio
//
// TestInterleaved prints each pass's calls per second and the ratio of
// ours to the raw echo, then the medians of those per-pass ratios.
package echoratio

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"net"
	"slices"
	"sync"
	"sync/atomic"
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

// impl starts a server and a client on one loopback connection.
type impl struct {
	name  string
	start func(tb testing.TB) caller
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
// line and waits for its echo, in order.
func startRaw(tb testing.TB) caller {
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
	msg := []byte(request)
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
func startOurs(tb testing.TB) caller {
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

// rate runs call from callers goroutines for d and returns calls per second.
func rate(call caller, callers int, d time.Duration) (float64, error) {
	ctx := context.Background()
	var n atomic.Int64
	var firstErr atomic.Pointer[error]
	start := time.Now()
	end := start.Add(d)
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
		return 0, *p
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}

// TestInterleaved runs -echoratio.passes passes; in each, every
// implementation runs one call at a time and then 64 callers, for
// -echoratio.dur each, the order reversed every other pass.
func TestInterleaved(t *testing.T) {
	if *passes == 0 {
		t.Skip("-echoratio.passes N runs it")
	}
	callers := map[string]caller{}
	for _, im := range impls {
		callers[im.name] = im.start(t)
		if _, err := rate(callers[im.name], 1, 50*time.Millisecond); err != nil {
			t.Fatalf("%s: %v", im.name, err)
		}
	}
	ratios := map[string][]float64{}
	for p := range *passes {
		order := slices.Clone(impls)
		if p%2 == 1 {
			slices.Reverse(order)
		}
		for _, mode := range []struct {
			name    string
			callers int
		}{{"seq", 1}, {"par64", 64}} {
			got := map[string]float64{}
			for _, im := range order {
				r, err := rate(callers[im.name], mode.callers, *passDur)
				if err != nil {
					t.Fatalf("%s %s: %v", im.name, mode.name, err)
				}
				got[im.name] = r
			}
			ratio := got["ours"] / got["raw"]
			ratios[mode.name] = append(ratios[mode.name], ratio)
			t.Logf("pass %d %-5s raw %8.0f/s  ours %8.0f/s  ours/raw %.3f", p+1, mode.name, got["raw"], got["ours"], ratio)
		}
	}
	for _, m := range []string{"seq", "par64"} {
		t.Logf("median ours/raw %-5s %.3f over %d passes (min %.3f, max %.3f)", m, median(ratios[m]), len(ratios[m]), slices.Min(ratios[m]), slices.Max(ratios[m]))
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
			call := im.start(b)
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
		call := im.start(t)
		if _, err := rate(call, 8, 20*time.Millisecond); err != nil {
			t.Fatalf("%s: %v", im.name, err)
		}
	}
}
