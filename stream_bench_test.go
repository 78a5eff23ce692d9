package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
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
	base uint64 // heap in use at the start, after a GC
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{stop: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(samples)
	h.base = samples[0].Value.Uint64() + samples[1].Value.Uint64()
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

// grown stops sampling and returns the peak above the heap in use at the
// start, in MiB: what the measured work held, whatever other tests of the
// process left live.
func (h *heapPeak) grown() float64 {
	h.done()
	return float64(h.peak-h.base) / (1 << 20)
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

// writeRawResult writes the response with id whose result is n elements
// of streamBenchParams' shape, element by element through a 64 KiB
// buffer: a peer that streams a result of any size in constant memory,
// for the transports on which our server encodes a Stream whole
// (Streamable HTTP, Content-Length framing). It returns the bytes it
// writes when w is nil.
func writeRawResult(w io.Writer, id string, n int) int64 {
	head := `{"jsonrpc":"2.0","id":` + id + `,"result":[`
	total := int64(len(head)) + 2
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(head)
	}
	var elem []byte
	for i := range n {
		elem = elem[:0]
		if i > 0 {
			elem = append(elem, ',')
		}
		elem = append(elem, `{"i":`...)
		elem = strconv.AppendInt(elem, int64(i), 10)
		elem = append(elem, `,"s":"`...)
		elem = append(elem, streamFill[i%26][:streamBenchParams.Size]...)
		elem = append(elem, `"}`...)
		total += int64(len(elem))
		if bw != nil {
			if _, err := bw.Write(elem); err != nil {
				return total
			}
		}
	}
	if bw != nil {
		bw.WriteString("]}")
		bw.Flush()
	}
	return total
}

// BenchmarkStreamStreamableCallIter reads one result of b.N MiB with
// CallIter from a Streamable HTTP client whose POST is answered with
// application/json, decoded as it arrives (the client's limit, 10 MiB,
// bounds each element). The peer is a raw handler that streams the body
// (our server writes a Stream whole on Streamable HTTP), so
// peak-heap-MiB bounds the client's heap.
func BenchmarkStreamStreamableCallIter(b *testing.B) {
	n := b.N * streamBenchParams.N
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct{ ID json.RawMessage }
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		writeRawResult(w, string(req.ID), n)
	}))
	defer hs.Close()
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchRawCallIter(b, c, n)
}

// BenchmarkStreamHeaderCallIter is BenchmarkStreamStreamableCallIter on a
// TCP connection with Content-Length framing (LSP): the raw peer sends
// the length, then the body as it makes it; the client lends the body
// to CallIter.
func BenchmarkStreamHeaderCallIter(b *testing.B) {
	n := b.N * streamBenchParams.N
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		for {
			body, err := readHeaderFramed(br)
			if err != nil {
				return
			}
			var req struct{ ID json.RawMessage }
			if json.Unmarshal([]byte(body), &req) != nil {
				return
			}
			io.WriteString(nc, "Content-Length: "+strconv.FormatInt(writeRawResult(nil, string(req.ID), n), 10)+"\r\n\r\n")
			writeRawResult(nc, string(req.ID), n)
		}
	}()
	c, err := jsonrpc.Dial(context.Background(), "tcp://"+l.Addr().String(), jsonrpc.WithFraming(jsonrpc.FramingHeader))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchRawCallIter(b, c, n)
}

func benchRawCallIter(b *testing.B, c jsonrpc.Client, n int) {
	peak := startHeapPeak()
	b.SetBytes(int64(streamBenchParams.N * (streamBenchParams.Size + 20)))
	b.ReportAllocs()
	b.ResetTimer()
	got := 0
	for _, err := range jsonrpc.CallIter[streamItem](context.Background(), c, "items", nil) {
		if err != nil {
			b.Fatal(err)
		}
		got++
	}
	b.StopTimer()
	if got != n {
		b.Fatalf("%d elements, want %d", got, n)
	}
	b.ReportMetric(peak.done(), "peak-heap-MiB")
}
