package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// timeoutMux has a handler that ignores its context ("stuck": sleeps 3 s),
// one that waits for it to end and reports why ("wait"), one that polls
// its Err and then reports why it ended ("poll"), one that reports
// whether its context has a deadline ("deadline"), and a fast one.
func timeoutMux(causes chan<- error) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "stuck", func(context.Context, struct{}) (string, error) {
		time.Sleep(3 * time.Second)
		return "late", nil
	})
	jsonrpc.Register(mux, "wait", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "", ctx.Err()
	})
	jsonrpc.Register(mux, "poll", func(ctx context.Context, _ struct{}) (string, error) {
		for ctx.Err() == nil { // never asks for Done
			time.Sleep(5 * time.Millisecond)
		}
		causes <- context.Cause(ctx)
		return "", ctx.Err()
	})
	jsonrpc.Register(mux, "deadline", func(ctx context.Context, _ struct{}) (bool, error) {
		_, ok := ctx.Deadline()
		return ok, nil
	})
	jsonrpc.Register(mux, "fast", func(context.Context, struct{}) (int, error) { return 1, nil })
	return mux
}

const timedOut = `{"jsonrpc":"2.0","id":2,"error":{"code":-32002,"message":"request timed out"}}`

// postRaw posts body and returns the status, the body and how long it took.
func postRaw(t *testing.T, url, body string) (int, string, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// listenDial serves srv on a loopback listener of scheme and dials it; the
// client closes with the test.
func listenDial(t *testing.T, ctx context.Context, srv *jsonrpc.Server, scheme string) jsonrpc.Client {
	t.Helper()
	l, err := srv.Listen(scheme + "://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	c, err := jsonrpc.Dial(ctx, l.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A handler that runs past HandlerTimeout is answered at its deadline with
// -32002 "request timed out" even when it ignores its context; a handler
// that watches its context sees it cancelled with the timeout as cause; in
// a batch the late element gets the error and the others their results.
func TestHandlerTimeoutHTTP(t *testing.T) {
	causes := make(chan error, 4)
	// One second: the batch's quick elements must be answered before it
	// even on a loaded machine (its helpers start after batchWatch), and
	// "stuck" sleeps three.
	srv := &jsonrpc.Server{Handler: timeoutMux(causes), HandlerTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, tc := range []struct{ name, req, want string }{
		{"stuck", `{"jsonrpc":"2.0","method":"stuck","id":2}`, timedOut},
		{"wait", `{"jsonrpc":"2.0","method":"wait","id":2}`, timedOut},
		{"poll", `{"jsonrpc":"2.0","method":"poll","id":2}`, timedOut},
		{"batch", `[{"jsonrpc":"2.0","method":"fast","id":1},{"jsonrpc":"2.0","method":"stuck","id":2},{"jsonrpc":"2.0","method":"stuck"},{"jsonrpc":"2.0","method":"nope","id":3}]`,
			`[{"jsonrpc":"2.0","id":1,"result":1},` + timedOut + `,{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: nope"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, took := postRaw(t, hs.URL, tc.req)
			if status != 200 || body != tc.want {
				t.Fatalf("got %d %s\nwant 200 %s", status, body, tc.want)
			}
			if took > 2500*time.Millisecond {
				t.Fatalf("answered after %v: the timeout waited for the handler", took)
			}
		})
	}
	for _, h := range []string{"wait", "poll"} {
		select {
		case err := <-causes:
			if err == nil || !strings.Contains(err.Error(), "HandlerTimeout") {
				t.Fatalf("the handler's context ended with cause %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the context of a handler (%s) was not cancelled", h)
		}
	}
}

// A handler's context ends once its request is answered, also when the
// handler kept it (a goroutine it started), on HTTP and on a connection.
func TestHandlerContextEndsWithTheRequest(t *testing.T) {
	kept := make(chan context.Context, 2)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "keep", func(ctx context.Context, _ struct{}) (int, error) {
		kept <- ctx
		return 1, nil
	})
	srv := &jsonrpc.Server{Handler: mux, HandlerTimeout: time.Minute}
	defer srv.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, scheme := range []string{"http", "tcp"} {
		c := listenDial(t, ctx, srv, scheme)
		if err := c.Call(ctx, "keep", nil, nil); err != nil {
			t.Fatal(err)
		}
		hctx := <-kept
		select {
		case <-hctx.Done():
		case <-ctx.Done():
			t.Fatalf("%s: the handler's context is still open after the answer", scheme)
		}
		if !errors.Is(hctx.Err(), context.Canceled) {
			t.Errorf("%s: Err = %v", scheme, hctx.Err())
		}
		if _, ok := hctx.Deadline(); !ok {
			t.Errorf("%s: no deadline under HandlerTimeout", scheme)
		}
	}
}

// The defaults: HTTP requests run under a 30 s deadline, calls on streams
// and WebSocket under none; a HandlerTimeout set applies on every transport.
func TestHandlerTimeoutDefaults(t *testing.T) {
	causes := make(chan error, 4)
	quiet := slog.New(slog.DiscardHandler)
	srv := &jsonrpc.Server{Handler: timeoutMux(causes), Logger: quiet}
	set := &jsonrpc.Server{Handler: timeoutMux(causes), HandlerTimeout: 200 * time.Millisecond, Logger: quiet}
	defer srv.Shutdown(context.Background())
	defer set.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, scheme := range []string{"http", "tcp", "ws"} {
		t.Run(scheme, func(t *testing.T) {
			for _, s := range []*jsonrpc.Server{srv, set} {
				c := listenDial(t, ctx, s, scheme)
				var has bool
				if err := c.Call(ctx, "deadline", nil, &has); err != nil {
					t.Fatal(err)
				}
				if want := s == set || scheme == "http"; has != want {
					t.Errorf("HandlerTimeout %v: the handler's context has a deadline: %v, want %v", s.HandlerTimeout, has, want)
				}
				if s == set {
					err := c.Call(ctx, "stuck", nil, nil)
					if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout, Message: "request timed out"}) {
						t.Errorf("stuck: %v", err)
					}
					var b jsonrpc.Batch
					var one int
					fast, stuck := b.Call("fast", nil, &one), b.Call("stuck", nil, nil)
					if err := c.Batch(ctx, &b); err != nil || fast.Err != nil || one != 1 || !errors.Is(stuck.Err, &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout}) {
						t.Errorf("batch: %v; fast %v %d; stuck %v", err, fast.Err, one, stuck.Err)
					}
				}
			}
		})
	}
}

// An HTTP body that trickles in is cut at HTTPBodyTimeout with 408 and the
// connection closed, also when the Server is mounted on the user's own
// http.Server; a body that arrives in time is served.
func TestHTTPBodyTimeout(t *testing.T) {
	srv := &jsonrpc.Server{Handler: timeoutMux(nil), HTTPBodyTimeout: 500 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	nc, err := net.Dial("tcp", strings.TrimPrefix(hs.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	body := `{"jsonrpc":"2.0","method":"fast","id":1}`
	io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n")
	start := time.Now()
	go func() {
		for i := range len(body) {
			if _, err := io.WriteString(nc, body[i:i+1]); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond) // 4 s for the whole body
		}
	}()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive within 500ms") || !resp.Close {
		t.Fatalf("got %d close=%v %q", resp.StatusCode, resp.Close, b)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("cut after %v", took)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open")
	}
	if status, got, _ := postRaw(t, hs.URL, body); status != 200 || got != `{"jsonrpc":"2.0","id":1,"result":1}` {
		t.Fatalf("in time: %d %s", status, got)
	}
}

// Streamable HTTP holds a set HandlerTimeout for a request answered with
// JSON (served at once), as for one answered on an event stream (served
// on a connection): the handler's context ends at the deadline, and the
// request is answered with -32002.
func TestHandlerTimeoutStreamableJSON(t *testing.T) {
	srv := &jsonrpc.Server{Handler: timeoutMux(make(chan error, 2)), HandlerTimeout: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	for _, sse := range []jsonrpc.SSEPolicy{jsonrpc.SSENever, jsonrpc.SSEAlways} {
		hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, SSE: sse}))
		defer hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Call(ctx, "initialize", map[string]any{}, nil) // method not found, but a session
		start := time.Now()
		err = c.Call(ctx, "wait", nil, nil)
		if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout, Message: "request timed out"}) {
			t.Errorf("SSE policy %v: wait: %v after %v", sse, err, time.Since(start))
		}
	}
}

// A Streamable HTTP POST served at once (no session that keeps its events)
// is answered at the handler timeout with -32002 even while its handler,
// ignoring its context, still runs: as JSON (complete), or as the last
// event of an event stream, which then ends. Shutdown waits for the
// handlers.
func TestHandlerTimeoutStreamableAtOnce(t *testing.T) {
	mux := timeoutMux(make(chan error, 2))
	jsonrpc.Register(mux, "told", func(ctx context.Context, _ struct{}) (string, error) {
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "note", nil); err != nil {
			return "", err
		}
		time.Sleep(3 * time.Second)
		return "late", nil
	})
	srv := &jsonrpc.Server{Handler: mux, HandlerTimeout: 300 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	defer srv.Shutdown(context.Background())
	for _, tc := range []struct {
		sse            jsonrpc.SSEPolicy
		method, accept string
		want           []string // the answer's JSON, or its events' data
	}{
		{jsonrpc.SSENever, "stuck", "application/json, text/event-stream", []string{timedOut}},
		{jsonrpc.SSEAuto, "stuck", "application/json, text/event-stream", []string{timedOut}},
		{jsonrpc.SSEAuto, "stuck", "application/json", []string{timedOut}},
		{jsonrpc.SSEAlways, "stuck", "application/json, text/event-stream", []string{timedOut}},
		{jsonrpc.SSEAuto, "told", "application/json, text/event-stream", []string{`{"jsonrpc":"2.0","method":"note"}`, timedOut}},
	} {
		hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{SSE: tc.sse}))
		defer hs.Close()
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"`+tc.method+`","id":2}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", tc.accept)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got []string // to the end of the answer
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok && d != "" {
					got = append(got, d)
				}
			}
		} else {
			b, _ := io.ReadAll(resp.Body)
			got = []string{string(b)}
		}
		took := time.Since(start)
		resp.Body.Close()
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("SSE %v, %s, Accept %q: got %q, want %q", tc.sse, tc.method, tc.accept, got, tc.want)
		}
		if took > 2500*time.Millisecond {
			t.Errorf("SSE %v, %s, Accept %q: answered after %v: the timeout waited for the handler", tc.sse, tc.method, tc.accept, took)
		}
	}
}
