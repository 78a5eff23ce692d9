package jsonrpc_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipBomb returns a gzip stream of prefix followed by n MiB of zeros,
// quick to make: one member of a MiB of zeros, repeated (gzip readers
// read concatenated members as one stream).
func gzipBomb(t testing.TB, prefix []byte, n int) []byte {
	t.Helper()
	// The zeros at the best level: the default level of Go 1.27's
	// compress/flate makes twice the bytes of Go 1.26's.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil || zw.Close() != nil {
		t.Fatal("gzip", err)
	}
	zeros := buf.Bytes()
	bomb := gzipped(t, prefix)
	for range n {
		bomb = append(bomb, zeros...)
	}
	return bomb
}

func gunzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// echoRequest is an echo call whose params hold a string of n bytes.
func echoRequest(n int) string {
	return `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("ab", n/2) + `"],"id":7}`
}

// postWire posts body with the given request headers through a transport
// that does no transparent decompression, and returns the response with
// its body as it came over the wire.
func postWire(t *testing.T, url string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
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

func TestHTTPGzipReply(t *testing.T) {
	noLeaks(t)
	url := listenHTTP(t, &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}, "/rpc")
	big := []byte(echoRequest(8 << 10))

	// A client that does not accept gzip gets the plain reply.
	resp, plain := postWire(t, url, big, nil)
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Contains(plain, []byte(`"result":["abab`)) {
		t.Fatalf("no Accept-Encoding: %v %.80s", resp.Header, plain)
	}
	// One that does gets the same bytes, gzipped, with Vary and the
	// compressed length.
	resp, wire := postWire(t, url, big, map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.5"})
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" || resp.ContentLength != int64(len(wire)) {
		t.Fatalf("gzip accepted: headers %v, length %d, body %d bytes", resp.Header, resp.ContentLength, len(wire))
	}
	if len(wire) > len(plain)/10 {
		t.Errorf("gzip reply %d bytes for %d plain", len(wire), len(plain))
	}
	if got := gunzipped(t, wire); !bytes.Equal(got, plain) {
		t.Fatalf("decompressed reply differs from the plain one:\n%.100s\n%.100s", got, plain)
	}
	// q=0 refuses gzip; a small reply is never compressed.
	for _, c := range []struct {
		name, accept string
		body         []byte
	}{
		{"q=0", "gzip;q=0, identity", big},
		{"small", "gzip", []byte(echoRequest(100))},
	} {
		resp, b := postWire(t, url, c.body, map[string]string{"Accept-Encoding": c.accept})
		if resp.Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0"`)) {
			t.Errorf("%s: compressed (%v) or wrong: %.60s", c.name, resp.Header, b)
		}
	}
}

func TestHTTPGzipReplyOff(t *testing.T) {
	noLeaks(t)
	url := listenHTTP(t, &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), HTTPCompressMinSize: -1}, "/rpc")
	resp, b := postWire(t, url, []byte(echoRequest(8<<10)), map[string]string{"Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "" || !bytes.HasPrefix(b, []byte(`{"jsonrpc":"2.0"`)) {
		t.Fatalf("HTTPCompressMinSize -1: %v %.60s", resp.Header, b)
	}
}

func TestHTTPGzipRequest(t *testing.T) {
	noLeaks(t)
	url := listenHTTP(t, &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}, "/rpc")
	msg := []byte(echoRequest(4 << 10))
	_, want := postWire(t, url, msg, nil)

	resp, got := postWire(t, url, gzipped(t, msg), map[string]string{"Content-Encoding": "gzip"})
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
		t.Fatalf("gzip request: %d %.80s", resp.StatusCode, got)
	}
	// A body that is not gzip: 400, nothing served.
	resp, got = postWire(t, url, msg, map[string]string{"Content-Encoding": "gzip"})
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("broken gzip: %d %s", resp.StatusCode, got)
	}
	// An encoding the server does not know: 415, saying which it takes.
	resp, got = postWire(t, url, msg, map[string]string{"Content-Encoding": "br"})
	if resp.StatusCode != http.StatusUnsupportedMediaType || resp.Header.Get("Accept-Encoding") != "gzip" {
		t.Fatalf("br: %d %v %s", resp.StatusCode, resp.Header, got)
	}
}

// TestHTTPGzipBomb sends a request that inflates 500-fold past the
// limit: the server refuses it as too large (413) without inflating it all.
func TestHTTPGzipBomb(t *testing.T) {
	noLeaks(t)
	var served atomic.Int64
	mux := demo.Shared{}.NewMux()
	srv := &jsonrpc.Server{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, r *jsonrpc.Request) (any, error) {
		served.Add(1)
		return mux.ServeRPC(ctx, r)
	}), MaxMessageSize: 64 << 10}
	url := listenHTTP(t, srv, "/rpc")
	bomb := gzipBomb(t, []byte(`{"jsonrpc":"2.0","method":"echo","params":["`), 32)
	if int64(len(bomb)) > srv.MaxMessageSize {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	for _, chunked := range []bool{false, true} {
		body := io.Reader(bytes.NewReader(bomb))
		if chunked {
			body = io.MultiReader(body) // no length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, url, body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", "gzip")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "message too large") {
			t.Fatalf("chunked %v: %d %s", chunked, resp.StatusCode, b)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("refusing the bomb took %v", d)
		}
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("the handler ran %d times", n)
	}
	// At the limit, decompressed: served.
	ok := echoRequest(64<<10 - 200)
	resp, b := postWire(t, url, gzipped(t, []byte(ok)), map[string]string{"Content-Encoding": "gzip"})
	if resp.StatusCode != http.StatusOK || served.Load() != 1 {
		t.Fatalf("under the limit: %d %.80s", resp.StatusCode, b)
	}
}

// wireCount counts the bytes a handler's requests and replies take on the
// wire (around compression), and the request encodings it saw.
type wireCount struct {
	in, out   atomic.Int64
	encodings atomic.Value // string: the last request's Content-Encoding
}

func (c *wireCount) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.encodings.Store(r.Header.Get("Content-Encoding"))
		r.Body = countingBody{r.Body, &c.in}
		h.ServeHTTP(countingWriter{w, &c.out}, r)
	})
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

func (w countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestHTTPClientCompression(t *testing.T) {
	noLeaks(t)
	var wire wireCount
	ts := httptest.NewServer(wire.wrap(&jsonrpc.Server{Handler: demo.Shared{}.NewMux()}))
	defer ts.Close()
	param := strings.Repeat(`{"k":"value"}`, 10<<10)
	for _, compress := range []bool{false, true} {
		var opts []jsonrpc.DialOption
		if compress {
			opts = append(opts, jsonrpc.WithCompression())
		}
		c := jsonrpc.NewHTTPClient(ts.URL, opts...)
		wire.in.Store(0)
		wire.out.Store(0)
		var got []string
		if err := c.Call(context.Background(), "echo", []string{param}, &got); err != nil || len(got) != 1 || got[0] != param {
			t.Fatalf("compress %v: %v (%d results)", compress, err, len(got))
		}
		in, out, enc := wire.in.Load(), wire.out.Load(), wire.encodings.Load()
		t.Logf("compress %v: request %d bytes (%s), reply %d bytes", compress, in, enc, out)
		if out > int64(len(param))/10 {
			t.Errorf("the reply took %d bytes: not compressed", out)
		}
		if compressed := in < int64(len(param))/10; compressed != compress || (enc == "gzip") != compress {
			t.Errorf("WithCompression %v: request of %d bytes, Content-Encoding %q", compress, in, enc)
		}
		// A small request goes as it is.
		if err := c.Call(context.Background(), "echo", []int{1}, nil); err != nil || wire.encodings.Load() != "" {
			t.Errorf("small request: %v, Content-Encoding %q", err, wire.encodings.Load())
		}
		c.Close()
	}
}

// TestHTTPClientGzipBomb: a hostile server's reply that inflates past the
// client's limit fails the call with ErrMessageTooLarge.
func TestHTTPClientGzipBomb(t *testing.T) {
	noLeaks(t)
	prefix := []byte(`{"jsonrpc":"2.0","id":1,"result":"`)
	bomb := gzipBomb(t, prefix, 256)
	small := gzipped(t, []byte(`{"jsonrpc":"2.0","id":2,"result":"ok"}`))
	var reply atomic.Pointer[[]byte]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(*reply.Load())
	}))
	defer ts.Close()
	c := jsonrpc.NewHTTPClient(ts.URL, jsonrpc.WithMaxMessageSize(1<<20))
	defer c.Close()

	reply.Store(&bomb)
	err := c.Call(context.Background(), "x", nil, nil)
	if !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("bomb: %v", err)
	}
	reply.Store(&small)
	var s string
	if err := c.Call(context.Background(), "x", nil, &s); err != nil || s != "ok" {
		t.Fatalf("a gzip reply: %q %v", s, err)
	}
}

// countListener counts the bytes read from its connections.
type countListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countConn{nc, l.n}, nil
}

type countConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestWebSocketCompression(t *testing.T) {
	noLeaks(t)
	param := strings.Repeat(`{"k":"value"}`, 8<<10)
	for _, c := range []struct {
		name           string
		server, client bool
	}{
		{"both", true, true},
		{"server only", true, false},
		{"client only", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
			var opts jsonrpc.WebSocketOptions
			if c.server {
				opts.Compression = true
			}
			var read atomic.Int64
			ts := httptest.NewUnstartedServer(srv.WebSocketHandler(opts))
			ts.Listener = countListener{ts.Listener, &read}
			ts.Start()
			defer ts.Close()
			defer srv.Shutdown(context.Background())
			var dopts []jsonrpc.DialOption
			if c.client {
				dopts = append(dopts, jsonrpc.WithCompression())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := jsonrpc.DialWebSocket(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), dopts...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var got []string
			if err := conn.Call(ctx, "echo", []string{param}, &got); err != nil || len(got) != 1 || got[0] != param {
				t.Fatalf("%v (%d results)", err, len(got))
			}
			n := read.Load()
			if compressed := n < int64(len(param))/10; compressed != (c.server && c.client) {
				t.Fatalf("the server read %d bytes for a %d-byte param", n, len(param))
			}
		})
	}
}

// TestWebSocketDeflateBomb: a compressed message that inflates past the
// server's limit closes the socket with 1009, as any message too large.
func TestWebSocketDeflateBomb(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxMessageSize: 64 << 10}
	ts := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{Compression: true}))
	defer ts.Close()
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), &websocket.DialOptions{
		CompressionMode: websocket.CompressionNoContextTakeover,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()
	bomb := append([]byte(`{"jsonrpc":"2.0","method":"echo","params":["`), make([]byte, 2<<20)...)
	writeErr := make(chan error, 1)
	go func() { writeErr <- wc.Write(ctx, websocket.MessageText, bomb) }()
	_, _, err = wc.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v (%v), want 1009", got, err)
	}
	<-writeErr // fails or not: the server stopped reading
}
