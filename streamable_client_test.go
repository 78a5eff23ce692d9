package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// clientSide is the Server a Streamable HTTP client serves the server's
// messages with: it answers "client/name" and records notifications, in
// the order they arrive (one at a time).
func clientSide(notes chan<- string) []jsonrpc.DialOption {
	return []jsonrpc.DialOption{jsonrpc.WithMaxConcurrency(1), jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.IsNotification() {
			notes <- req.Method + " " + string(req.Params)
			return nil, nil
		}
		if req.Method == "client/name" {
			return "ada", nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no " + req.Method}
	}))}
}

// recorder counts the requests an endpoint gets, by method and session.
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	by []string // "METHOD session"
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.by = append(r.by, req.Method+" "+req.Header.Get("Mcp-Session-Id"))
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *recorder) requests(method string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.by {
		if strings.HasPrefix(s, method+" ") {
			out = append(out, strings.TrimPrefix(s, method+" "))
		}
	}
	return out
}

func exerciseStreamable(t *testing.T, c *jsonrpc.Conn, notes chan string) {
	t.Helper()
	ctx := context.Background()
	var s string
	if err := c.Call(ctx, "initialize", map[string]any{}, &s); err != nil || s != "ready" {
		t.Fatalf("initialize: %q %v", s, err)
	}
	// The handler notifies twice during the call: both arrive, in order.
	if err := c.Call(ctx, "progress", nil, &s); err != nil || s != "done" {
		t.Fatalf("progress: %q %v", s, err)
	}
	for i := 1; i <= 2; i++ {
		select {
		case n := <-notes:
			if want := fmt.Sprintf(`notifications/progress {"progress":%d}`, i); n != want {
				t.Fatalf("notification %d: %s", i, n)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("notification %d never arrived", i)
		}
	}
	// The server calls the client back; the answer is POSTed.
	if err := c.Call(ctx, "ask", nil, &s); err != nil || s != "hello ada" {
		t.Fatalf("ask: %q %v", s, err)
	}
	// A batch, with a call whose answer is a stream and a notification.
	var b jsonrpc.Batch
	var p, i string
	bp := b.Call("progress", nil, &p)
	bi := b.Call("initialize", nil, &i)
	bu := b.Call("nope", nil, nil)
	b.Notify("progress", nil)
	if err := c.Batch(ctx, &b); err != nil || bp.Err != nil || bi.Err != nil || p != "done" || i != "ready" {
		t.Fatalf("batch: %v %v %v %q %q", err, bp.Err, bi.Err, p, i)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(bu.Err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("batch error element: %v", bu.Err)
	}
	for len(notes) > 0 {
		<-notes
	}
	if err := c.Notify(ctx, "progress", nil); err != nil {
		t.Fatalf("notify: %v", err)
	}
	if err := c.Call(ctx, "nope", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}
}

func TestStreamableClientStateless(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	rec := &recorder{h: srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{})}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	notes := make(chan string, 16)
	c, err := jsonrpc.Dial(context.Background(), hs.URL, append(clientSide(notes), jsonrpc.WithStreamableHTTP())...)
	if err != nil {
		t.Fatal(err)
	}
	exerciseStreamable(t, c.(*jsonrpc.Conn), notes)
	// The GET stream opens from a goroutine after the first answer; the
	// calls above can all be done before it is sent, and Close would then
	// cancel it unsent. Wait for it (bounded), then close.
	for deadline := time.Now().Add(5 * time.Second); len(rec.requests("GET")) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The server declined the GET stream (405) once, and the client did not
	// try again; no session, no DELETE.
	if got := rec.requests("GET"); len(got) != 1 {
		t.Fatalf("GET requests: %q", got)
	}
	if got := rec.requests("DELETE"); len(got) != 0 {
		t.Fatalf("DELETE without a session: %q", got)
	}
	if err := c.Call(context.Background(), "initialize", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

func TestStreamableClientSessions(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	rec := &recorder{h: srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true})}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	notes := make(chan string, 16)
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, clientSide(notes)...)
	if err != nil {
		t.Fatal(err)
	}
	exerciseStreamable(t, c, notes)
	posts := rec.requests("POST")
	session := posts[0+1] // the request after initialize carries the session
	if len(session) != 32 || posts[0] != "" {
		t.Fatalf("sessions of the POSTs: %q", posts)
	}
	for _, s := range posts[1:] {
		if s != session {
			t.Fatalf("a POST without the session: %q", posts)
		}
	}
	c.Close()
	if got := rec.requests("DELETE"); len(got) != 1 || got[0] != session {
		t.Fatalf("DELETE at Close: %q", got)
	}
	// The session is over on the server.
	raw := &streamClient{t: t, url: hs.URL, session: session}
	if r := raw.post(`{"jsonrpc":"2.0","id":1,"method":"progress"}`, bothAccept); readAll(t, r) == "" || r.StatusCode != http.StatusNotFound {
		t.Fatalf("after Close: %d", r.StatusCode)
	}
}

// A session the server ended gives 404, and is forgotten: the next
// initialization starts a new one.
func TestStreamableClientSessionEnded(t *testing.T) {
	srv := &jsonrpc.Server{Handler: streamableMux(nil)}
	rec := &recorder{h: srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true})}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	defer c.Close()
	ctx := context.Background()
	if err := c.Call(ctx, "initialize", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "progress", nil, nil); err != nil {
		t.Fatal(err)
	}
	del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
	del.Header.Set("Mcp-Session-Id", rec.requests("POST")[1])
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	var he *jsonrpc.HTTPError
	if err := c.Call(ctx, "progress", nil, nil); !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		t.Fatalf("call in an ended session: %v", err)
	}
	if err := c.Call(ctx, "initialize", nil, nil); err != nil {
		t.Fatalf("re-initialize: %v", err)
	}
	if err := c.Call(ctx, "progress", nil, nil); err != nil {
		t.Fatalf("call in the new session: %v", err)
	}
	posts := rec.requests("POST")
	if len(posts) != 5 || posts[0] != "" || posts[2] != posts[1] || posts[3] != "" || posts[4] == "" || posts[4] == posts[1] {
		t.Fatalf("sessions: %q", posts)
	}
}

// A plain JSON-RPC HTTP server (ServeHTTP) works with the client: JSON
// answers, 204 for notifications, 405 for the GET stream.
func TestStreamableClientPlainServer(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "add", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	hs := httptest.NewServer(&jsonrpc.Server{Handler: mux})
	defer hs.Close()
	c, err := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var n int
	if err := c.Call(ctx, "add", [2]int{2, 3}, &n); err != nil || n != 5 {
		t.Fatalf("call: %d %v", n, err)
	}
	if err := c.Notify(ctx, "add", [2]int{1, 1}); err != nil {
		t.Fatalf("notify: %v", err)
	}
	var b jsonrpc.Batch
	var x, y int
	b.Call("add", [2]int{1, 2}, &x)
	b.Call("add", [2]int{3, 4}, &y)
	b.Notify("add", [2]int{0, 0})
	if err := c.Batch(ctx, &b); err != nil || x != 3 || y != 7 {
		t.Fatalf("batch: %v %d %d", err, x, y)
	}
}

// A call whose context ends abandons its POST: the server's handler is
// cancelled, and the client goes on.
func TestStreamableClientCallContext(t *testing.T) {
	canceled := make(chan struct{}, 3) // room for each try's handler
	started := make(chan struct{}, 3)
	mux := streamableMux(canceled)
	srv := &jsonrpc.Server{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "wait" {
			started <- struct{}{}
		}
		return mux.ServeRPC(ctx, req)
	})}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	defer c.Close()
	// A deadline that passes before the POST reaches the handler (a loaded
	// machine) tests nothing: try again with a longer one.
	for _, d := range []time.Duration{100 * time.Millisecond, time.Second, 5 * time.Second} {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		err := c.Call(ctx, "wait", nil, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call: %v", err)
		}
		select {
		case <-started:
		default:
			continue // never served
		}
		select {
		case <-canceled:
		case <-time.After(5 * time.Second):
			t.Fatal("the server's handler was not cancelled")
		}
		break
	}
	if err := c.Call(context.Background(), "initialize", nil, nil); err != nil {
		t.Fatalf("next call: %v", err)
	}
}

// sseServer is a scripted Streamable HTTP server: it answers POSTs with
// post and GETs with get, and records the Last-Event-ID of each GET.
type sseServer struct {
	post, get func(w http.ResponseWriter, r *http.Request)
	mu        sync.Mutex
	lastIDs   []string
}

func (s *sseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		s.mu.Lock()
		s.lastIDs = append(s.lastIDs, r.Header.Get("Last-Event-ID"))
		s.mu.Unlock()
		s.get(w, r)
		return
	}
	if r.Method == http.MethodPost {
		s.post(w, r)
		return
	}
	w.WriteHeader(http.StatusMethodNotAllowed)
}

func writeSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// A POST stream cut after an event with an id is resumed with GET and
// Last-Event-ID; the standalone GET stream delivers notifications and is
// reopened when it ends.
func TestStreamableClientResume(t *testing.T) {
	gets := make(chan struct{}, 10)
	s := &sseServer{
		post: func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"id":1,`) {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			// The notification, then the stream drops before the response.
			writeSSE(w, "retry: 10\nid: p-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"tick\",\"params\":[1]}\n\n")
		},
		get: func(w http.ResponseWriter, r *http.Request) {
			gets <- struct{}{}
			switch r.Header.Get("Last-Event-ID") {
			case "p-1":
				writeSSE(w, "id: p-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"resumed\"}\n\n")
			case "":
				writeSSE(w, ": hello\n\nretry: 10\nid: g-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"tick\",\"params\":[\"get\"]}\n\n")
			default:
				<-r.Context().Done() // a stream with nothing more to say
			}
		},
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	notes := make(chan string, 16)
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, clientSide(notes)...)
	var got string
	if err := c.Call(context.Background(), "work", nil, &got); err != nil || got != "resumed" {
		t.Fatalf("resumed call: %q %v", got, err)
	}
	want := map[string]bool{"tick [1]": true, `tick ["get"]`: true}
	for len(want) > 0 {
		select {
		case n := <-notes:
			if !want[n] {
				t.Fatalf("unexpected notification %q", n)
			}
			delete(want, n)
		case <-time.After(5 * time.Second):
			t.Fatalf("missing notifications %v", want)
		}
	}
	// The GET stream ended after g-1 and is reopened from there.
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		ids := append([]string(nil), s.lastIDs...)
		s.mu.Unlock()
		if strings.Contains(strings.Join(ids, ","), "g-1") {
			break
		}
		select {
		case <-gets:
		case <-deadline:
			t.Fatalf("GET stream not reopened with Last-Event-ID: %q", ids)
		}
	}
	c.Close()
}

// Answers that break the protocol fail the call with an error saying so.
func TestStreamableClientBadAnswers(t *testing.T) {
	var answer func(w http.ResponseWriter)
	s := &sseServer{
		post: func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body); answer(w) },
		get:  func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) },
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, jsonrpc.WithMaxMessageSize(1000))
	defer c.Close()
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
	}{
		{"202 to a call", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted) }, "no response (HTTP 202"},
		{"500", func(w http.ResponseWriter) { http.Error(w, "boom", 500) }, "HTTP 500 Internal Server Error: boom"},
		{"stream without the response", func(w http.ResponseWriter) { writeSSE(w, ": nothing\n\n") }, "event stream ended before the response"},
		{"event too large", func(w http.ResponseWriter) { writeSSE(w, "data: "+strings.Repeat("x", 2000)+"\n\n") }, "over the size limit"},
		{"text/html", func(w http.ResponseWriter) { w.Header().Set("Content-Type", "text/html"); io.WriteString(w, "<html>") }, `Content-Type "text/html"`},
	} {
		answer = tc.answer
		err := c.Call(context.Background(), "m", nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.name == "event too large" && !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
			t.Errorf("%s: %v does not match ErrMessageTooLarge", tc.name, err)
		}
	}
}

// A notification the handler sends reaches the client's Server while the
// call is still running (the handler answers only once the client has
// seen it): the event stream is read as it arrives, not at its end.
func TestStreamableClientNotificationDuringCall(t *testing.T) {
	seen := make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "stepwise", func(ctx context.Context, _ struct{}) (string, error) {
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "tick", nil); err != nil {
			return "", err
		}
		select {
		case <-seen:
			return "streamed", nil
		case <-time.After(5 * time.Second):
			return "buffered", nil
		}
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	client := jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "tick" {
			close(seen)
		}
		return nil, nil
	})
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, jsonrpc.WithHandler(client))
	defer c.Close()
	var got string
	if err := c.Call(context.Background(), "stepwise", nil, &got); err != nil || got != "streamed" {
		t.Fatalf("%q %v", got, err)
	}
}

// A Streamable HTTP client: the notifications the handler sends during
// the call reach the client's Server before Call returns.
func ExampleDialStreamableHTTP() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "count", func(ctx context.Context, p struct{ N int }) (string, error) {
		for i := 1; i <= p.N; i++ {
			// A call (not a notification): it returns once the client has
			// served it, so the ticks come before the result.
			if err := jsonrpc.ConnFromContext(ctx).Call(ctx, "tick", []int{i}, nil); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()

	// The client's handler serves what the server sends it, one at a time.
	client := jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
		fmt.Println(req.Method, string(req.Params))
		return nil, nil
	})
	ctx := context.Background()
	c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL, jsonrpc.WithHandler(client), jsonrpc.WithMaxConcurrency(1))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var result string
	if err := c.Call(ctx, "count", map[string]int{"N": 2}, &result); err != nil {
		panic(err)
	}
	fmt.Println(result)
	// Output:
	// tick [1]
	// tick [2]
	// done
}

// A server that keeps a POST's stream open after the response: the call
// returns with the response, and the stream is closed.
func TestStreamableClientStreamLeftOpen(t *testing.T) {
	left := make(chan struct{})
	s := &sseServer{
		post: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			writeSSE(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"ok\"}\n\n")
			<-r.Context().Done()
			close(left)
		},
		get: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) },
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var got string
	if err := c.Call(ctx, "m", nil, &got); err != nil || got != "ok" {
		t.Fatalf("%q %v", got, err)
	}
	select {
	case <-left:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream was left open")
	}
}

// After initialize, every request carries the negotiated revision in
// Mcp-Protocol-Version (MCP: the client MUST send it); a server that
// does not speak it answers 400.
func TestStreamableClientProtocolVersionHeader(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(_ context.Context, p struct {
		Version string `json:"protocolVersion"`
	}) (map[string]string, error) {
		return map[string]string{"protocolVersion": p.Version}, nil
	})
	jsonrpc.Register(mux, "ping", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	srv := &jsonrpc.Server{Handler: mux}
	h := srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true, ProtocolVersions: []string{"2025-11-25"}})
	ctx := context.Background()
	for _, tc := range []struct {
		version string
		status  int // of the ping after initialize (0: success)
	}{{"2025-11-25", 0}, {"1999-01-01", http.StatusBadRequest}} {
		var mu sync.Mutex
		var seen []string
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Method+" "+r.Header.Get("Mcp-Protocol-Version"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
		c, _ := jsonrpc.DialStreamableHTTP(ctx, hs.URL)
		if err := c.Call(ctx, "initialize", map[string]string{"protocolVersion": tc.version}, nil); err != nil {
			t.Fatalf("%s: initialize: %v", tc.version, err)
		}
		err := c.Call(ctx, "ping", nil, nil)
		var he *jsonrpc.HTTPError
		if tc.status == 0 && err != nil || tc.status != 0 && (!errors.As(err, &he) || he.StatusCode != tc.status) {
			t.Fatalf("%s: ping: %v", tc.version, err)
		}
		c.Close()
		hs.Close() // every request it got has been served
		mu.Lock()
		got := seen
		mu.Unlock()
		// The initialize POST comes first (the GET stream opens after its
		// answer); the GET may be served after the DELETE.
		if got[0] != "POST " || !slices.Contains(got, "POST "+tc.version) || !slices.Contains(got, "DELETE "+tc.version) {
			t.Fatalf("%s: %q", tc.version, got)
		}
		for _, s := range got[1:] {
			if !strings.HasSuffix(s, " "+tc.version) {
				t.Fatalf("%s: a request without the version: %q", tc.version, got)
			}
		}
	}
}

// With a cancellation convention, a call whose context ends while its POST
// is open sends the cancel too (MCP: a dropped stream is not a
// cancellation).
func TestStreamableClientSendsCancel(t *testing.T) {
	cancelled := make(chan string, 1)
	s := &sseServer{
		post: func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), "notifications/cancelled") {
				cancelled <- string(body)
				w.WriteHeader(http.StatusAccepted)
				return
			}
			writeSSE(w, ": working\n\n")
			<-r.Context().Done()
		},
		get: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) },
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	c, _ := jsonrpc.DialStreamableHTTP(context.Background(), hs.URL, jsonrpc.WithConvention(jsonrpc.ConventionMCP))
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call: %v", err)
	}
	select {
	case got := <-cancelled:
		if !strings.Contains(got, `"method":"notifications/cancelled","params":{"requestId":1,`) {
			t.Fatalf("cancel: %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no cancel sent")
	}
}
