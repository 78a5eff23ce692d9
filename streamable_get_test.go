package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// sessionMux: "initialize"; "keep" hands the session's connection to the
// test (conns) and returns; "slow" notifies "one", waits for release,
// notifies "two" and answers "done".
func sessionMux(conns chan<- *jsonrpc.Conn, release <-chan struct{}) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "keep", func(ctx context.Context, _ struct{}) (bool, error) {
		c := jsonrpc.SessionConn(ctx)
		conns <- c
		return c != nil, nil
	})
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		if err := c.Notify(ctx, "note", []string{"one"}); err != nil {
			return "", err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if err := c.Notify(ctx, "note", []string{"two"}); err != nil {
			return "", err
		}
		return "done", nil
	})
	return mux
}

// get opens a GET on c's session with extra headers ("Key: value").
func (c *streamClient) get(headers ...string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *streamClient) initialize() {
	c.t.Helper()
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	readAll(c.t, resp)
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		c.t.Fatalf("no session: %d", resp.StatusCode)
	}
}

// end ends the session (DELETE), so that its connection's goroutine ends.
func (c *streamClient) end() {
	del, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	del.Header.Set("Mcp-Session-Id", c.session)
	if r, err := http.DefaultClient.Do(del); err == nil {
		readAll(c.t, r)
	}
}

func (c *streamClient) sessionConn(conns <-chan *jsonrpc.Conn) *jsonrpc.Conn {
	c.t.Helper()
	c.t.Cleanup(c.end)
	if got := readAll(c.t, c.post(`{"jsonrpc":"2.0","id":2,"method":"keep"}`, bothAccept)); got != `{"jsonrpc":"2.0","id":2,"result":true}` {
		c.t.Fatalf("keep: %s", got)
	}
	return <-conns
}

// frames reads an event stream frame by frame (each up to its blank line,
// byte for byte).
type frames struct {
	t  *testing.T
	br *bufio.Reader
}

func newFrames(t *testing.T, r io.Reader) *frames { return &frames{t: t, br: bufio.NewReader(r)} }

func (f *frames) next() string {
	f.t.Helper()
	var b strings.Builder
	for {
		line, err := f.br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			f.t.Fatalf("stream ended (%v) after %q", err, b.String())
		}
		if line == "\n" {
			return b.String()
		}
	}
}

// ended reports whether the stream ends without another byte.
func (f *frames) ended() bool {
	_, err := f.br.ReadByte()
	return err == io.EOF
}

func TestStreamableHTTPStandaloneStream(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, RetryDelay: 500 * time.Millisecond, KeepAlive: 200 * time.Millisecond, OutboxSize: 3,
	}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	// Without a session: 400; an unknown one: 404; without Accept: 406.
	if r := c.get(); readAll(t, r) == "" || r.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET without a session: %d", r.StatusCode)
	}
	c.session = "0123"
	if r := c.get(); readAll(t, r) == "" || r.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of an unknown session: %d", r.StatusCode)
	}
	c.session = ""
	c.initialize()
	if r := c.get("Accept: application/json"); readAll(t, r) == "" || r.StatusCode != http.StatusNotAcceptable {
		t.Fatalf("GET without text/event-stream: %d", r.StatusCode)
	}
	sc := c.sessionConn(conns)
	ctx := context.Background()
	// Sent before any GET: they wait in the outbox, which holds 3.
	for i := range 3 {
		if err := sc.Notify(ctx, "early", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Notify(ctx, "early", []int{3}); !errors.Is(err, jsonrpc.ErrStreamBacklog) {
		t.Fatalf("over OutboxSize: %v", err)
	}
	resp := c.get("Mcp-Protocol-Version: 2025-11-25")
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET: %d %v", resp.StatusCode, resp.Header)
	}
	f := newFrames(t, resp.Body)
	// The priming event (a revision 2025-11-25 client: with an empty data
	// field), then the outbox, in order, with ids of stream 0.
	for _, want := range []string{
		"id: 0-0\nretry: 500\ndata:\n\n",
		"id: 0-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"early\",\"params\":[0]}\n\n",
		"id: 0-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"early\",\"params\":[1]}\n\n",
		"id: 0-3\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"early\",\"params\":[2]}\n\n",
	} {
		if got := f.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	// Idle: a keep-alive comment.
	if got := f.next(); got != ": keep-alive\n\n" {
		t.Fatalf("keep-alive: %q", got)
	}
	// A call to the client on the GET stream, answered by a POST.
	type result struct {
		s   string
		err error
	}
	answer := make(chan result, 1)
	go func() {
		var s string
		err := sc.Call(ctx, "client/name", nil, &s)
		answer <- result{s, err}
	}()
	call := f.next()
	for call == ": keep-alive\n\n" {
		call = f.next()
	}
	data := call[strings.Index(call, "data: ")+6 : len(call)-2]
	if !strings.HasPrefix(call, "id: 0-4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":") || !strings.HasSuffix(data, `,"method":"client/name"}`) {
		t.Fatalf("call on the GET stream: %q", call)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(data, `{"jsonrpc":"2.0","id":`), `,"method":"client/name"}`)
	if r := c.post(`{"jsonrpc":"2.0","id":`+id+`,"result":"ada"}`, bothAccept); readAll(t, r) != "" || r.StatusCode != http.StatusAccepted {
		t.Fatalf("answer: %d", r.StatusCode)
	}
	if r := <-answer; r.err != nil || r.s != "ada" {
		t.Fatalf("call over the GET stream: %q %v", r.s, r.err)
	}
	// A second GET takes the stream over: the first ends, the second
	// carries what follows (a client of an older revision: a priming id
	// without data).
	resp2 := c.get()
	defer resp2.Body.Close()
	f2 := newFrames(t, resp2.Body)
	if got := f2.next(); got != "id: 0-4\nretry: 500\n\n" {
		t.Fatalf("second GET's start: %q", got)
	}
	for {
		if f.ended() {
			break
		}
		if got := f.next(); got != "keep-alive\n\n" && got != ": keep-alive\n\n" {
			t.Fatalf("the first GET after the second: %q", got)
		}
	}
	if err := sc.Notify(ctx, "late", nil); err != nil {
		t.Fatal(err)
	}
	if got := f2.next(); got != "id: 0-5\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"late\"}\n\n" {
		t.Fatalf("after the takeover: %q", got)
	}
	// DELETE ends the session: the stream ends, the connection closes.
	del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	del.Header.Set("Mcp-Session-Id", c.session)
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	for !f2.ended() {
		f2.next()
	}
	select {
	case <-sc.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the session's connection did not close with the session")
	}
	if err := sc.Notify(ctx, "gone", nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("notify after the session ended: %v", err)
	}
}

// GET gets 405 without sessions (stateless) or with NoStandaloneStream;
// DELETE gets 405 without sessions; SessionConn is nil in both.
func TestStreamableHTTPNoStandaloneStream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  jsonrpc.StreamableHTTPOptions
		allow string
	}{
		{"stateless", jsonrpc.StreamableHTTPOptions{}, "POST"},
		{"disabled", jsonrpc.StreamableHTTPOptions{Sessions: true, NoStandaloneStream: true}, "POST, DELETE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conns := make(chan *jsonrpc.Conn, 1)
			hs := httptest.NewServer((&jsonrpc.Server{Handler: sessionMux(conns, nil)}).StreamableHTTPHandler(tc.opts))
			defer hs.Close()
			c := &streamClient{t: t, url: hs.URL}
			if tc.opts.Sessions {
				c.initialize()
			}
			if r := c.get(); readAll(t, r) == "" || r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != tc.allow {
				t.Fatalf("GET: %d %q", r.StatusCode, r.Header.Get("Allow"))
			}
			if got := readAll(t, c.post(`{"jsonrpc":"2.0","id":2,"method":"keep"}`, bothAccept)); got != `{"jsonrpc":"2.0","id":2,"result":false}` {
				t.Fatalf("keep: %s", got)
			}
			<-conns
			del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
			del.Header.Set("Mcp-Session-Id", c.session)
			r, err := http.DefaultClient.Do(del)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, r)
			if want := map[bool]int{false: http.StatusMethodNotAllowed, true: http.StatusNoContent}[tc.opts.Sessions]; r.StatusCode != want {
				t.Fatalf("DELETE: %d, want %d", r.StatusCode, want)
			}
		})
	}
}

// The standalone stream resumed with Last-Event-ID: the events sent after
// it, exactly once, then the stream goes on.
func TestStreamableHTTPResumeStandalone(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, RetryDelay: -1, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	sc := c.sessionConn(conns)
	ctx := context.Background()
	resp := c.get()
	f := newFrames(t, resp.Body)
	if got := f.next(); got != "id: 0-0\n\n" {
		t.Fatalf("priming without retry: %q", got)
	}
	for i := range 3 {
		sc.Notify(ctx, "n", []int{i})
	}
	for range 3 {
		f.next()
	}
	resp.Body.Close() // the client goes away after 0-3
	for i := 3; i < 6; i++ {
		if err := sc.Notify(ctx, "n", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	resp = c.get("Last-Event-ID: 0-2")
	defer resp.Body.Close()
	f = newFrames(t, resp.Body)
	for i := 3; i < 7; i++ {
		if i == 6 {
			sc.Notify(ctx, "n", []int{i})
		}
		got := f.next()
		want := "id: 0-" + string(rune('0'+i)) + "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[" + string(rune('0'+i-1)) + "]}\n\n"
		if got != want {
			t.Fatalf("event %d: %q, want %q", i, got, want)
		}
	}
	// Ids that name no stream of the session: 400.
	for _, id := range []string{"x", "7", "9-0", "0-"} {
		if r := c.get("Last-Event-ID: " + id); readAll(t, r) == "" || r.StatusCode != http.StatusBadRequest {
			t.Fatalf("Last-Event-ID %q: %d", id, r.StatusCode)
		}
	}
}

// A POST's stream cut mid-call: the call goes on, and GET with
// Last-Event-ID writes what followed, then the response, then ends; the
// same id again (the stream over) replays the rest and ends; evicted
// events: 410.
func TestStreamableHTTPResumePOST(t *testing.T) {
	release := make(chan struct{})
	srv := &jsonrpc.Server{Handler: sessionMux(nil, release)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1, EventStoreSize: 4}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	t.Cleanup(c.end)
	resp := c.post(`{"jsonrpc":"2.0","id":"s","method":"slow"}`, bothAccept)
	f := newFrames(t, resp.Body)
	// Stream 2 (initialize's POST was 1).
	for _, want := range []string{
		"id: 2-0\nretry: 1000\n\n",
		"id: 2-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":[\"one\"]}\n\n",
	} {
		if got := f.next(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	resp.Body.Close() // the connection drops: not a cancellation
	time.Sleep(50 * time.Millisecond)
	close(release)
	rest := "id: 2-2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":[\"two\"]}\n\n" +
		"id: 2-3\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s\",\"result\":\"done\"}\n\n"
	for range 2 {
		r := c.get("Last-Event-ID: 2-1")
		if got := readAll(t, r); r.StatusCode != 200 || got != "retry: 1000\n\n"+rest {
			t.Fatalf("resumed POST stream: %d %q", r.StatusCode, got)
		}
	}
	// Four more events evict those of stream 2 from a store of 4.
	for range 2 {
		readAll(t, c.post(`{"jsonrpc":"2.0","id":"t","method":"slow"}`, bothAccept))
	}
	if r := c.get("Last-Event-ID: 2-1"); readAll(t, r) == "" || r.StatusCode != http.StatusGone {
		t.Fatalf("evicted: %d", r.StatusCode)
	}
	// An ended stream the client has had all of: 204, which tells an SSE
	// client to stop reconnecting (a client whose call was cancelled
	// would otherwise resume forever, waiting for a response).
	if r := c.get("Last-Event-ID: 2-3"); readAll(t, r) != "" || r.StatusCode != http.StatusNoContent {
		t.Fatalf("nothing missed: %d", r.StatusCode)
	}
}

// 50 sessions, each with its GET stream open and a subscription-free
// session connection: half end by DELETE (their streams end), half by
// expiry once their clients closed the streams. No goroutine stays behind
// (goleak, TestMain).
func TestStreamableHTTPManySessionsWithStreams(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 50)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, SessionIdleTimeout: time.Second, MaxSessions: 50, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			c := &streamClient{t: t, url: hs.URL}
			c.initialize()
			sc := c.sessionConn(conns)
			resp := c.get()
			defer resp.Body.Close()
			f := newFrames(t, resp.Body)
			f.next() // priming
			if err := sc.Notify(context.Background(), "hello", []int{i}); err != nil {
				t.Error(err)
				return
			}
			if got := f.next(); !strings.Contains(got, `"method":"hello"`) {
				t.Errorf("session %d: %q", i, got)
			}
			if i%2 == 0 {
				c.end()
				for !f.ended() {
					f.next()
				}
			} else {
				resp.Body.Close()
				// Expires once the stream is closed and the session idle.
				deadline := time.Now().Add(5 * time.Second)
				for {
					r := c.post(`{"jsonrpc":"2.0","id":3,"method":"initialize"}`, bothAccept)
					readAll(t, r)
					if r.StatusCode == http.StatusNotFound {
						break
					}
					if time.Now().After(deadline) {
						t.Errorf("session %d did not expire", i)
						return
					}
					time.Sleep(1200 * time.Millisecond)
				}
			}
			select {
			case <-sc.Done():
			case <-time.After(5 * time.Second):
				t.Errorf("session %d: its connection did not close", i)
			}
		})
	}
	wg.Wait()
}

// Server.Shutdown ends the open GET streams, so that the HTTP server's
// graceful shutdown does not wait for them.
func TestStreamableHTTPShutdownEndsStreams(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil)}
	l, err := srv.Listen("http://127.0.0.1:0/mcp", jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	if err != nil {
		t.Fatal(err)
	}
	c := &streamClient{t: t, url: l.URL}
	c.initialize()
	resp := c.get()
	defer resp.Body.Close()
	f := newFrames(t, resp.Body)
	f.next() // priming
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v after %v", err, time.Since(start))
	}
	if !f.ended() {
		t.Fatal("the GET stream goes on after Shutdown")
	}
}

// A client that stops reading its GET stream: the server's writes to it
// time out (Server.WriteTimeout) and the response is dropped; messages then
// wait in the outbox until it is full, when sending fails at once with
// ErrStreamBacklog. Nothing blocks the sender, and the session's POSTs are
// answered meanwhile.
func TestStreamableHTTPSlowGETReader(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil), WriteTimeout: 200 * time.Millisecond}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	sc := c.sessionConn(conns)
	resp := c.get() // never read until the end
	defer resp.Body.Close()
	big := []string{strings.Repeat("x", 32<<10)}
	ctx := context.Background()
	backlog, slowest := 0, time.Duration(0)
	deadline := time.Now().Add(30 * time.Second)
	for backlog < 20 {
		if time.Now().After(deadline) {
			t.Fatal("the outbox never filled")
		}
		start := time.Now()
		err := sc.Notify(ctx, "big", big)
		slowest = max(slowest, time.Since(start))
		switch {
		case errors.Is(err, jsonrpc.ErrStreamBacklog):
			backlog++
			time.Sleep(20 * time.Millisecond)
		case err != nil:
			t.Fatal(err)
		default:
			backlog = 0
		}
	}
	if slowest > time.Second {
		t.Fatalf("a send waited %v", slowest)
	}
	if got := readAll(t, c.post(`{"jsonrpc":"2.0","id":3,"method":"initialize"}`, bothAccept)); got != `{"jsonrpc":"2.0","id":3,"result":"ready"}` {
		t.Fatalf("a POST of the session meanwhile: %s", got)
	}
	// The server dropped the response it could not write to.
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, resp.Body)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled GET response was not dropped")
	}
}

// A POSTed batch that answers a call of the session's connection and also
// carries a request: the answer reaches the call, and the request is
// served once, by its own POST (never again by the connection whose call
// it answers, whose replies would go on the GET stream).
func TestStreamableHTTPMixedBatchAnswer(t *testing.T) {
	conns := make(chan *jsonrpc.Conn, 1)
	srv := &jsonrpc.Server{Handler: sessionMux(conns, nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, KeepAlive: -1, RetryDelay: -1}))
	t.Cleanup(hs.Close)
	c := &streamClient{t: t, url: hs.URL}
	c.initialize()
	sc := c.sessionConn(conns)
	resp := c.get()
	defer resp.Body.Close()
	f := newFrames(t, resp.Body)
	f.next() // priming
	answer := make(chan string, 1)
	go func() {
		var s string
		if err := sc.Call(context.Background(), "client/name", nil, &s); err != nil {
			s = err.Error()
		}
		answer <- s
	}()
	call := f.next()
	data := call[strings.Index(call, "data: ")+6 : len(call)-2]
	id := strings.TrimSuffix(strings.TrimPrefix(data, `{"jsonrpc":"2.0","id":`), `,"method":"client/name"}`)
	got := readAll(t, c.post(`[{"jsonrpc":"2.0","id":9,"method":"initialize"},{"jsonrpc":"2.0","id":`+id+`,"result":"ada"}]`, bothAccept))
	if got != `[{"jsonrpc":"2.0","id":9,"result":"ready"}]` {
		t.Fatalf("the batch's answer: %s", got)
	}
	if s := <-answer; s != "ada" {
		t.Fatalf("the call: %s", s)
	}
	if err := sc.Notify(context.Background(), "after", nil); err != nil {
		t.Fatal(err)
	}
	if got := f.next(); !strings.Contains(got, `"method":"after"`) {
		t.Fatalf("the GET stream carried %q before the notification", got)
	}
}
