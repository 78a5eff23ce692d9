package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// atOnceClient bounds every exchange of these tests.
var atOnceClient = &http.Client{Timeout: 10 * time.Second}

// atOncePOST POSTs body as an MCP client does (JSON and event streams)
// with the headers given, and returns the answer's status, Content-Type
// and body.
func atOncePOST(t *testing.T, url, body string, header map[string]string) (status int, contentType, answer string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := atOnceClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// atOnceSession initializes a session and returns its id.
func atOnceSession(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := atOnceClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session: %d", resp.StatusCode)
	}
	return id
}

// waitCause waits up to 5 s for ctx to end and returns its cause.
func waitCause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Second):
		return errors.New("not cancelled within 5 s")
	}
}

// waitMux serves "initialize" ("ready") and "wait", which reaches its
// client first when open is set (its answer becomes an event stream),
// closes started, and sends on cancelled how its context ended.
func waitMux(open bool) (mux *Mux, started chan struct{}, cancelled chan error) {
	started, cancelled = make(chan struct{}), make(chan error, 1)
	mux = NewMux()
	mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
	mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
		if open {
			ConnFromContext(ctx).Notify(ctx, "n", nil)
		}
		close(started)
		cancelled <- waitCause(ctx)
		return nil, ctx.Err()
	})
	return mux, started, cancelled
}

// A session that ends cancels its requests served at once under every
// convention, none too (only those under a Convention were cancelled:
// the POST was routed, and kept its requests, for cancels alone), whether
// the handler opened its event stream or not.
func TestStreamableAtOnceSessionEndAnyConvention(t *testing.T) {
	for _, cv := range []Convention{ConventionNone, ConventionLSP, ConventionMCP} {
		for _, open := range []bool{false, true} {
			t.Run(fmt.Sprint(cv)+map[bool]string{false: "/json", true: "/opened"}[open], func(t *testing.T) {
				mux, started, cancelled := waitMux(open)
				srv := &Server{Handler: mux, Convention: cv}
				hs := httptest.NewServer(srv.StreamableHTTPHandler(StreamableHTTPOptions{Sessions: true, EventStoreSize: -1, KeepAlive: -1}))
				t.Cleanup(hs.Close)
				session := atOnceSession(t, hs.URL)
				done := make(chan struct{})
				go func() {
					defer close(done)
					atOncePOST(t, hs.URL, `{"jsonrpc":"2.0","id":"w","method":"wait"}`, map[string]string{"Mcp-Session-Id": session})
				}()
				<-started
				del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				del.Header.Set("Mcp-Session-Id", session)
				resp, err := atOnceClient.Do(del)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if err := <-cancelled; err != ErrClosed {
					t.Errorf("the handler's context ended with %v", err)
				}
				<-done
			})
		}
	}
}

// atOnceMux has "plain" (answers "ok"), "note" (notifies its client,
// which opens the POST's event stream, then answers "noted"), "boom"
// (panics) and "noteboom" (notifies, then panics).
func atOnceMux() *Mux {
	mux := NewMux()
	mux.HandleFunc("plain", func(context.Context, *Request) (any, error) { return "ok", nil })
	mux.HandleFunc("note", func(ctx context.Context, _ *Request) (any, error) {
		return "noted", ConnFromContext(ctx).Notify(ctx, "n", nil)
	})
	mux.HandleFunc("boom", func(context.Context, *Request) (any, error) { panic("boom") })
	mux.HandleFunc("noteboom", func(ctx context.Context, _ *Request) (any, error) {
		if err := ConnFromContext(ctx).Notify(ctx, "n", nil); err != nil {
			return nil, err
		}
		panic("boom")
	})
	return mux
}

const (
	atOnceNote     = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n"
	atOncePanicked = `{"code":-32603,"message":"internal error: the handler panicked"}`
)

// A handler served at once that panics gets -32603, as JSON or, once it
// opened the event stream, as its last event, alone or in a batch; the
// server goes on serving.
func TestStreamableAtOncePanic(t *testing.T) {
	srv := &Server{Handler: atOnceMux(), Logger: slog.New(slog.DiscardHandler)}
	_, url := lazyServer(t, srv, StreamableHTTPOptions{KeepAlive: -1})
	for _, tc := range []struct{ body, ct, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"boom"}`, "application/json", `{"jsonrpc":"2.0","id":1,"error":` + atOncePanicked + `}`},
		{`{"jsonrpc":"2.0","id":1,"method":"noteboom"}`, "text/event-stream", atOnceNote + "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":" + atOncePanicked + "}\n\n"},
		{`[{"jsonrpc":"2.0","id":1,"method":"noteboom"},{"jsonrpc":"2.0","id":2,"method":"plain"}]`, "text/event-stream",
			atOnceNote + "event: message\ndata: [{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":" + atOncePanicked + "},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"ok\"}]\n\n"},
		{`{"jsonrpc":"2.0","id":3,"method":"plain"}`, "application/json", `{"jsonrpc":"2.0","id":3,"result":"ok"}`},
	} {
		if status, ct, got := atOncePOST(t, url, tc.body, nil); status != http.StatusOK || ct != tc.ct || got != tc.want {
			t.Errorf("%s: %d %s %q\nwant %s %q", tc.body, status, ct, got, tc.ct, tc.want)
		}
	}
}

// Ids come back byte for byte from a POST served at once, in its JSON
// answer and in its event stream's; a batch's notifications are not
// answered.
func TestStreamableAtOnceIDsVerbatim(t *testing.T) {
	_, url := lazyServer(t, &Server{Handler: atOnceMux()}, StreamableHTTPOptions{KeepAlive: -1})
	ids := []string{`1.0`, `"\u00e9"`, `123456789012345678901234567890`, `-0`, `1e2`, `"a\/b"`}
	for _, id := range ids {
		for _, method := range []string{"plain", "note"} {
			status, ct, got := atOncePOST(t, url, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`"}`, nil)
			want := `{"jsonrpc":"2.0","id":` + id + `,"result":"ok"}`
			if method == "note" {
				want = atOnceNote + "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":\"noted\"}\n\n"
			}
			if status != http.StatusOK || got != want {
				t.Errorf("id %s, %s: %d %s %q\nwant %q", id, method, status, ct, got, want)
			}
		}
	}
	for _, method := range []string{"plain", "note"} {
		batch := `[{"jsonrpc":"2.0","id":1.0,"method":"plain"},{"jsonrpc":"2.0","method":"plain"},{"jsonrpc":"2.0","id":"\u00e9","method":"` + method +
			`"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"plain"}]`
		reply := `[{"jsonrpc":"2.0","id":1.0,"result":"ok"},{"jsonrpc":"2.0","id":"\u00e9","result":"` + map[string]string{"plain": "ok", "note": "noted"}[method] +
			`"},{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":"ok"}]`
		status, _, got := atOncePOST(t, url, batch, nil)
		// the notification "note" opens the event stream whatever method is
		want := atOnceNote + "event: message\ndata: " + reply + "\n\n"
		if method == "note" {
			want = atOnceNote + atOnceNote + "event: message\ndata: " + reply + "\n\n"
		}
		if status != http.StatusOK || got != want {
			t.Errorf("batch with %s: %d %q\nwant %q", method, status, got, want)
		}
	}
	// Notifications only: accepted, no body.
	if status, _, got := atOncePOST(t, url, `[{"jsonrpc":"2.0","method":"plain"},{"jsonrpc":"2.0","method":"plain"}]`, nil); status != http.StatusAccepted || got != "" {
		t.Errorf("notifications: %d %q", status, got)
	}
}

// A client that goes away cancels the context of its request served at
// once, whether its handler opened the event stream or not, on ServeHTTP's
// goroutine or aside (under a handler timeout, with no events kept to
// resume from): context.Canceled, or ErrClosed once the answer is let go.
func TestStreamableAtOnceClientGone(t *testing.T) {
	for _, tc := range []struct {
		open  bool
		timed time.Duration
	}{{false, 0}, {true, 0}, {false, time.Minute}, {true, time.Minute}} {
		t.Run(fmt.Sprint("open=", tc.open, "/timeout=", tc.timed), func(t *testing.T) {
			mux, started, cancelled := waitMux(tc.open)
			_, url := lazyServer(t, &Server{Handler: mux, HandlerTimeout: tc.timed}, StreamableHTTPOptions{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"wait"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			errc := make(chan error, 1)
			go func() {
				resp, err := atOnceClient.Do(req)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errc <- err
			}()
			<-started
			cancel()
			if err := <-cancelled; !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
				t.Errorf("the handler's context ended with %v", err)
			}
			if err := <-errc; err == nil {
				t.Error("the POST ended without an error")
			}
		})
	}
}

// MCP's notifications/cancelled, POSTed on its own, reaches a request
// served at once under the stateless revision 2026-07-28 (opened event
// stream or not): the handler's context is cancelled, the request goes
// unanswered and its POST ends.
func TestStreamableAtOnceCancel2026(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, open := range []bool{false, true} {
		t.Run(fmt.Sprint("open=", open), func(t *testing.T) {
			mux, started, cancelled := waitMux(open)
			srv := &Server{Handler: mux, Convention: ConventionMCP}
			_, url := lazyServer(t, srv, StreamableHTTPOptions{KeepAlive: -1, StatelessVersions: []string{MCPVersion2026}})
			type answer struct {
				status  int
				ct, got string
			}
			answers := make(chan answer, 1)
			go func() {
				status, ct, got := atOncePOST(t, url, `{"jsonrpc":"2.0","id":"w","method":"wait","params":{`+meta+`}}`,
					map[string]string{"MCP-Protocol-Version": MCPVersion2026, "Mcp-Method": "wait"})
				answers <- answer{status, ct, got}
			}()
			<-started
			status, _, got := atOncePOST(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w",`+meta+`}}`,
				map[string]string{"MCP-Protocol-Version": MCPVersion2026, "Mcp-Method": "notifications/cancelled"})
			if status != http.StatusAccepted || got != "" {
				t.Fatalf("the cancel's answer: %d %q", status, got)
			}
			if err := <-cancelled; err != errPeerCancelled {
				t.Errorf("the handler's context ended with %v", err)
			}
			a := <-answers
			if strings.Contains(a.got, `"id":"w"`) {
				t.Errorf("the cancelled request was answered: %d %s %q", a.status, a.ct, a.got)
			}
			t.Logf("the cancelled POST's answer: %d %s %q", a.status, a.ct, a.got)
		})
	}
}

// A graceful Shutdown finishes the POSTs served at once that it found
// running, their handlers' contexts left alone, whether they opened their
// event stream or not, with sessions (keeping no events) or without.
func TestStreamableAtOnceShutdown(t *testing.T) {
	for _, sessions := range []bool{false, true} {
		for _, open := range []bool{false, true} {
			t.Run(fmt.Sprint("sessions=", sessions, ",open=", open), func(t *testing.T) {
				started, release := make(chan struct{}), make(chan struct{})
				mux := NewMux()
				mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
				mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
					if open {
						ConnFromContext(ctx).Notify(ctx, "n", nil)
					}
					close(started)
					select {
					case <-release:
					case <-ctx.Done():
						return nil, context.Cause(ctx)
					}
					return "done", nil
				})
				srv := &Server{Handler: mux, Convention: ConventionMCP}
				l, err := srv.Listen("http://127.0.0.1:0/mcp", ListenStreamableHTTP(StreamableHTTPOptions{Sessions: sessions, EventStoreSize: -1, KeepAlive: -1}))
				if err != nil {
					t.Fatal(err)
				}
				header := map[string]string{}
				if sessions {
					header["Mcp-Session-Id"] = atOnceSession(t, l.URL)
				}
				type answer struct {
					status int
					got    string
				}
				answers := make(chan answer, 1)
				go func() {
					status, _, got := atOncePOST(t, l.URL, `{"jsonrpc":"2.0","id":1,"method":"wait"}`, header)
					answers <- answer{status, got}
				}()
				<-started
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				shut := make(chan error, 1)
				go func() { shut <- srv.Shutdown(ctx) }()
				time.Sleep(50 * time.Millisecond) // Shutdown under way
				close(release)
				want := `{"jsonrpc":"2.0","id":1,"result":"done"}`
				if open {
					want = atOnceNote + "event: message\ndata: " + want + "\n\n"
					if sessions {
						want = "retry: 1000\n\n" + want
					}
				}
				if a := <-answers; a.status != http.StatusOK || a.got != want {
					t.Errorf("the POST's answer: %d %q, want %q", a.status, a.got, want)
				}
				if err := <-shut; err != nil {
					t.Errorf("Shutdown: %v", err)
				}
			})
		}
	}
}

// A cancel reaches a request of a batch served at once that has not
// started yet (MaxConcurrency 1: it waits for the one before it): it
// starts cancelled, and goes unanswered under MCP,
// is answered -32800 under LSP.
func TestStreamableAtOnceCancelQueued(t *testing.T) {
	for _, tc := range []struct {
		cv     Convention
		cancel string
		answer string
	}{
		{ConventionMCP, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`, `[{"jsonrpc":"2.0","id":"a","result":"done"}]`},
		{ConventionLSP, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}}`,
			`[{"jsonrpc":"2.0","id":"a","result":"done"},{"jsonrpc":"2.0","id":"b","error":{"code":-32800,"message":"request cancelled"}}]`},
	} {
		t.Run(fmt.Sprint(tc.cv), func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			mux := NewMux()
			mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
				close(started)
				select {
				case <-release:
				case <-time.After(5 * time.Second):
				}
				return "done", nil
			})
			mux.HandleFunc("rec", func(ctx context.Context, _ *Request) (any, error) { return "ran", ctx.Err() })
			srv := &Server{Handler: mux, Convention: tc.cv, MaxConcurrency: 1}
			_, url := lazyServer(t, srv, StreamableHTTPOptions{KeepAlive: -1})
			answers := make(chan string, 1)
			go func() {
				_, _, got := atOncePOST(t, url, `[{"jsonrpc":"2.0","id":"a","method":"wait"},{"jsonrpc":"2.0","id":"b","method":"rec"}]`, nil)
				answers <- got
			}()
			<-started
			if status, _, got := atOncePOST(t, url, tc.cancel, nil); status != http.StatusAccepted || got != "" {
				t.Fatalf("the cancel's answer: %d %q", status, got)
			}
			close(release)
			if got := <-answers; got != tc.answer {
				t.Errorf("the batch's answer: %q, want %q", got, tc.answer)
			}
		})
	}
}

// The Server's limits hold for a POST served at once as on plain HTTP: a
// body over MaxMessageSize gets 413 (by its Content-Length or as a
// chunked body passes it), a batch over MaxBatchLen one -32600, and at
// most MaxConcurrency handlers of a batch run at once, whether one of
// them opened the event stream or not; the server goes on serving.
func TestStreamableAtOnceLimits(t *testing.T) {
	running, most := make(chan int, 1), 0
	running <- 0
	mux := atOnceMux()
	mux.HandleFunc("busy", func(ctx context.Context, req *Request) (any, error) {
		n := <-running + 1
		most = max(most, n)
		running <- n
		if string(req.Params) == `["open"]` {
			ConnFromContext(ctx).Notify(ctx, "n", nil)
		}
		time.Sleep(5 * time.Millisecond)
		running <- <-running - 1
		return "ok", nil
	})
	srv := &Server{Handler: mux, MaxMessageSize: 1 << 10, MaxBatchLen: 8, MaxConcurrency: 2, Logger: slog.New(slog.DiscardHandler)}
	_, url := lazyServer(t, srv, StreamableHTTPOptions{KeepAlive: -1})
	big := `{"jsonrpc":"2.0","id":1,"method":"plain","params":["` + strings.Repeat("x", 2<<10) + `"]}`
	if status, _, _ := atOncePOST(t, url, big, nil); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over MaxMessageSize: %d", status)
	}
	req, _ := http.NewRequest(http.MethodPost, url, io.MultiReader(strings.NewReader(big))) // no Content-Length: chunked
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := atOnceClient.Do(req); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a chunked body over MaxMessageSize: %d", resp.StatusCode)
	}
	long := "[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"plain"},`, 9)
	if status, _, got := atOncePOST(t, url, long[:len(long)-1]+"]", nil); status != http.StatusOK || !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600`) {
		t.Errorf("a batch over MaxBatchLen: %d %q", status, got)
	}
	for _, open := range []string{"", "open"} {
		var b strings.Builder
		for i := range 8 {
			fmt.Fprintf(&b, `,{"jsonrpc":"2.0","id":%d,"method":"busy","params":["%s"]}`, i, open)
		}
		status, _, got := atOncePOST(t, url, "["+b.String()[1:]+"]", nil)
		if status != http.StatusOK || strings.Count(got, `"result":"ok"`) != 8 {
			t.Errorf("a batch of 8 (%q): %d %q", open, status, got)
		}
		if n := <-running; n != 0 || most > 2 {
			t.Errorf("a batch of 8 (%q): %d handlers at most at once, %d still running; MaxConcurrency is 2", open, most, n)
		} else {
			running <- 0
		}
	}
	if status, _, got := atOncePOST(t, url, `{"jsonrpc":"2.0","id":1,"method":"plain"}`, nil); status != http.StatusOK || got != `{"jsonrpc":"2.0","id":1,"result":"ok"}` {
		t.Errorf("after: %d %q", status, got)
	}
}

// Shutdown waits for the requests being served by a handler mounted on an
// http.Server of one's own (plain HTTP, and a Streamable HTTP POST served
// at once): every request already read is answered before it returns.
func TestShutdownWaitsForHTTPRequests(t *testing.T) {
	for _, kind := range []string{"http", "streamable"} {
		t.Run(kind, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			mux := NewMux()
			mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
				close(started)
				<-release
				return "done", nil
			})
			srv := &Server{Handler: mux}
			var h http.Handler = srv
			if kind == "streamable" {
				h = srv.StreamableHTTPHandler(StreamableHTTPOptions{})
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			defer free() // before hs.Close, which waits for the handler
			answered := make(chan string, 1)
			go func() {
				_, _, got := atOncePOST(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"wait"}`, nil)
				answered <- got
			}()
			<-started
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- srv.Shutdown(ctx) }()
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned (%v) while a request was being served", err)
			case <-time.After(100 * time.Millisecond):
			}
			free()
			if err := <-shut; err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			select {
			case got := <-answered:
				if got != `{"jsonrpc":"2.0","id":1,"result":"done"}` {
					t.Errorf("the answer: %q", got)
				}
			case <-time.After(5 * time.Second):
				t.Error("no answer")
			}
		})
	}
}

// A client that takes no event stream (Accept: application/json, or a
// server under SSENever) cancels its requests as one that does: under MCP
// the request goes unanswered (202, no body), under LSP it gets -32800;
// 2025-11-25 sessions and 2026-07-28 stateless alike.
func TestStreamableAtOnceCancelJSONOnly(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name      string
		cv        Convention
		stateless bool
		cancel    string
		status    int
		answer    string
	}{
		{"MCP session", ConventionMCP, false, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`, http.StatusAccepted, ""},
		{"LSP session", ConventionLSP, false, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"w"}}`, http.StatusOK, `{"jsonrpc":"2.0","id":"w","error":{"code":-32800,"message":"request cancelled"}}`},
		{"MCP 2026-07-28", ConventionMCP, true, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w",` + meta + `}}`, http.StatusAccepted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux, started, cancelled := waitMux(false)
			srv := &Server{Handler: mux, Convention: tc.cv}
			opts := StreamableHTTPOptions{Sessions: !tc.stateless, SSE: SSENever, KeepAlive: -1}
			header := map[string]string{"Accept": "application/json"}
			call, cancel := `{"jsonrpc":"2.0","id":"w","method":"wait"}`, tc.cancel
			if tc.stateless {
				opts.StatelessVersions = []string{MCPVersion2026}
				header["MCP-Protocol-Version"] = MCPVersion2026
				call = `{"jsonrpc":"2.0","id":"w","method":"wait","params":{` + meta + `}}`
			}
			_, url := lazyServer(t, srv, opts)
			if !tc.stateless {
				header["Mcp-Session-Id"] = atOnceSession(t, url)
			}
			type answer struct {
				status int
				got    string
			}
			answers := make(chan answer, 1)
			go func() {
				h := maps.Clone(header)
				if tc.stateless {
					h["Mcp-Method"] = "wait"
				}
				status, _, got := atOncePOST(t, url, call, h)
				answers <- answer{status, got}
			}()
			<-started
			h := maps.Clone(header)
			if tc.stateless {
				h["Mcp-Method"] = "notifications/cancelled"
			}
			if status, _, got := atOncePOST(t, url, cancel, h); status != http.StatusAccepted || got != "" {
				t.Fatalf("the cancel's answer: %d %q", status, got)
			}
			select {
			case err := <-cancelled:
				if err != errPeerCancelled {
					t.Errorf("the handler's context ended with %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the cancel did not reach the request")
			}
			if a := <-answers; a.status != tc.status || a.got != tc.answer {
				t.Errorf("the cancelled POST's answer: %d %q, want %d %q", a.status, a.got, tc.status, tc.answer)
			}
		})
	}
}

// A cancel in the same batch as the request it names reaches it, served
// at once (under a handler timeout too, for a client that takes JSON
// only, and aside, for one that takes event streams): before the
// request, it starts cancelled; after it, it cancels it while it runs (the
// batch's later elements are served beside a slow one). MCP leaves it
// unanswered (202 for a client that takes JSON only), LSP answers -32800.
func TestStreamableAtOnceCancelInBatch(t *testing.T) {
	const (
		mcpCancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`
		lspCancel = `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}}`
		call      = `{"jsonrpc":"2.0","id":"b","method":"rec"}`
		lspAnswer = `[{"jsonrpc":"2.0","id":"b","error":{"code":-32800,"message":"request cancelled"}}]`
	)
	for _, path := range []string{"at once", "JSON only", "aside"} {
		for _, tc := range []struct {
			name, batch, answer string
			cv                  Convention
		}{
			{"MCP before", "[" + mcpCancel + "," + call + "]", "", ConventionMCP},
			{"MCP after", "[" + call + "," + mcpCancel + "]", "", ConventionMCP},
			{"LSP before", "[" + lspCancel + "," + call + "]", lspAnswer, ConventionLSP},
			{"LSP after", "[" + call + "," + lspCancel + "]", lspAnswer, ConventionLSP},
		} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				cause := make(chan error, 1)
				mux := NewMux()
				mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
				mux.HandleFunc("rec", func(ctx context.Context, _ *Request) (any, error) {
					err := waitCause(ctx)
					cause <- err
					return "ran", err
				})
				srv := &Server{Handler: mux, Convention: tc.cv}
				var header map[string]string
				if path != "at once" {
					srv.HandlerTimeout = time.Minute
				}
				want := http.StatusOK
				if path == "JSON only" {
					header = map[string]string{"Accept": "application/json"}
					if tc.answer == "" {
						want = http.StatusAccepted
					}
				}
				_, url := lazyServer(t, srv, StreamableHTTPOptions{Sessions: path == "JSON only", KeepAlive: -1})
				if path == "JSON only" {
					header["Mcp-Session-Id"] = atOnceSession(t, url)
				}
				status, _, got := atOncePOST(t, url, tc.batch, header)
				if err := <-cause; err != errPeerCancelled {
					t.Errorf("the handler's context ended with %v", err)
				}
				if status != want || (tc.answer != "" && got != tc.answer) || strings.Contains(got, `"result"`) {
					t.Errorf("the batch's answer: %d %q, want %d %q", status, got, want, tc.answer)
				}
			})
		}
	}
}

// With no route left, a POST whose requests would be routed (under a
// Convention, or in a session) gets 503 with Retry-After before any of its
// handlers runs, served on ServeHTTP's goroutine or aside (under a
// handler timeout); once a route is free, it is served. One that needs no route
// is served, its handler finding no client to reach (ErrNoConnection).
func TestStreamableAtOnceRoutesFull(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cv       Convention
		sessions bool
		timeout  time.Duration
		status   int
	}{
		{"MCP", ConventionMCP, false, 0, http.StatusServiceUnavailable},
		{"session", ConventionNone, true, 0, http.StatusServiceUnavailable},
		{"aside", ConventionNone, false, time.Minute, http.StatusServiceUnavailable},
		{"not routed", ConventionNone, false, 0, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := make(chan bool, 2)
			mux := NewMux()
			mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
			mux.HandleFunc("call", func(ctx context.Context, _ *Request) (any, error) {
				ran <- ConnFromContext(ctx).Notify(ctx, "n", nil) == nil
				return "ok", nil
			})
			srv := &Server{Handler: mux, Convention: tc.cv, HandlerTimeout: tc.timeout}
			h := srv.StreamableHTTPHandler(StreamableHTTPOptions{Sessions: tc.sessions, EventStoreSize: -1, KeepAlive: -1}).(*streamableHandler)
			h.routes.Limit = 1
			served := make(chan struct{}, 1)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				served <- struct{}{}
			}))
			t.Cleanup(hs.Close)
			post := func() (*http.Response, string) {
				req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"call"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				if tc.sessions {
					req.Header.Set("Mcp-Session-Id", atOnceSession(t, hs.URL))
					<-served // its route is gone
				}
				resp, err := atOnceClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				<-served
				return resp, string(b)
			}
			key, ok := h.routes.Add(&postStream{}) // the table is full
			if !ok {
				t.Fatal("no route")
			}
			resp, got := post()
			if resp.StatusCode != tc.status || tc.status != http.StatusOK && resp.Header.Get("Retry-After") != "1" {
				t.Fatalf("the answer: %d (Retry-After %q) %q, want %d", resp.StatusCode, resp.Header.Get("Retry-After"), got, tc.status)
			}
			if tc.status == http.StatusOK {
				if got != `{"jsonrpc":"2.0","id":1,"result":"ok"}` || <-ran {
					t.Fatalf("not routed: %q, with a client to reach", got)
				}
				return
			}
			if len(ran) != 0 {
				t.Fatal("a handler ran")
			}
			h.routes.Remove(key)
			if resp, got := post(); resp.StatusCode != http.StatusOK || !<-ran {
				t.Fatalf("with a route free: %d %q, without a client to reach", resp.StatusCode, got)
			}
		})
	}
}
