package jsonrpc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// postEncoded posts msg with the headers given (an Accept-Encoding set
// here keeps net/http's transport from decompressing; none: the
// transport's own, which does) and returns the response and its body as
// read.
func postEncoded(t *testing.T, url, msg string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// acceptEncoding is the header of a request that accepts coding ("": none set).
func acceptEncoding(coding string) http.Header {
	if coding == "" {
		return nil
	}
	return http.Header{"Accept-Encoding": {coding}}
}

// A streamed HTTP reply (chunked) is gzipped for a client that accepts
// gzip, and decompresses to the bytes of the same elements in a slice; a
// client that does not accept gzip, or a server with compression off,
// gets it plain. Our CallIter reads the gzipped stream, with a fraction of
// the bytes on the wire.
func TestStreamHTTPGzip(t *testing.T) {
	var wire atomic.Int64
	srv := newStreamServer()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(countingWriter{w, &wire}, r)
	}))
	defer hs.Close()
	const stream = `{"jsonrpc":"2.0","method":"items","params":{"n":2000,"size":100},"id":1}`
	const slice = `{"jsonrpc":"2.0","method":"itemsSlice","params":{"n":2000,"size":100},"id":1}`
	_, want := postEncoded(t, hs.URL, slice, acceptEncoding("identity"))
	if len(want) < 4*jsonrpc.StreamChunk {
		t.Fatalf("the slice's reply is %d bytes", len(want))
	}

	resp, body := postEncoded(t, hs.URL, stream, acceptEncoding("gzip"))
	if resp.Header.Get("Content-Encoding") != "gzip" || len(resp.TransferEncoding) != 1 || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("Content-Encoding %q, Transfer-Encoding %q, Vary %q", resp.Header.Get("Content-Encoding"), resp.TransferEncoding, resp.Header.Get("Vary"))
	}
	if got := gunzipped(t, body); !bytes.Equal(got, want) {
		t.Fatalf("the gzipped stream decompresses to %d bytes that differ from the slice's %d", len(got), len(want))
	}
	if len(body)*4 > len(want) {
		t.Fatalf("gzipped to %d bytes of %d", len(body), len(want))
	}

	// net/http's own client asks for gzip and decompresses it.
	resp, body = postEncoded(t, hs.URL, stream, acceptEncoding(""))
	if !resp.Uncompressed || !bytes.Equal(body, want) {
		t.Fatalf("net/http's client: uncompressed %v, %d bytes", resp.Uncompressed, len(body))
	}

	// A client that does not accept gzip gets the stream plain.
	resp, body = postEncoded(t, hs.URL, stream, acceptEncoding("identity"))
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
		t.Fatalf("identity: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
	}

	// CallIter reads the gzipped stream element by element.
	c := jsonrpc.NewHTTPClient(hs.URL)
	defer c.Close()
	wire.Store(0)
	p := streamParams{N: 2000, Size: 100}
	i := 0
	for v, err := range jsonrpc.CallIter[streamItem](context.Background(), c, "items", p) {
		if err != nil || v != p.item(i) {
			t.Fatalf("element %d: %+v %v", i, v, err)
		}
		i++
	}
	if i != p.N || wire.Load()*4 > int64(len(want)) {
		t.Fatalf("%d elements, %d bytes on the wire for %d", i, wire.Load(), len(want))
	}

	// HTTPCompressMinSize < 0: never compressed.
	off := newStreamServer()
	off.HTTPCompressMinSize = -1
	hsOff := httptest.NewServer(off)
	defer hsOff.Close()
	resp, body = postEncoded(t, hsOff.URL, stream, acceptEncoding("gzip"))
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, want) {
		t.Fatalf("compression off: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
	}
}

// Each chunk of a gzipped stream reaches the client when it is written:
// the client reads the first elements through gzip while the sequence
// waits for the client to have them.
func TestStreamHTTPGzipFlushesEachChunk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gate := make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "gated", func(ctx context.Context, p streamParams) (jsonrpc.Stream[streamItem], error) {
		return func(yield func(streamItem, error) bool) {
			for i := range p.N { // more than a chunk
				if !yield(p.item(i), nil) {
					return
				}
			}
			select {
			case <-gate:
			case <-ctx.Done():
				return
			}
			yield(p.item(p.N), nil)
		}, nil
	})
	hs := httptest.NewServer(&jsonrpc.Server{Handler: mux})
	defer hs.Close()

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"gated","params":{"n":400,"size":100},"id":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, jsonrpc.StreamChunk) // less than was written before the gate
	if _, err := io.ReadFull(zr, head); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(head, []byte(`{"jsonrpc":"2.0","id":1,"result":[{"i":0,`)) {
		t.Fatalf("the stream begins %.60q", head)
	}
	close(gate)
	rest, err := io.ReadAll(zr)
	if err != nil || !bytes.HasSuffix(rest, []byte(`"i":400,"s":"`+strings.Repeat("k", 100)+`"}]}`)) {
		t.Fatalf("the rest: %v, ends %.60q", err, rest[max(0, len(rest)-60):])
	}
}

// A gzip bomb in one element of a streamed reply is refused like an
// element over WithMaxMessageSize, after the elements before it, and
// costs the client about the limit, not the bomb's size.
func TestCallIterGzipBomb(t *testing.T) {
	const limit = 1 << 20
	// 64 MiB of x in one string: a gzip member of 1 MiB of x, repeated
	// (a gzip reader reads concatenated members as one stream).
	mib := gzipped(t, bytes.Repeat([]byte{'x'}, 1<<20))
	bomb := gzipped(t, []byte(`{"jsonrpc":"2.0","id":1,"result":[1,"`))
	for range 64 {
		bomb = append(bomb, mib...)
	}
	bomb = append(bomb, gzipped(t, []byte(`"]}`))...)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}))
	defer hs.Close()
	c := jsonrpc.NewHTTPClient(hs.URL, jsonrpc.WithMaxMessageSize(limit))
	defer c.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var got []any
	var last error
	for v, err := range jsonrpc.CallIter[any](context.Background(), c, "m", nil) {
		if err != nil {
			last = err
			break
		}
		got = append(got, v)
	}
	runtime.ReadMemStats(&after)
	if len(got) != 1 || !errors.Is(last, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("%v then %v", got, last)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*limit {
		t.Fatalf("reading the bomb allocated %d bytes (limit %d)", alloc, limit)
	}
}
