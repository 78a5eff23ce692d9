package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// cancelProbe is a service whose "wait" runs until its context ends,
// counting the handlers that saw their context cancelled by the peer, and
// whose "steps" reports progress three times (the third time with a value
// that does not increase, refused) and once more after returning (not sent).
type cancelProbe struct {
	started   chan string // the id of each "wait" that started
	cancelled atomic.Int64
	after     chan error // ReportProgress after "steps" returned
}

func newCancelProbe() *cancelProbe {
	return &cancelProbe{started: make(chan string, 8), after: make(chan error, 1)}
}

func (p *cancelProbe) mux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("wait", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		p.started <- req.ID.String()
		<-ctx.Done()
		if errors.Is(ctx.Err(), context.Canceled) {
			p.cancelled.Add(1)
		}
		return nil, ctx.Err()
	})
	mux.HandleFunc("ping", func(context.Context, *jsonrpc.Request) (any, error) { return "pong", nil })
	mux.HandleFunc("steps", func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
		if err := jsonrpc.ReportProgress(ctx, 1, 3, "one"); err != nil {
			return nil, err
		}
		if err := jsonrpc.ReportProgress(ctx, 2, 3, "two"); err != nil {
			return nil, err
		}
		if err := jsonrpc.ReportProgress(ctx, 2, 3, "again"); !errors.Is(err, jsonrpc.ErrProgressNotIncreasing) {
			return nil, errors.New("a repeated value was not refused")
		}
		go func() {
			// The request's context ends once its handler has returned.
			<-ctx.Done()
			p.after <- jsonrpc.ReportProgress(ctx, 3, 3, "late")
		}()
		return "done", nil
	})
	return mux
}

// probeTransports runs test over every transport with a connection, on a
// server following cv, with a raw client: the bytes sent and read are the
// wire's.
func probeTransports(t *testing.T, cv jsonrpc.Convention, test func(t *testing.T, p *cancelProbe, send func(string), read func() string)) {
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: cv}
	for name, dial := range rawTransports(t, srv) {
		t.Run(name, func(t *testing.T) {
			send, readBytes := dial()
			test(t, p, send, func() string { return string(readBytes()) })
		})
	}
}

func listenProbe(t *testing.T, cv jsonrpc.Convention) (*cancelProbe, *jsonrpc.Server, string) {
	t.Helper()
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: cv}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return p, srv, l.URL
}

func waitStarted(t *testing.T, p *cancelProbe) string {
	t.Helper()
	select {
	case id := <-p.started:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not start")
		return ""
	}
}

// LSP: $/cancelRequest cancels the handler's context and the request is
// answered with -32800; a cancel of an unknown id, a late cancel, MCP's
// notification and unknown $/ notifications are ignored; an unknown $/
// request gets -32601.
func TestCancelLSP(t *testing.T) {
	probeTransports(t, jsonrpc.ConventionLSP, testCancelLSP)
}

func testCancelLSP(t *testing.T, p *cancelProbe, send func(string), read func() string) {
	p.cancelled.Store(0)
	send(`{"jsonrpc":"2.0","id":"a","method":"wait"}`)
	waitStarted(t, p)
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}}`)                // unknown id
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`) // the other convention
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)                  // a number is not the string "a"
	send(`{"jsonrpc":"2.0","method":"$/somethingElse","params":{}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"$/somethingElse"}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: $/somethingElse"}}`; got != want {
		t.Fatalf("unknown $/ request:\n got %s\nwant %s", got, want)
	}
	if n := p.cancelled.Load(); n != 0 {
		t.Fatalf("%d handlers cancelled by the wrong messages", n)
	}
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":"a","error":{"code":-32800,"message":"request cancelled"}}`; got != want {
		t.Fatalf("cancelled request:\n got %s\nwant %s", got, want)
	}
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`) // late
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":3,"result":"pong"}`; got != want {
		t.Fatalf("after a late cancel:\n got %s\nwant %s", got, want)
	}
	if n := p.cancelled.Load(); n != 1 {
		t.Fatalf("%d handlers saw their context cancelled, want 1", n)
	}
}

// MCP: notifications/cancelled cancels the handler's context and the
// request is not answered; LSP's $/cancelRequest goes to the Handler.
func TestCancelMCP(t *testing.T) {
	probeTransports(t, jsonrpc.ConventionMCP, testCancelMCP)
}

func testCancelMCP(t *testing.T, p *cancelProbe, send func(string), read func() string) {
	p.cancelled.Store(0)
	send(`{"jsonrpc":"2.0","id":7,"method":"wait"}`)
	waitStarted(t, p)
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`) // the other convention
	send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":1,"result":"pong"}`; got != want {
		t.Fatalf("ping:\n got %s\nwant %s", got, want)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	deadline := time.Now().Add(10 * time.Second)
	for p.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := p.cancelled.Load(); n != 1 {
		t.Fatalf("%d handlers saw their context cancelled, want 1", n)
	}
	// The next line must be ping's answer: the cancelled request got none.
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":2,"result":"pong"}`; got != want {
		t.Fatalf("after the cancel:\n got %s\nwant %s", got, want)
	}
}

// A client with WithConvention whose Call's context ends sends the
// convention's cancel: the server's handler stops.
func TestCallDeadlineCancelsServerWork(t *testing.T) {
	for _, cv := range []jsonrpc.Convention{jsonrpc.ConventionLSP, jsonrpc.ConventionMCP} {
		t.Run(conventionName(cv), func(t *testing.T) {
			p, _, url := listenProbe(t, cv)
			c, err := jsonrpc.Dial(context.Background(), url, jsonrpc.WithConvention(cv))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { waitStarted(t, p); cancel() }()
			if err := c.Call(ctx, "wait", nil, nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("Call: %v", err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for p.cancelled.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := p.cancelled.Load(); n != 1 {
				t.Fatalf("the server's handler was not cancelled (%d)", n)
			}
			var pong string
			if err := c.Call(context.Background(), "ping", nil, &pong); err != nil || pong != "pong" {
				t.Fatalf("ping after the cancel: %q %v", pong, err)
			}
		})
	}
	// Without a convention nothing is sent: the handler runs on.
	p, srv, url := listenProbe(t, jsonrpc.ConventionMCP)
	c, err := jsonrpc.Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitStarted(t, p); cancel() }()
	c.Call(ctx, "wait", nil, nil)
	var pong string
	if err := c.Call(context.Background(), "ping", nil, &pong); err != nil {
		t.Fatal(err)
	}
	if n := p.cancelled.Load(); n != 0 {
		t.Fatalf("a client without a convention cancelled the server's work")
	}
	c.Close()
	stop, cancelStop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelStop()
	srv.Shutdown(stop) // the handler still waits: it is cancelled when the deadline passes
}

func conventionName(cv jsonrpc.Convention) string {
	return map[jsonrpc.Convention]string{jsonrpc.ConventionLSP: "lsp", jsonrpc.ConventionMCP: "mcp"}[cv]
}

// ReportProgress sends MCP's notifications/progress with the token as sent
// (a string, an integer beyond 2^64), values strictly increasing, and
// nothing after the response; without a token it sends nothing.
func TestProgressMCP(t *testing.T) {
	probeTransports(t, jsonrpc.ConventionMCP, testProgressMCP)
}

func testProgressMCP(t *testing.T, p *cancelProbe, send func(string), read func() string) {
	for _, tok := range []string{`"t\u00e9"`, `18446744073709551616`} {
		send(`{"jsonrpc":"2.0","id":1,"method":"steps","params":{"_meta":{"progressToken":` + tok + `}}}`)
		for _, want := range []string{
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1,"total":3,"message":"one"}}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":2,"total":3,"message":"two"}}`,
			`{"jsonrpc":"2.0","id":1,"result":"done"}`,
		} {
			if got := read(); got != want {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
		}
		if err := <-p.after; err != nil {
			t.Fatalf("ReportProgress after the response: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"steps","params":{}}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":2,"result":"done"}`; got != want {
		t.Fatalf("without a token:\n got %s\nwant %s", got, want)
	}
	<-p.after
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got, want := read(), `{"jsonrpc":"2.0","id":3,"result":"pong"}`; got != want {
		t.Fatalf("after a call without a token, nothing else was sent:\n got %s\nwant %s", got, want)
	}
}

// LSP: $/progress with the workDoneToken: begin, report, then end before
// the response.
func TestProgressLSP(t *testing.T) {
	probeTransports(t, jsonrpc.ConventionLSP, testProgressLSP)
}

func testProgressLSP(t *testing.T, p *cancelProbe, send func(string), read func() string) {
	send(`{"jsonrpc":"2.0","id":1,"method":"steps","params":{"workDoneToken":42}}`)
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"$/progress","params":{"token":42,"value":{"kind":"begin","title":"one","percentage":33}}}`,
		`{"jsonrpc":"2.0","method":"$/progress","params":{"token":42,"value":{"kind":"report","message":"two","percentage":67}}}`,
		`{"jsonrpc":"2.0","method":"$/progress","params":{"token":42,"value":{"kind":"end"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":"done"}`,
	} {
		if got := read(); got != want {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	}
	if err := <-p.after; err != nil {
		t.Fatal(err)
	}
}

// WithProgress gets the server's progress notifications for a call, with
// the token as the caller sent it.
func TestWithProgressReceivesReports(t *testing.T) {
	for _, cv := range []jsonrpc.Convention{jsonrpc.ConventionLSP, jsonrpc.ConventionMCP} {
		t.Run(conventionName(cv), func(t *testing.T) {
			p, _, url := listenProbe(t, cv)
			got := make(chan jsonrpc.Progress, 8)
			c, err := jsonrpc.Dial(context.Background(), url, jsonrpc.WithConvention(cv),
				jsonrpc.WithProgress(func(_ context.Context, p jsonrpc.Progress) { got <- p }))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			params := map[string]any{"_meta": map[string]any{"progressToken": "call-1"}}
			if cv == jsonrpc.ConventionLSP {
				params = map[string]any{"workDoneToken": "call-1"}
			}
			var res string
			if err := c.Call(context.Background(), "steps", params, &res); err != nil || res != "done" {
				t.Fatalf("Call: %q %v", res, err)
			}
			<-p.after
			want := []string{"one", "two"}
			if cv == jsonrpc.ConventionLSP {
				want = append(want, "") // the end
			}
			for i, msg := range want {
				select {
				case pr := <-got:
					if string(pr.Token) != `"call-1"` || pr.Message != msg || (i < 2 && pr.Total == 0) {
						t.Fatalf("report %d: %+v", i, pr)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("report %d did not arrive", i)
				}
			}
		})
	}
}

// A cancel needs no handler slot: with MaxConcurrency 1 taken by the
// request to cancel, the cancel still reaches it.
func TestCancelWithEverySlotTaken(t *testing.T) {
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: jsonrpc.ConventionLSP, MaxConcurrency: 1}
	send, read := rawTransports(t, srv)["tcp"]()
	send(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
	waitStarted(t, p)
	send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	if got, want := string(read()), `{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"request cancelled"}}`; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

// Over Streamable HTTP a cancel POSTed by the client reaches the POST that
// serves the request it names, in the same session only. MCP: that POST's
// answer ends without a response (an event stream with no message); LSP: it
// answers -32800.
func TestCancelStreamableHTTP(t *testing.T) {
	for _, tc := range []struct {
		cv             jsonrpc.Convention
		cancel         string
		wantType, want string
	}{
		{jsonrpc.ConventionMCP, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"user"}}`, "text/event-stream", "id: 2-0\nretry: 1000"}, // the priming event only
		{jsonrpc.ConventionLSP, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"w"}}`, "application/json", `{"jsonrpc":"2.0","id":"w","error":{"code":-32800,"message":"request cancelled"}}`},
	} {
		t.Run(conventionName(tc.cv), func(t *testing.T) {
			p := newCancelProbe()
			srv := &jsonrpc.Server{Handler: p.mux(), Convention: tc.cv}
			hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, InitializeMethod: "ping"}))
			defer hs.Close()
			a := &streamClient{t: t, url: hs.URL}
			resp := a.post(`{"jsonrpc":"2.0","id":0,"method":"ping"}`, "application/json, text/event-stream")
			a.session = resp.Header.Get("Mcp-Session-Id")
			readAll(t, resp)
			other := &streamClient{t: t, url: hs.URL}
			resp = other.post(`{"jsonrpc":"2.0","id":0,"method":"ping"}`, "application/json, text/event-stream")
			other.session = resp.Header.Get("Mcp-Session-Id")
			readAll(t, resp)

			answer := make(chan *http.Response, 1)
			go func() {
				answer <- a.post(`{"jsonrpc":"2.0","id":"w","method":"wait"}`, "application/json, text/event-stream")
			}()
			waitStarted(t, p)
			// Another session's cancel of the same id does nothing.
			if resp := other.post(tc.cancel, "application/json, text/event-stream"); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d", resp.StatusCode)
			}
			select {
			case <-answer:
				t.Fatal("another session's cancel ended the request")
			case <-time.After(50 * time.Millisecond):
			}
			if resp := a.post(tc.cancel, "application/json, text/event-stream"); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d", resp.StatusCode)
			}
			resp = <-answer
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != tc.wantType {
				t.Fatalf("the cancelled POST's answer: %d %s", resp.StatusCode, ct)
			}
			if body := strings.TrimSpace(readAll(t, resp)); body != tc.want {
				t.Fatalf("the cancelled POST's body:\n got %q\nwant %q", body, tc.want)
			}
			if n := p.cancelled.Load(); n != 1 {
				t.Fatalf("%d handlers cancelled", n)
			}
		})
	}
}

// Progress over Streamable HTTP: the reports are events of the POST's
// stream, before the response.
func TestProgressStreamableHTTP(t *testing.T) {
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: jsonrpc.ConventionMCP}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"steps","params":{"_meta":{"progressToken":5}}}`, "application/json, text/event-stream")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %s", ct)
	}
	var got []string
	for line := range strings.SplitSeq(readAll(t, resp), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			got = append(got, data)
		}
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1,"total":3,"message":"one"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":2,"total":3,"message":"two"}}`,
		`{"jsonrpc":"2.0","id":1,"result":"done"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n got %q\nwant %q", got, want)
	}
	if err := <-p.after; err != nil {
		t.Fatal(err)
	}
}

// The Streamable HTTP client with WithConvention: a Call whose context
// ends stops the server's handler, and WithProgress gets the reports of
// the POST's event stream.
func TestStreamableClientCancelAndProgress(t *testing.T) {
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: jsonrpc.ConventionMCP}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, InitializeMethod: "ping"}))
	defer hs.Close()
	got := make(chan jsonrpc.Progress, 8)
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, jsonrpc.WithConvention(jsonrpc.ConventionMCP),
		jsonrpc.WithProgress(func(_ context.Context, p jsonrpc.Progress) { got <- p }))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var pong string
	if err := c.Call(context.Background(), "ping", nil, &pong); err != nil {
		t.Fatal(err)
	}
	var res string
	if err := c.Call(context.Background(), "steps", map[string]any{"_meta": map[string]any{"progressToken": 9}}, &res); err != nil || res != "done" {
		t.Fatalf("steps: %q %v", res, err)
	}
	<-p.after
	for i := range 2 {
		select {
		case pr := <-got:
			if string(pr.Token) != "9" || pr.Progress != float64(i+1) {
				t.Fatalf("report %d: %+v", i, pr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("report %d did not arrive", i)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitStarted(t, p); cancel() }()
	if err := c.Call(ctx, "wait", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.cancelled.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.cancelled.Load() != 1 {
		t.Fatal("the server's handler was not cancelled")
	}
}

// Without sessions, a cancel reaches the POSTs of the same client (IP
// address and Authorization) only.
func TestCancelStreamableHTTPStateless(t *testing.T) {
	p := newCancelProbe()
	srv := &jsonrpc.Server{Handler: p.mux(), Convention: jsonrpc.ConventionMCP}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	post := func(body, auth string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		return resp
	}
	answer := make(chan *http.Response, 1)
	go func() { answer <- post(`{"jsonrpc":"2.0","id":1,"method":"wait"}`, "Bearer alice") }()
	waitStarted(t, p)
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	readAll(t, post(cancel, "Bearer mallory"))
	select {
	case <-answer:
		t.Fatal("another client's cancel ended the request")
	case <-time.After(50 * time.Millisecond):
	}
	readAll(t, post(cancel, "Bearer alice"))
	resp := <-answer
	if body := readAll(t, resp); resp.Header.Get("Content-Type") != "text/event-stream" || body != "" {
		t.Fatalf("the cancelled POST: %s %q", resp.Header.Get("Content-Type"), body)
	}
	if p.cancelled.Load() != 1 {
		t.Fatal("the handler was not cancelled")
	}
}

// A cancel read right behind its request, before the request's handler has
// started (both in one write), still cancels it: the reading goroutine
// handles the cancel at once, so the request must be known from the moment
// it is read. Single requests and batch members, on every transport.
func TestCancelRightBehindTheRequest(t *testing.T) {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("hold", func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return "ran to the end: the cancel was lost", nil
		}
	})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionLSP}
	const (
		req    = `{"jsonrpc":"2.0","id":7,"method":"hold"}`
		batch  = `[{"jsonrpc":"2.0","id":8,"method":"hold"},{"jsonrpc":"2.0","id":9,"method":"hold"}]`
		cancel = `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`
	)
	for name, dial := range rawTransports(t, srv) {
		t.Run(name, func(t *testing.T) {
			send, read := dial()
			for range 20 {
				msgs := []string{req, fmt.Sprintf(cancel, 7)}
				if name == "websocket" {
					send(msgs[0]) // one message a frame, sent back to back
					send(msgs[1])
				} else {
					send(strings.Join(msgs, "\n")) // one write
				}
				if got, want := string(read()), `{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"request cancelled"}}`; got != want {
					t.Fatalf("\n got %s\nwant %s", got, want)
				}
			}
			msgs := []string{batch, fmt.Sprintf(cancel, 8), fmt.Sprintf(cancel, 9)}
			if name == "websocket" {
				for _, m := range msgs {
					send(m)
				}
			} else {
				send(strings.Join(msgs, "\n"))
			}
			got := string(read())
			for _, id := range []string{"8", "9"} {
				if !strings.Contains(got, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32800,"message":"request cancelled"}}`) {
					t.Fatalf("batch member %s not cancelled: %s", id, got)
				}
			}
		})
	}
}
