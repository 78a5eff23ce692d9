package jsonrpc_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
)

// streamItem is an element of the test streams.
type streamItem struct {
	I int    `json:"i"`
	S string `json:"s"`
}

type streamParams struct {
	N      int `json:"n"`
	Size   int `json:"size,omitzero"`   // bytes of S in each element
	FailAt int `json:"failAt,omitzero"` // the sequence fails at this element (0: never)
}

func (p streamParams) item(i int) streamItem {
	return streamItem{I: i, S: streamFill[i%26][:p.Size]}
}

// streamFill holds the elements' strings (up to 4 KiB), made once: the
// benchmarks measure the stream, not the making of its elements.
var streamFill = func() (f [26]string) {
	for i := range f {
		f[i] = strings.Repeat(string(rune('a'+i)), 4<<10)
	}
	return f
}()

// streamedElems counts the elements the "endless" streams have yielded,
// streamedCancelled those streams whose context ended.
var streamedCancelled, streamedElems atomic.Int64

// registerStreamMethods adds "items" (a Stream of n elements), "itemsSlice"
// (the same elements in a slice) and "endless" (a Stream that ends only
// when its context does) to mux.
func registerStreamMethods(mux *jsonrpc.Mux) {
	registerGatedStream(mux)
	jsonrpc.Register(mux, "items", func(ctx context.Context, p streamParams) (jsonrpc.Stream[streamItem], error) {
		return func(yield func(streamItem, error) bool) {
			for i := range p.N {
				if p.FailAt > 0 && i == p.FailAt {
					yield(streamItem{}, &jsonrpc.Error{Code: 7, Message: "the source failed"})
					return
				}
				if !yield(p.item(i), nil) {
					return
				}
			}
		}, nil
	})
	jsonrpc.Register(mux, "itemsSlice", func(ctx context.Context, p streamParams) ([]streamItem, error) {
		out := make([]streamItem, p.N)
		for i := range out {
			out[i] = p.item(i)
		}
		return out, nil
	})
	jsonrpc.Register(mux, "endless", func(ctx context.Context, p streamParams) (jsonrpc.Stream[streamItem], error) {
		return func(yield func(streamItem, error) bool) {
			for i := 0; ; i++ {
				streamedElems.Add(1)
				if ctx.Err() != nil {
					streamedCancelled.Add(1)
					yield(streamItem{}, ctx.Err())
					return
				}
				if !yield(p.item(i), nil) {
					// The peer has gone: the context ends too.
					select {
					case <-ctx.Done():
						streamedCancelled.Add(1)
					case <-time.After(30 * time.Second):
					}
					return
				}
			}
		}, nil
	})
}

// streamGate holds back the "gated" streams until a "release" notification.
var streamGate = make(chan struct{}, 1)

// registerGatedStream adds "gated" (a Stream of n elements, then one more
// once the peer has sent the notification "release") and "release".
func registerGatedStream(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "gated", func(ctx context.Context, p streamParams) (jsonrpc.Stream[streamItem], error) {
		return func(yield func(streamItem, error) bool) {
			for i := range p.N {
				if !yield(p.item(i), nil) {
					return
				}
			}
			select {
			case <-streamGate:
			case <-ctx.Done():
				return
			}
			yield(p.item(p.N), nil)
		}, nil
	})
	jsonrpc.Register(mux, "release", func(ctx context.Context, _ struct{}) (any, error) {
		select {
		case streamGate <- struct{}{}:
		default:
		}
		return nil, nil
	})
}

func newStreamServer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	registerStreamMethods(mux)
	return &jsonrpc.Server{Handler: mux}
}

// streamRawExchange sends one raw message and returns the raw reply.
type streamRawExchange func(t *testing.T, msg string) []byte

// streamRawTransports are the raw peers of every transport, each on a server
// with the stream methods.
func streamRawTransports(t *testing.T) map[string]streamRawExchange {
	t.Helper()
	srv := newStreamServer()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ex := map[string]streamRawExchange{
		"http": func(t *testing.T, msg string) []byte {
			resp, err := http.Post(hs.URL, "application/json", strings.NewReader(msg))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
	for _, url := range []string{"tcp://127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "s.sock")} {
		l, err := srv.Listen(url)
		if err != nil {
			t.Fatal(err)
		}
		network, addr, _ := strings.Cut(l.URL, "://")
		nc, err := net.Dial(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		ex[network] = streamLineExchange(nc, nc)
	}
	l, err := srv.Listen("ws://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	wc, _, err := websocket.Dial(ctx, l.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	wc.SetReadLimit(64 << 20)
	t.Cleanup(func() { wc.CloseNow() })
	ex["ws"] = func(t *testing.T, msg string) []byte {
		if err := wc.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	_, pc := startHelper(t, "demo", io.Discard)
	ex["stdio"] = streamLineExchange(pc, pc)
	return ex
}

// streamLineExchange is a newline-framed raw peer.
func streamLineExchange(w io.Writer, r io.Reader) streamRawExchange {
	br := bufio.NewReaderSize(r, 64<<10)
	return func(t *testing.T, msg string) []byte {
		t.Helper()
		if _, err := io.WriteString(w, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return line[:len(line)-1]
	}
}

// A Stream's response is byte for byte the one the same elements in a
// slice get, on every transport, whether it fits in one chunk or not, and
// the connection goes on after it.
func TestStreamSameBytesAsSlice(t *testing.T) {
	for name, ex := range streamRawTransports(t) {
		t.Run(name, func(t *testing.T) {
			for _, p := range []string{`{"n":0}`, `{"n":3,"size":5}`, `{"n":3000,"size":100}`} {
				streamed := ex(t, `{"jsonrpc":"2.0","method":"items","params":`+p+`,"id":"x-1"}`)
				whole := ex(t, `{"jsonrpc":"2.0","method":"itemsSlice","params":`+p+`,"id":"x-1"}`)
				if !bytes.Equal(streamed, whole) {
					t.Fatalf("params %s: the streamed response differs from the slice's:\n%.200s\n%.200s", p, streamed, whole)
				}
			}
			if n := len(ex(t, `{"jsonrpc":"2.0","method":"items","params":{"n":3000,"size":100},"id":2}`)); n < 300000 {
				t.Fatalf("response of %d bytes", n)
			}
		})
	}
}

// Over HTTP a stream larger than a chunk goes as a chunked body; one that
// fits goes with its length, as any reply.
func TestStreamHTTPChunked(t *testing.T) {
	hs := httptest.NewServer(newStreamServer())
	defer hs.Close()
	for _, tc := range []struct {
		params  string
		chunked bool
	}{{`{"n":3,"size":5}`, false}, {`{"n":1000,"size":1000}`, true}} {
		resp, err := http.Post(hs.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"items","params":`+tc.params+`,"id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		chunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
		if chunked != tc.chunked || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d, chunked %v (want %v), Content-Type %q", tc.params, resp.StatusCode, chunked, tc.chunked, resp.Header.Get("Content-Type"))
		}
	}
}

// streamDialers reach a stream server on every transport with a Client.
func streamDialers(t *testing.T) map[string]func() jsonrpc.Client {
	t.Helper()
	srv := newStreamServer()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	urls := map[string]string{}
	for _, url := range []string{"http://127.0.0.1:0", "ws://127.0.0.1:0", "tcp://127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "s.sock")} {
		l, err := srv.Listen(url)
		if err != nil {
			t.Fatal(err)
		}
		scheme, _, _ := strings.Cut(url, ":")
		urls[scheme] = l.URL
	}
	d := map[string]func() jsonrpc.Client{}
	for scheme, url := range urls {
		d[scheme] = func() jsonrpc.Client {
			c, err := jsonrpc.Dial(context.Background(), url, jsonrpc.WithMaxMessageSize(64<<20))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c
		}
	}
	d["stdio"] = func() jsonrpc.Client {
		name, args := helperCommand(t, "demo")
		c, err := jsonrpc.DialCommand(context.Background(), name, args, jsonrpc.WithMaxMessageSize(64<<20), jsonrpc.WithStderr(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return d
}

// CallIter reads a streamed result element by element, and Call reads it
// whole, on every transport; CallIter also reads a slice result.
func TestStreamCallIterEveryTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := streamParams{N: 2000, Size: 100}
	for name, dial := range streamDialers(t) {
		t.Run(name, func(t *testing.T) {
			c := dial()
			for _, method := range []string{"items", "itemsSlice"} {
				i := 0
				for v, err := range jsonrpc.CallIter[streamItem](ctx, c, method, p) {
					if err != nil {
						t.Fatalf("%s: element %d: %v", method, i, err)
					}
					if v != p.item(i) {
						t.Fatalf("%s: element %d is %+v", method, i, v)
					}
					i++
				}
				if i != p.N {
					t.Fatalf("%s: %d elements, want %d", method, i, p.N)
				}
			}
			var all []streamItem
			if err := c.Call(ctx, "items", p, &all); err != nil || len(all) != p.N || all[p.N-1] != p.item(p.N-1) {
				t.Fatalf("Call: %d elements, %v", len(all), err)
			}
			// Breaking off the loop early is fine, and the client goes on.
			for range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
				break
			}
			if err := c.Call(ctx, "items", streamParams{N: 1}, &all); err != nil || len(all) != 1 {
				t.Fatalf("after a loop broken off: %d elements, %v", len(all), err)
			}
		})
	}
}

// A stream that fails before its first chunk is written gets an ordinary
// error response, on every transport, and the connection goes on.
func TestStreamErrorBeforeFirstChunk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, dial := range streamDialers(t) {
		t.Run(name, func(t *testing.T) {
			c := dial()
			var all []streamItem
			err := c.Call(ctx, "items", streamParams{N: 10, FailAt: 5}, &all)
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != 7 || rpcErr.Message != "the source failed" {
				t.Fatalf("Call: %v", err)
			}
			n := 0
			for _, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", streamParams{N: 10, FailAt: 5}) {
				if err != nil {
					if !errors.As(err, &rpcErr) || rpcErr.Code != 7 {
						t.Fatalf("CallIter: %v", err)
					}
					break
				}
				n++
			}
			if n != 0 {
				t.Fatalf("CallIter yielded %d elements before the error response", n)
			}
			if err := c.Call(ctx, "items", streamParams{N: 2}, &all); err != nil || len(all) != 2 {
				t.Fatalf("the next call: %d elements, %v", len(all), err)
			}
		})
	}
}

// A stream that fails once its response has begun is cut short: the
// client sees a broken response (an error, never a complete wrong
// result). Over HTTP the body is aborted; on a connection the connection
// is closed, and a new one works.
func TestStreamErrorMidway(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := streamParams{N: 5000, Size: 100, FailAt: 4000}
	for name, dial := range streamDialers(t) {
		t.Run(name, func(t *testing.T) {
			c := dial()
			var all []streamItem
			if err := c.Call(ctx, "items", p, &all); err == nil {
				t.Fatalf("Call of a stream cut short returned %d elements and no error", len(all))
			}
			if name != "http" {
				return // the connection is closed (checked below on tcp)
			}
			n := 0
			var last error
			for _, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
				if err != nil {
					last = err
					break
				}
				n++
			}
			if last == nil || n == 0 || n > p.FailAt {
				t.Fatalf("CallIter: %d elements, then %v", n, last)
			}
			if err := c.Call(ctx, "items", streamParams{N: 2}, &all); err != nil || len(all) != 2 {
				t.Fatalf("the next call: %d elements, %v", len(all), err)
			}
		})
	}
	c := streamDialers(t)["tcp"]()
	var all []streamItem
	err := c.Call(ctx, "items", p, &all)
	if !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("tcp: Call of a stream cut short: %v, want ErrClosed", err)
	}
}

// The stream's context ends when the peer goes away: over HTTP when the
// client breaks off, on a connection when it closes.
func TestStreamPeerGoesAway(t *testing.T) {
	for _, name := range []string{"http", "tcp", "ws"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := streamDialers(t)[name]()
			before := streamedCancelled.Load()
			if name == "http" {
				n := 0
				for _, err := range jsonrpc.CallIter[streamItem](ctx, c, "endless", streamParams{Size: 100}) {
					if n++; err != nil || n == 1000 {
						break // ends the request
					}
				}
			} else {
				// A connection's call cannot take its request back: the
				// peer goes away, closing the connection mid-stream.
				started := streamedElems.Load()
				go c.Call(ctx, "endless", streamParams{Size: 100}, nil)
				for streamedElems.Load() < started+1000 && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
				c.Close()
			}
			for streamedCancelled.Load() == before {
				if ctx.Err() != nil {
					t.Fatal("the endless stream's context was not cancelled when its peer went away")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// A handler that is not Register's can return a Stream too; a Stream in a
// batch is encoded whole, in the batch's array.
func TestStreamHandlerAndBatch(t *testing.T) {
	mux := jsonrpc.NewMux()
	registerStreamMethods(mux)
	mux.Handle("plain", jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return jsonrpc.Stream[int](func(yield func(int, error) bool) {
			for i := range 3 {
				if !yield(i, nil) {
					return
				}
			}
		}), nil
	}), jsonrpc.MethodDoc{})
	srv := &jsonrpc.Server{Handler: mux}
	reply := srv.Process(context.Background(), []byte(`[{"jsonrpc":"2.0","method":"plain","id":1},{"jsonrpc":"2.0","method":"items","params":{"n":2},"id":2}]`))
	want := `[{"jsonrpc":"2.0","id":1,"result":[0,1,2]},{"jsonrpc":"2.0","id":2,"result":[{"i":0,"s":""},{"i":1,"s":""}]}]`
	if string(reply) != want {
		t.Fatalf("got  %s\nwant %s", reply, want)
	}
	reply = srv.Process(context.Background(), []byte(`{"jsonrpc":"2.0","method":"items","params":{"n":3,"failAt":1},"id":3}`))
	if want := `{"jsonrpc":"2.0","id":3,"error":{"code":7,"message":"the source failed"}}`; string(reply) != want {
		t.Fatalf("got  %s\nwant %s", reply, want)
	}
}

// A Stream[T] method is described as returning []T (rpc.discover and
// MethodInfo.ResultType).
func TestStreamResultType(t *testing.T) {
	mux := jsonrpc.NewMux()
	registerStreamMethods(mux)
	for _, mi := range mux.Methods() {
		if mi.Name == "items" && mi.ResultType != reflect.TypeFor[[]streamItem]() {
			t.Fatalf("ResultType %v, want []streamItem", mi.ResultType)
		}
	}
}

// A result far larger than the heap bound is served and consumed over
// HTTP with the heap in use (server and client, one process) growing by
// under 16 MiB (5-12 measured in full runs under load): 24 MiB here (the 1 GiB run is BenchmarkStreamHTTP -benchtime=1024x).
func TestStreamHeapBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 24 MiB")
	}
	hs := httptest.NewServer(newStreamServer())
	defer hs.Close()
	c := jsonrpc.NewHTTPClient(hs.URL)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	p := streamParams{N: 24 << 10, Size: 1000}
	peak := startHeapPeak()
	n := 0
	for v, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
		if err != nil {
			t.Fatal(err)
		}
		if v.I != n {
			t.Fatalf("element %d has i %d", n, v.I)
		}
		n++
	}
	mib := peak.grown()
	t.Logf("%d elements, peak heap in use %.1f MiB above the start", n, mib)
	if n != p.N || mib >= 16 {
		t.Fatalf("%d elements (want %d), peak heap in use %.1f MiB above the start (want under 16)", n, p.N, mib)
	}
}

// HandlerTimeout bounds the handler until it returns its Stream, not the
// writing: a stream that takes longer than the timeout to write is
// written whole, its context alive until the end, on HTTP and on a
// connection.
func TestStreamOutlivesHandlerTimeout(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "slow", func(ctx context.Context, n int) (jsonrpc.Stream[int], error) {
		return func(yield func(int, error) bool) {
			for i := range n {
				time.Sleep(time.Millisecond)
				if ctx.Err() != nil {
					yield(0, ctx.Err())
					return
				}
				if !yield(i, nil) {
					return
				}
			}
		}, nil
	})
	srv := &jsonrpc.Server{Handler: mux, HandlerTimeout: 100 * time.Millisecond}
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, url := range []string{"http://127.0.0.1:0", "tcp://127.0.0.1:0"} {
		l, err := srv.Listen(url)
		if err != nil {
			t.Fatal(err)
		}
		c, err := jsonrpc.Dial(ctx, l.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var got []int
		if err := c.Call(ctx, "slow", []int{300}, &got); err != nil || len(got) != 300 || got[299] != 299 {
			t.Fatalf("%s: %d elements, %v", url, len(got), err)
		}
	}
}

// CallIter over HTTP against hostile or odd replies: each fails with an
// error saying why, after the elements that were whole, and an element
// over WithMaxMessageSize is refused as it is read, never held.
func TestCallIterHostileHTTP(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":1,"result":[1,"` + strings.Repeat("x", 256<<10) + `"]}`
	for _, tc := range []struct {
		name, body string
		n          int // elements yielded before the error
		check      func(error) bool
	}{
		{"not an array", `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, 0, func(err error) bool { return errors.Is(err, jsonrpc.ErrInvalidResponse) }},
		{"element too large", huge, 1, func(err error) bool { return errors.Is(err, jsonrpc.ErrMessageTooLarge) }},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"result":[1,2],"result":[3]}`, 2, func(err error) bool { return errors.Is(err, jsonrpc.ErrInvalidResponse) }},
		{"wrong id", `{"jsonrpc":"2.0","id":7,"result":[1]}`, 0, func(err error) bool { return errors.Is(err, jsonrpc.ErrInvalidResponse) }},
		{"cut short", `{"jsonrpc":"2.0","id":1,"result":[1,2,`, 2, func(err error) bool { return errors.Is(err, jsonrpc.ErrInvalidResponse) }},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`, 0, func(err error) bool {
			var e *jsonrpc.Error
			return errors.As(err, &e) && e.Code == -32000
		}},
		{"element of the wrong type", `{"jsonrpc":"2.0","id":1,"result":[1,"two"]}`, 1, func(err error) bool { return err != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			}))
			defer hs.Close()
			c := jsonrpc.NewHTTPClient(hs.URL, jsonrpc.WithMaxMessageSize(64<<10))
			defer c.Close()
			n := 0
			var last error
			for _, err := range jsonrpc.CallIter[int](context.Background(), c, "m", nil) {
				if err != nil {
					last = err
					break
				}
				n++
			}
			if n != tc.n || !tc.check(last) {
				t.Fatalf("%d elements then %v", n, last)
			}
		})
	}
}

// CallIter over HTTP reads a gzipped reply as it arrives.
func TestCallIterGzipHTTP(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, `{"jsonrpc":"2.0","id":1,"result":[1,2,3]}`)
		zw.Close()
	}))
	defer hs.Close()
	c := jsonrpc.NewHTTPClient(hs.URL)
	defer c.Close()
	var got []int
	for v, err := range jsonrpc.CallIter[int](context.Background(), c, "m", nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != 3 || got[2] != 3 {
		t.Fatalf("got %v", got)
	}
}
