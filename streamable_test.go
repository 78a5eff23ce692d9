package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// streamableMux: "progress" notifies the client twice then answers; "ask"
// calls the client back and answers with what it said; "wait" runs until
// cancelled.
func streamableMux(canceled chan<- struct{}) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "progress", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		for i := 1; i <= 2; i++ {
			err := c.Notify(ctx, "notifications/progress", map[string]int{"progress": i})
			if errors.Is(err, jsonrpc.ErrNoConnection) {
				return "no stream", nil
			}
			if err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	jsonrpc.Register(mux, "ask", func(ctx context.Context, _ struct{}) (string, error) {
		var answer string
		if err := jsonrpc.ConnFromContext(ctx).Call(ctx, "client/name", nil, &answer); err != nil {
			return "", err
		}
		return "hello " + answer, nil
	})
	jsonrpc.Register(mux, "wait", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		canceled <- struct{}{}
		return "", ctx.Err()
	})
	return mux
}

type streamClient struct {
	t       *testing.T
	url     string
	session string
}

func (c *streamClient) post(body string, accept string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const bothAccept = "application/json, text/event-stream"

func TestStreamableHTTPStatelessExchanges(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}

	// A plain JSON-RPC client is served as by ServeHTTP: JSON, no stream,
	// no connection to call back on.
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"progress"}`, "")
	if got := readAll(t, resp); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || got != `{"jsonrpc":"2.0","id":1,"result":"no stream"}` {
		t.Fatalf("plain client: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	// A client that takes streams, for a handler that sends nothing first: JSON.
	resp = c.post(`{"jsonrpc":"2.0","id":"a","method":"initialize"}`, bothAccept)
	if got := readAll(t, resp); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || got != `{"jsonrpc":"2.0","id":"a","result":"ready"}` {
		t.Fatalf("json answer: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	// Notifications before the answer: an event stream, byte for byte.
	resp = c.post(`{"jsonrpc":"2.0","id":2,"method":"progress"}`, bothAccept)
	want := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":2}}\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"done\"}\n\n"
	if got := readAll(t, resp); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		resp.Header.Get("X-Accel-Buffering") != "no" || resp.Header.Get("Cache-Control") != "no-cache" || got != want {
		t.Fatalf("stream: %d %v\n%q\nwant\n%q", resp.StatusCode, resp.Header, got, want)
	}
	// Notifications and responses only: 202, no body.
	for _, body := range []string{`{"jsonrpc":"2.0","method":"progress"}`, `{"jsonrpc":"2.0","id":99,"result":1}`, `[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"m"}}]`} {
		resp = c.post(body, bothAccept)
		if got := readAll(t, resp); resp.StatusCode != http.StatusAccepted || got != "" {
			t.Fatalf("%s: %d %q", body, resp.StatusCode, got)
		}
	}
	// Errors are JSON-RPC errors as usual: a parse error, an empty batch.
	resp = c.post(`{"jsonrpc":`, bothAccept)
	if got := readAll(t, resp); !strings.Contains(got, `"code":-32700`) {
		t.Fatalf("parse error: %s", got)
	}
	resp = c.post(`[]`, bothAccept)
	if got := readAll(t, resp); !strings.Contains(got, `"code":-32600`) {
		t.Fatalf("empty batch: %s", got)
	}
	// Subscriptions need a connection that outlives the call.
	mux := jsonrpc.NewMux()
	jsonrpc.AddSubscription(jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "t"}), "k", func(ctx context.Context, _ struct{}, sink *jsonrpc.Sink[int]) error { return nil })
	hs2 := httptest.NewServer((&jsonrpc.Server{Handler: mux}).StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs2.Close()
	resp = (&streamClient{t: t, url: hs2.URL}).post(`{"jsonrpc":"2.0","id":1,"method":"t_subscribe","params":["k"]}`, bothAccept)
	if got := readAll(t, resp); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"notifications not supported"}}` {
		t.Fatalf("subscribe over Streamable HTTP: %s", got)
	}
	// GET: no standalone stream.
	r, _ := http.Get(hs.URL)
	readAll(t, r)
	if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
		t.Fatalf("GET: %d %q", r.StatusCode, r.Header.Get("Allow"))
	}
}

// A handler calls the client back during a call: the request goes on the
// POST's stream, the client POSTs its answer, and the stream ends with the
// response built from it.
func TestStreamableHTTPCallback(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	c.session = resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	if len(c.session) != 32 {
		t.Fatalf("session id %q", c.session)
	}
	resp = c.post(`{"jsonrpc":"2.0","id":7,"method":"ask"}`, bothAccept)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	event := func() string {
		var data string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v", err)
			}
			if line == "\n" && data != "" {
				return data // (the priming event, an id and a retry field, has no data)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = strings.TrimSuffix(d, "\n")
			}
		}
	}
	call := event()
	var id string
	if _, err := fmt.Sscanf(call, `{"jsonrpc":"2.0","id":%s`, &id); err != nil || !strings.HasSuffix(call, `"method":"client/name"}`) {
		t.Fatalf("server→client request: %s", call)
	}
	id = strings.TrimSuffix(id, `,"method":"client/name"}`)
	answer := c.post(`{"jsonrpc":"2.0","id":`+id+`,"result":"ada"}`, bothAccept)
	if readAll(t, answer); answer.StatusCode != http.StatusAccepted {
		t.Fatalf("answer POST: %d", answer.StatusCode)
	}
	if got := event(); got != `{"jsonrpc":"2.0","id":7,"result":"hello ada"}` {
		t.Fatalf("final response: %s", got)
	}
	// The answer of another session does not reach this one's calls.
	other := &streamClient{t: t, url: hs.URL}
	r := other.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	other.session = r.Header.Get("Mcp-Session-Id")
	readAll(t, r)
	resp2 := c.post(`{"jsonrpc":"2.0","id":8,"method":"ask"}`, bothAccept)
	defer resp2.Body.Close()
	br = bufio.NewReader(resp2.Body)
	call = event()
	id = strings.TrimSuffix(strings.TrimPrefix(call, `{"jsonrpc":"2.0","id":`), `,"method":"client/name"}`)
	readAll(t, other.post(`{"jsonrpc":"2.0","id":`+id+`,"result":"mallory"}`, bothAccept))
	readAll(t, c.post(`{"jsonrpc":"2.0","id":`+id+`,"result":"bob"}`, bothAccept))
	if got := event(); got != `{"jsonrpc":"2.0","id":8,"result":"hello bob"}` {
		t.Fatalf("cross-session answer: %s", got)
	}
}

// The body and reply buffers of a POST answered at once are reused by the
// next POSTs, while a client's answer routed to a waiting call, and a call
// served on an event stream, keep theirs: under concurrent JSON-answer POSTs
// every answer reaches its call intact, and every echo comes back as sent.
func TestStreamableHTTPBuffersReused(t *testing.T) {
	mux := streamableMux(nil)
	jsonrpc.Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) { return p, nil })
	hs := httptest.NewServer((&jsonrpc.Server{Handler: mux}).StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	c.session = resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	echo := func(body string) (string, error) {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header["Content-Type"] = []string{"application/json"}
		req.Header["Accept"] = []string{"application/json"}
		req.Header["Mcp-Session-Id"] = []string{c.session}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		return string(b), err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := fmt.Sprintf(`{"w":%d,"i":%d,"pad":%q}`, w, i, strings.Repeat("x", i%300))
				got, err := echo(`{"jsonrpc":"2.0","id":2,"method":"echo","params":` + p + `}`)
				if want := `{"jsonrpc":"2.0","id":2,"result":` + p + `}`; err != nil || got != want {
					t.Errorf("echo:\n got %s %v\nwant %s", got, err, want)
					return
				}
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 40 {
		resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ask"}`, 100+i), bothAccept)
		br := bufio.NewReader(resp.Body)
		var events []string
		for len(events) < 2 {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended: %v (events %q)", err, events)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && d != "\n" {
				events = append(events, strings.TrimSuffix(d, "\n"))
				if len(events) == 1 { // the call: answer it with a name of its own
					id := strings.TrimSuffix(strings.TrimPrefix(events[0], `{"jsonrpc":"2.0","id":`), `,"method":"client/name"}`)
					readAll(t, c.post(`{"jsonrpc":"2.0","id":`+id+`,"result":"n`+strings.Repeat("y", i*7)+`"}`, bothAccept))
				}
			}
		}
		resp.Body.Close()
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"hello n%s"}`, 100+i, strings.Repeat("y", i*7)); events[1] != want {
			t.Fatalf("answer %d:\n got %s\nwant %s", i, events[1], want)
		}
	}
}

func TestStreamableHTTPSessions(t *testing.T) {
	canceled := make(chan struct{}, 1)
	srv := &jsonrpc.Server{Handler: streamableMux(canceled)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions:           true,
		SessionIdleTimeout: 300 * time.Millisecond,
		MaxSessions:        60,
		ProtocolVersions:   []string{"2025-11-25"},
	}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}
	// Without a session: 400; an unknown one: 404.
	if r := c.post(`{"jsonrpc":"2.0","id":1,"method":"progress"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusBadRequest {
		t.Fatalf("no session: %d", r.StatusCode)
	}
	c.session = "0123"
	if r := c.post(`{"jsonrpc":"2.0","id":1,"method":"progress"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: %d", r.StatusCode)
	}
	c.session = ""
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	readAll(t, r)
	c.session = r.Header.Get("Mcp-Session-Id")
	// An unsupported protocol version: 400.
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"progress"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", bothAccept)
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad version: %v %v", resp, err)
	} else {
		readAll(t, resp)
	}
	// DELETE cancels what runs in the session and ends it.
	done := make(chan *http.Response)
	go func() { done <- c.post(`{"jsonrpc":"2.0","id":3,"method":"wait"}`, bothAccept) }()
	time.Sleep(50 * time.Millisecond)
	del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	del.Header.Set("Mcp-Session-Id", c.session)
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the session's running call was not cancelled")
	}
	readAll(t, <-done)
	if r := c.post(`{"jsonrpc":"2.0","id":4,"method":"progress"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusNotFound {
		t.Fatalf("after DELETE: %d", r.StatusCode)
	}
	// 50 concurrent sessions, each served (no goroutine stays behind: the
	// package's TestMain checks with goleak).
	hs50 := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, MaxSessions: 50}))
	defer hs50.Close()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &streamClient{t: t, url: hs50.URL}
			r := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
			readAll(t, r)
			s.session = r.Header.Get("Mcp-Session-Id")
			if got := readAll(t, s.post(`{"jsonrpc":"2.0","id":2,"method":"progress"}`, bothAccept)); !strings.HasSuffix(got, "\"result\":\"done\"}\n\n") {
				t.Errorf("session call: %q", got)
			}
		}()
	}
	wg.Wait()
	// Over MaxSessions: 503.
	if r := (&streamClient{t: t, url: hs50.URL}).post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("over MaxSessions: %d", r.StatusCode)
	}
	// An idle session expires (SessionIdleTimeout is 300 ms here).
	s := &streamClient{t: t, url: hs.URL}
	r = s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	readAll(t, r)
	s.session = r.Header.Get("Mcp-Session-Id")
	time.Sleep(700 * time.Millisecond)
	if r := s.post(`{"jsonrpc":"2.0","id":3,"method":"progress"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusNotFound {
		t.Fatalf("an idle session did not expire: %d", r.StatusCode)
	}
}

// A client that goes away mid-stream cancels its handler.
func TestStreamableHTTPClientGoesAway(t *testing.T) {
	canceled := make(chan struct{}, 1)
	srv := &jsonrpc.Server{Handler: streamableMux(canceled)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"wait"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", bothAccept)
	errc := make(chan error, 1)
	go func() {
		_, err := http.DefaultClient.Do(req)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not cancelled")
	}
}

// An answer decided before any handler runs goes the way a handler's
// reply goes: a message that does not parse is still refused without a
// session (400), and under SSEAlways its error is an event; a response in a
// batch goes to the call it answers, and only the batch's requests are
// answered.
func TestStreamableHTTPEarlyAnswers(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, SSE: jsonrpc.SSEAlways}))
	defer hs.Close()
	c := &streamClient{t: t, url: hs.URL}
	if r := c.post(`{"jsonrpc":`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusBadRequest {
		t.Fatalf("parse error without a session: %d", r.StatusCode)
	}
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, bothAccept)
	readAll(t, r)
	if c.session = r.Header.Get("Mcp-Session-Id"); c.session == "" {
		t.Fatal("no session")
	}
	r = c.post(`{"jsonrpc":`, bothAccept)
	if got := readAll(t, r); r.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(got, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700") {
		t.Fatalf("parse error under SSEAlways: %q %q", r.Header.Get("Content-Type"), got)
	}
	r = c.post(`[{"jsonrpc":"2.0","id":77,"result":1},{"jsonrpc":"2.0","id":"i","method":"initialize"}]`, "application/json")
	if got := readAll(t, r); got != `[{"jsonrpc":"2.0","id":"i","result":"ready"}]` {
		t.Fatalf("a batch with a response: %s", got)
	}
}
