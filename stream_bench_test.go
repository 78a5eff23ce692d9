package jsonrpc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// heapPeak samples the heap in use (objects, and the free space of spans
// holding some: HeapInuse) every millisecond, without stopping the world,
// and reports its peak.
type heapPeak struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak uint64
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{stop: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			h.peak = max(h.peak, samples[0].Value.Uint64()+samples[1].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// done stops sampling and returns the peak, in MiB.
func (h *heapPeak) done() float64 {
	close(h.stop)
	h.wg.Wait()
	return float64(h.peak) / (1 << 20)
}

// streamBenchParams: 1 MiB per call, in elements of about 1 KiB.
var streamBenchParams = streamParams{N: 1024, Size: 1000}

// BenchmarkStreamHTTP serves and consumes 1 MiB per op over HTTP: the
// handler returns a Stream, the client reads it with CallIter; the body
// is gzipped (our client accepts gzip, as net/http's does). Server and
// client share the process, so peak-heap-MiB bounds both heaps; wire-B/op
// is the body's bytes as sent. With -benchtime=1024x it is a 1 GiB
// result served and consumed.
func BenchmarkStreamHTTP(b *testing.B) { benchStreamHTTP(b, newStreamServer()) }

// BenchmarkStreamHTTPPlain is BenchmarkStreamHTTP with the server's
// compression off (HTTPCompressMinSize -1): what gzip costs and saves.
func BenchmarkStreamHTTPPlain(b *testing.B) {
	srv := newStreamServer()
	srv.HTTPCompressMinSize = -1
	benchStreamHTTP(b, srv)
}

func benchStreamHTTP(b *testing.B, srv *jsonrpc.Server) {
	var wire atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(countingWriter{w, &wire}, r)
	}))
	defer hs.Close()
	c := jsonrpc.NewHTTPClient(hs.URL)
	defer c.Close()
	ctx := context.Background()
	peak := startHeapPeak()
	b.SetBytes(int64(streamBenchParams.N * (streamBenchParams.Size + 20)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for _, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", streamBenchParams) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != streamBenchParams.N {
			b.Fatalf("%d elements", n)
		}
	}
	b.StopTimer()
	b.ReportMetric(peak.done(), "peak-heap-MiB")
	b.ReportMetric(float64(wire.Load())/float64(b.N), "wire-B/op")
}

// BenchmarkStreamTCP serves 1 MiB per op on a TCP connection (one
// message written in pieces), read by a raw peer that keeps nothing:
// peak-heap-MiB bounds the server's heap.
func BenchmarkStreamTCP(b *testing.B) {
	srv := newStreamServer()
	defer srv.Shutdown(context.Background())
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(l.URL, "tcp://"))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	msg := `{"jsonrpc":"2.0","method":"items","params":{"n":1024,"size":1000},"id":1}` + "\n"
	peak := startHeapPeak()
	b.SetBytes(int64(streamBenchParams.N * (streamBenchParams.Size + 20)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := io.WriteString(nc, msg); err != nil {
			b.Fatal(err)
		}
		for {
			line, err := br.ReadSlice('\n')
			if err == nil {
				break
			}
			if err != bufio.ErrBufferFull {
				b.Fatalf("%v after %.80q", err, line)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(peak.done(), "peak-heap-MiB")
}

// BenchmarkStreamTCPCallIter serves and consumes one result of b.N MiB
// (b.N × 1024 elements of about 1 KiB) on a TCP connection: the handler
// returns a Stream, the client reads it with CallIter, which borrows the
// connection's reader and decodes element by element. The result is far
// over the client's size limit (10 MiB) from -benchtime=16x on: only the
// incremental path can read it. Server and client share the process, so
// peak-heap-MiB bounds both heaps. -benchtime=256x is a 256 MiB result.
func BenchmarkStreamTCPCallIter(b *testing.B) { benchStreamCallIter(b, "tcp://127.0.0.1:0") }

// BenchmarkStreamWSCallIter is BenchmarkStreamTCPCallIter over WebSocket:
// one message of b.N MiB written in frames, lent to CallIter as they
// arrive (the client's socket limit is off; WithMaxMessageSize bounds
// each element).
func BenchmarkStreamWSCallIter(b *testing.B) { benchStreamCallIter(b, "ws://127.0.0.1:0") }

func benchStreamCallIter(b *testing.B, url string) {
	srv := newStreamServer()
	defer srv.Shutdown(context.Background())
	l, err := srv.Listen(url)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c, err := jsonrpc.Dial(ctx, l.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := streamParams{N: b.N * streamBenchParams.N, Size: streamBenchParams.Size}
	peak := startHeapPeak()
	b.SetBytes(int64(streamBenchParams.N * (streamBenchParams.Size + 20)))
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for _, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	if n != p.N {
		b.Fatalf("%d elements, want %d", n, p.N)
	}
	b.ReportMetric(peak.done(), "peak-heap-MiB")
}
