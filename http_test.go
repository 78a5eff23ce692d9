package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// noLeaks checks, after every cleanup of the test has run, that the test
// left no goroutine behind.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// quietDemoServer is newDemoServer without logs (for tests that panic on purpose).
func quietDemoServer() *jsonrpc.Server {
	srv := newDemoServer()
	srv.Logger = slog.New(slog.DiscardHandler)
	return srv
}

// listenHTTP serves srv with Server.Listen on a loopback port and shuts it
// down at the end of the test.
func listenHTTP(t *testing.T, srv *jsonrpc.Server, path string) string {
	t.Helper()
	l, err := srv.Listen("http://127.0.0.1:0" + path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := l.Err(); err != nil {
			t.Errorf("listener: %v", err)
		}
	})
	return l.URL
}

// post sends body with the given content type and returns the response
// with its body read.
func post(t *testing.T, url, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// httpRoundTrip posts one message: 200 carries the reply; 204 means none.
func httpRoundTrip(url string) roundTrip {
	return func(t *testing.T, request string) []byte {
		t.Helper()
		resp, body := post(t, url, "application/json", request)
		switch resp.StatusCode {
		case http.StatusOK:
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			return []byte(body)
		case http.StatusNoContent:
			if body != "" {
				t.Fatalf("204 with a body: %q", body)
			}
			return nil
		}
		t.Fatalf("status %d: %s", resp.StatusCode, body)
		return nil
	}
}

func TestConformanceHTTP(t *testing.T) {
	url := listenHTTP(t, newDemoServer(), "/rpc")
	checkVectors(t, httpRoundTrip(url))
}

func TestConformanceHTTPOwnMux(t *testing.T) {
	// The Server is an http.Handler: mount it on a mux of one's own.
	mux := http.NewServeMux()
	mux.Handle("/api/rpc", newDemoServer())
	ts := httptest.NewServer(mux)
	defer ts.Close()
	checkVectors(t, httpRoundTrip(ts.URL+"/api/rpc"))
}

func TestHTTPMethodNotAllowed(t *testing.T) {
	ts := httptest.NewServer(newDemoServer())
	defer ts.Close()
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions} {
		t.Run(method, func(t *testing.T) {
			req, _ := http.NewRequest(method, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"echo","id":1}`))
			req.Header.Set("Content-Type", "application/json")
			resp, _ := do(t, req)
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Fatalf("status %d, want 405", resp.StatusCode)
			}
			if got := resp.Header.Get("Allow"); got != "POST" {
				t.Fatalf("Allow %q, want POST", got)
			}
		})
	}
}

func TestHTTPGetRejected(t *testing.T) {
	// A GET with the message in the query is not served either.
	ts := httptest.NewServer(newDemoServer())
	defer ts.Close()
	resp, body := do(t, mustRequest(t, http.MethodGet, ts.URL+`?jsonrpc=2.0&method=echo&id=1`, ""))
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("status %d Allow %q: %s", resp.StatusCode, resp.Header.Get("Allow"), body)
	}
	if strings.Contains(body, `"result"`) {
		t.Fatalf("GET was served: %s", body)
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHTTPContentType(t *testing.T) {
	ts := httptest.NewServer(newDemoServer())
	defer ts.Close()
	const msg = `{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`
	for ct, want := range map[string]int{
		"application/json":                     200,
		"application/json; charset=utf-8":      200,
		"Application/JSON; Charset=UTF-8":      200,
		"application/json;charset=\"utf-8\"":   200,
		"":                                     415,
		"text/plain":                           415,
		"application/x-www-form-urlencoded":    415,
		"application/json; charset=iso-8859-1": 415,
		"application/jsonx":                    415,
		"application/json-seq":                 415,
		"not a media type;;":                   415,
	} {
		t.Run(ct, func(t *testing.T) {
			resp, body := post(t, ts.URL, ct, msg)
			if resp.StatusCode != want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, body)
			}
			if want == 200 && body != `{"jsonrpc":"2.0","id":1,"result":[1]}` {
				t.Fatalf("body %s", body)
			}
		})
	}
}

// rawHTTP writes a raw request on a fresh connection and returns the
// response's status code and body, read within a deadline.
func rawHTTP(t *testing.T, addr, head string, body func(w io.Writer)) (status int, rest string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	if body != nil {
		body(nc)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp.StatusCode, string(b)
}

func TestHTTPTooLargeDeclared(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxMessageSize: 1024}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	// 100 MiB declared, only a few bytes sent: the answer must come at once,
	// without waiting for (or reading) the body.
	status, rest := rawHTTP(t, ts.Listener.Addr().String(),
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n[",
		nil)
	if status != 413 {
		t.Fatalf("status %d, want 413: %s", status, rest)
	}
	if !strings.Contains(rest, "message too large") || !strings.Contains(rest, "1024") {
		t.Fatalf("body does not say why: %s", rest)
	}

	// Exactly at the limit is accepted (an echo padded with spaces).
	msg := `{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`
	msg += strings.Repeat(" ", 1024-len(msg))
	resp, body := post(t, ts.URL, "application/json", msg)
	if resp.StatusCode != 200 {
		t.Fatalf("a body at the limit: status %d %s", resp.StatusCode, body)
	}
	resp, body = post(t, ts.URL, "application/json", msg+" ")
	if resp.StatusCode != 413 {
		t.Fatalf("a body one byte over: status %d %s", resp.StatusCode, body)
	}
}

func TestHTTPTooLargeChunked(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxMessageSize: 1024}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	// A chunked body that passes the limit and never ends: the server must
	// stop reading at the limit and answer.
	status, rest := rawHTTP(t, ts.Listener.Addr().String(),
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
		func(w io.Writer) {
			fmt.Fprintf(w, "1\r\n[\r\n")
			for range 5 {
				fmt.Fprintf(w, "400\r\n%s\r\n", strings.Repeat(" ", 0x400))
			}
		})
	if status != 413 {
		t.Fatalf("status %d, want 413: %s", status, rest)
	}

	// A chunked body under the limit is served.
	status, rest = rawHTTP(t, ts.Listener.Addr().String(),
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
		func(w io.Writer) {
			msg := `{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":7}`
			fmt.Fprintf(w, "%x\r\n%s\r\n0\r\n\r\n", len(msg), msg)
		})
	if status != 200 || !strings.Contains(rest, `{"jsonrpc":"2.0","id":7,"result":3}`) {
		t.Fatalf("status %d: %s", status, rest)
	}
}

func TestHTTPNotificationNoContent(t *testing.T) {
	ts := httptest.NewServer(newDemoServer())
	defer ts.Close()
	for _, msg := range []string{
		`{"jsonrpc":"2.0","method":"update","params":[1]}`,
		`[{"jsonrpc":"2.0","method":"update","params":[1]},{"jsonrpc":"2.0","method":"notify_hello"}]`,
		`{"jsonrpc":"2.0","method":"no_such_method"}`, // notifications get no error either
	} {
		resp, body := post(t, ts.URL, "application/json", msg)
		if resp.StatusCode != http.StatusNoContent || body != "" {
			t.Fatalf("%s: status %d body %q, want 204 and nothing", msg, resp.StatusCode, body)
		}
	}
}

func TestHTTPNotificationAccepted(t *testing.T) {
	srv := newDemoServer()
	srv.NotificationStatus = http.StatusAccepted
	ts := httptest.NewServer(srv)
	defer ts.Close()
	resp, body := post(t, ts.URL, "application/json", `{"jsonrpc":"2.0","method":"update"}`)
	if resp.StatusCode != http.StatusAccepted || body != "" {
		t.Fatalf("status %d body %q, want 202 and nothing", resp.StatusCode, body)
	}
	// Calls still get 200.
	resp, _ = post(t, ts.URL, "application/json", `{"jsonrpc":"2.0","method":"update","id":1}`)
	if resp.StatusCode != 200 {
		t.Fatalf("call: status %d", resp.StatusCode)
	}
}

func TestHTTPErrorsAre200(t *testing.T) {
	ts := httptest.NewServer(quietDemoServer())
	defer ts.Close()
	for msg, code := range map[string]string{
		`{"jsonrpc":"2.0","method":`: "-32700", // parse error
		``:                           "-32700", // empty body
		`[]`:                         "-32600",
		`{"jsonrpc":"1.0","method":"echo","id":1}`:                 "-32600",
		`{"jsonrpc":"2.0","method":"nope","id":1}`:                 "-32601",
		`{"jsonrpc":"2.0","method":"sum","params":[1,"x"],"id":1}`: "-32602",
		`{"jsonrpc":"2.0","method":"panic","id":1}`:                "-32603",
	} {
		resp, body := post(t, ts.URL, "application/json", msg)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%q: status %d Content-Type %q", msg, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, `"code":`+code) {
			t.Fatalf("%q: want code %s, got %s", msg, code, body)
		}
	}
}

func TestHTTPContextCancelledWhenClientLeaves(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	mux := jsonrpc.NewMux()
	mux.HandleFunc("wait", func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
		close(started)
		select {
		case <-ctx.Done():
			cancelled <- ctx.Err()
		case <-time.After(10 * time.Second):
			cancelled <- errors.New("the handler's context was not cancelled")
		}
		return nil, ctx.Err()
	})
	ts := httptest.NewServer(&jsonrpc.Server{Handler: mux})
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := jsonrpc.NewHTTPClient(ts.URL)
	defer c.Close()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "wait", nil, nil) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v, want context.Canceled", err)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

func TestHTTPListenPathAndShutdown(t *testing.T) {
	srv := newDemoServer()
	l, err := srv.Listen("http://127.0.0.1:0/rpc")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(l.URL, "/rpc") || strings.HasSuffix(l.URL, ":0/rpc") {
		t.Fatalf("URL %q", l.URL)
	}
	base := strings.TrimSuffix(l.URL, "/rpc")
	if resp, _ := post(t, base+"/other", "application/json", `{"jsonrpc":"2.0","method":"echo","id":1}`); resp.StatusCode != 404 {
		t.Fatalf("other path: %d", resp.StatusCode)
	}

	// A request in flight when Shutdown starts is answered.
	c := jsonrpc.NewHTTPClient(l.URL)
	defer c.Close()
	var got int64
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "sleep", map[string]int{"ms": 300}, &got) }()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil || got != 300 {
		t.Fatalf("in-flight call: %v %d", err, got)
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("listener did not stop")
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	// New connections are refused.
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), time.Second); err == nil {
		t.Fatal("still accepting after Shutdown")
	}
}

// ---- the HTTP client ----

func TestHTTPClient(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxBatchLen: 3}
	url := listenHTTP(t, srv, "/")
	cl, err := jsonrpc.Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, ok := cl.(*jsonrpc.HTTPClient); !ok {
		t.Fatalf("Dial(http) returned %T", cl)
	}
	ctx := context.Background()

	var diff float64
	if err := cl.Call(ctx, "subtract", []int{42, 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("subtract: %v %v", diff, err)
	}
	// A JSON-RPC error comes back as *Error, data included.
	err = cl.Call(ctx, "error", map[string]any{"code": -32099, "message": "boom", "data": map[string]int{"x": 1}}, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32099 || rpcErr.Message != "boom" || string(rpcErr.Data) != `{"x":1}` {
		t.Fatalf("error: %#v", err)
	}
	if err := cl.Call(ctx, "nope", nil, nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("nope: %v", err)
	}
	if err := cl.Notify(ctx, "update", []int{1}); err != nil {
		t.Fatalf("Notify: %v", err)
	}

	// A batch: results matched to calls by id, notifications get nothing.
	var b jsonrpc.Batch
	var sum float64
	var data []any
	c1 := b.Call("sum", []int{1, 2, 4}, &sum)
	b.Notify("notify_hello", []int{7})
	c2 := b.Call("get_data", nil, &data)
	if err := cl.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || sum != 7 || c2.Err != nil || fmt.Sprint(data) != "[hello 5]" {
		t.Fatalf("batch: %v %v %v %v", c1.Err, sum, c2.Err, data)
	}

	// A batch of notifications only.
	var nb jsonrpc.Batch
	nb.Notify("update", nil)
	nb.Notify("update", nil)
	if err := cl.Batch(ctx, &nb); err != nil {
		t.Fatal(err)
	}

	// A batch over the server's limit: one error object, every call has it.
	var lb jsonrpc.Batch
	var calls []*jsonrpc.BatchCall
	for range 4 {
		calls = append(calls, lb.Call("sum", []int{1}, nil))
	}
	if err := cl.Batch(ctx, &lb); err != nil {
		t.Fatal(err)
	}
	for i, c := range calls {
		if !errors.As(c.Err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "batch too long") {
			t.Fatalf("call %d: %v", i, c.Err)
		}
	}

	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cl.Call(ctx, "sum", []int{1}, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestHTTPClientReusesConnections(t *testing.T) {
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(newDemoServer())
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	c := jsonrpc.NewHTTPClient(ts.URL)
	defer c.Close()
	ctx := context.Background()
	for i := range 20 {
		// Calls, notifications and error replies all leave the connection reusable.
		if err := c.Call(ctx, "sum", []int{i}, nil); err != nil {
			t.Fatal(err)
		}
		c.Notify(ctx, "update", nil)
		c.Call(ctx, "nope", nil, nil)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 60 sequential requests, want 1", n)
	}
}

func TestHTTPClientHeaders(t *testing.T) {
	srv := newDemoServer()
	var auth, ua atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		ua.Store(r.Header.Values("X-Trace"))
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c := jsonrpc.NewHTTPClient(ts.URL, jsonrpc.WithHeader("Authorization", "Bearer s3cret"),
		jsonrpc.WithHeader("X-Trace", "a"), jsonrpc.WithHeader("X-Trace", "b"))
	defer c.Close()
	if err := c.Call(context.Background(), "echo", []int{1}, nil); err != nil {
		t.Fatal(err)
	}
	if auth.Load() != "Bearer s3cret" || fmt.Sprint(ua.Load()) != "[a b]" {
		t.Fatalf("headers: %v %v", auth.Load(), ua.Load())
	}
}

// fakeServer answers every POST with the given status, content type and body.
func fakeServer(t *testing.T, status int, contentType, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestHTTPClientErrorMapping(t *testing.T) {
	ctx := context.Background()
	const js = "application/json"
	call := func(t *testing.T, url string, opts ...jsonrpc.DialOption) error {
		c := jsonrpc.NewHTTPClient(url, opts...)
		defer c.Close()
		var v any
		return c.Call(ctx, "m", nil, &v)
	}
	t.Run("500", func(t *testing.T) {
		err := call(t, fakeServer(t, 500, "text/plain", "database on fire"))
		var he *jsonrpc.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 500 || he.Body != "database on fire" {
			t.Fatalf("%#v", err)
		}
		if !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "database on fire") {
			t.Fatalf("message %q", err)
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			t.Fatal("a plain-text 500 is not a JSON-RPC error")
		}
	})
	t.Run("404", func(t *testing.T) {
		var he *jsonrpc.HTTPError
		if err := call(t, fakeServer(t, 404, "", "")); !errors.As(err, &he) || he.StatusCode != 404 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("401 with a JSON-RPC error", func(t *testing.T) {
		err := call(t, fakeServer(t, 401, js, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"unauthorized"}}`))
		var he *jsonrpc.HTTPError
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &he) || he.StatusCode != 401 || !errors.As(err, &rpcErr) || rpcErr.Message != "unauthorized" {
			t.Fatalf("%#v", err)
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		err := call(t, fakeServer(t, 200, "text/html", "<html>login</html>"))
		if err == nil || !strings.Contains(err.Error(), "text/html") || !strings.Contains(err.Error(), "<html>login") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("empty body for a call", func(t *testing.T) {
		for _, status := range []int{200, 202, 204} {
			err := call(t, fakeServer(t, status, js, ""))
			if err == nil || !strings.Contains(err.Error(), "no response") {
				t.Fatalf("%d: %v", status, err)
			}
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		err := call(t, fakeServer(t, 200, js, `{"jsonrpc":"2.0","id":1,"result":`))
		if err == nil || !strings.Contains(err.Error(), "invalid response") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("not a response", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1}`,
			`{"id":1,"result":1}`,
			`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}`,
			`[{"jsonrpc":"2.0","id":1,"result":1}]`,
			`"hello"`,
		} {
			err := call(t, fakeServer(t, 200, js, body))
			if err == nil || !strings.Contains(err.Error(), "invalid response") {
				t.Fatalf("%s: %v", body, err)
			}
		}
	})
	t.Run("wrong id", func(t *testing.T) {
		for _, id := range []string{`2`, `"1"`, `1.0`} {
			err := call(t, fakeServer(t, 200, js, `{"jsonrpc":"2.0","id":`+id+`,"result":1}`))
			if err == nil || !strings.Contains(err.Error(), "does not match") {
				t.Fatalf("id %s: %v", id, err)
			}
		}
	})
	t.Run("error with id null", func(t *testing.T) {
		err := call(t, fakeServer(t, 200, js, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`))
		if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeParseError}) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("response over the limit", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"result":"` + strings.Repeat("x", 2000) + `"}`
		err := call(t, fakeServer(t, 200, js, big), jsonrpc.WithMaxMessageSize(1000))
		if err == nil || !strings.Contains(err.Error(), "limit") {
			t.Fatalf("%v", err)
		}
		if err := call(t, fakeServer(t, 200, js, big), jsonrpc.WithMaxMessageSize(5000)); err != nil {
			t.Fatalf("under the limit: %v", err)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := l.Addr().String()
		l.Close()
		if err := call(t, "http://"+addr); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestHTTPClientNotifyReplies(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		ct     string
		body   string
		ok     bool
	}{
		{204, "", "", true},
		{202, "", "", true},
		{200, "", "", true},
		{200, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}`, false},
		{200, "text/plain", "ok", false},
		{500, "", "", false},
	} {
		c := jsonrpc.NewHTTPClient(fakeServer(t, tc.status, tc.ct, tc.body))
		err := c.Notify(ctx, "m", nil)
		c.Close()
		if (err == nil) != tc.ok {
			t.Fatalf("%d %q: %v", tc.status, tc.body, err)
		}
		if tc.body != "" && tc.ct == "application/json" && !errors.Is(err, &jsonrpc.Error{Code: -32600}) {
			t.Fatalf("want the *Error, got %v", err)
		}
	}
}

func TestHTTPClientBatchMatching(t *testing.T) {
	ctx := context.Background()
	// Responses in any order, one call unanswered.
	url := fakeServer(t, 200, "application/json",
		`[{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}},{"jsonrpc":"2.0","id":1,"result":"one"}]`)
	c := jsonrpc.NewHTTPClient(url)
	defer c.Close()
	var b jsonrpc.Batch
	var one string
	c1 := b.Call("a", nil, &one)
	c2 := b.Call("b", nil, nil)
	c3 := b.Call("c", nil, nil)
	if err := c.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || one != "one" {
		t.Fatalf("c1: %v %q", c1.Err, one)
	}
	if !errors.Is(c2.Err, &jsonrpc.Error{Code: -32601}) {
		t.Fatalf("c2: %v", c2.Err)
	}
	if c3.Err == nil || !strings.Contains(c3.Err.Error(), "no response") {
		t.Fatalf("c3: %v", c3.Err)
	}

	// An empty reply to a batch with calls is an error of the whole batch.
	c = jsonrpc.NewHTTPClient(fakeServer(t, 204, "", ""))
	defer c.Close()
	var b2 jsonrpc.Batch
	b2.Call("a", nil, nil)
	if err := c.Batch(ctx, &b2); err == nil || !strings.Contains(err.Error(), "no response") {
		t.Fatalf("empty: %v", err)
	}
	// A reply naming an id that was not sent.
	c = jsonrpc.NewHTTPClient(fakeServer(t, 200, "application/json", `[{"jsonrpc":"2.0","id":99,"result":1}]`))
	defer c.Close()
	var b3 jsonrpc.Batch
	b3.Call("a", nil, nil)
	if err := c.Batch(ctx, &b3); err == nil || !strings.Contains(err.Error(), "matches no call") {
		t.Fatalf("stray id: %v", err)
	}
	var empty jsonrpc.Batch
	if err := c.Batch(ctx, &empty); err == nil {
		t.Fatal("empty batch accepted")
	}
}

func TestHTTPClientConcurrent(t *testing.T) {
	url := listenHTTP(t, &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}, "/")
	c := jsonrpc.NewHTTPClient(url)
	defer c.Close()
	errc := make(chan error, 32)
	for i := range 32 {
		go func() {
			var got []int
			err := c.Call(context.Background(), "echo", []int{i}, &got)
			if err == nil && (len(got) != 1 || got[0] != i) {
				err = fmt.Errorf("echo %d returned %v", i, got)
			}
			errc <- err
		}()
	}
	for range 32 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPSClientTLSConfig(t *testing.T) {
	ts := httptest.NewUnstartedServer(newDemoServer())
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	ts.StartTLS()
	defer ts.Close()
	ctx := context.Background()
	// An unknown certificate is refused...
	c := jsonrpc.NewHTTPClient(ts.URL)
	err := c.Call(ctx, "sum", []int{1}, nil)
	c.Close()
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	// ...and trusted with WithTLSConfig.
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	cl, err := jsonrpc.Dial(ctx, ts.URL, jsonrpc.WithTLSConfig(&tls.Config{RootCAs: pool}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var n float64
	if err := cl.Call(ctx, "sum", []int{1, 2}, &n); err != nil || n != 3 {
		t.Fatalf("%v %v", n, err)
	}
}

// discardResponse is a minimal http.ResponseWriter for benchmarks.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardResponse) WriteHeader(int)             {}

// BenchmarkHTTPServeHTTP measures the handler alone (no network): one
// small call per request.
func BenchmarkHTTPServeHTTP(b *testing.B) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	body := []byte(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`)
	w := &discardResponse{h: make(http.Header)}
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = int64(len(body))
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req.Body = io.NopCloser(rd)
		clear(w.h)
		srv.ServeHTTP(w, req)
	}
}

// BenchmarkHTTPClientCall measures a call over loopback HTTP with keep-alive.
func BenchmarkHTTPClientCall(b *testing.B) {
	ts := httptest.NewServer(&jsonrpc.Server{Handler: demo.Shared{}.NewMux()})
	defer ts.Close()
	c := jsonrpc.NewHTTPClient(ts.URL)
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var n float64
		if err := c.Call(ctx, "subtract", []int{42, 23}, &n); err != nil {
			b.Fatal(err)
		}
	}
}

// A connection accepted before Shutdown whose request arrives after it
// began is answered (http.Server.Shutdown alone would close it unanswered,
// which a proxy reports as 502 and cannot resend: the request was sent).
func TestHTTPShutdownAnswersARequestSentDuringIt(t *testing.T) {
	srv := newDemoServer()
	l, err := srv.Listen("http://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimSuffix(l.URL, "/"), "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(50 * time.Millisecond) // accepted, nothing read yet
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	time.Sleep(200 * time.Millisecond) // Shutdown is under way
	body := `{"jsonrpc":"2.0","method":"echo","params":["late"],"id":7}`
	fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("no answer to a request sent during Shutdown: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(got), `"late"`) || !resp.Close {
		t.Fatalf("answer: %d close=%v %s", resp.StatusCode, resp.Close, got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
