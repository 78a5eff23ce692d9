package streamable

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

func testConfig() ServerConfig {
	return ServerConfig{IdleTimeout: time.Hour, MaxSessions: 2, Standalone: true, OutboxSize: 4, OutboxBytes: 1 << 10,
		StoreSize: 8, StoreBytes: 1 << 10, KeepAlive: -1, Retry: time.Second, WriteTimeout: func() time.Duration { return time.Second }}
}

type closer struct{ closed atomic.Int32 }

func (c *closer) Close() error { c.closed.Add(1); return nil }

func TestSessionsLifecycle(t *testing.T) {
	var ended []string
	cfg := testConfig()
	cfg.OnEnd = func(id string) { ended = append(ended, id) }
	var conns []*closer
	cfg.NewConn = func(context.Context, *Session) io.Closer {
		c := &closer{}
		conns = append(conns, c)
		return c
	}
	tab := NewSessions(cfg)
	a, b := tab.New(), tab.New()
	if a == nil || b == nil || a.ID == b.ID || len(a.ID) != 32 {
		t.Fatalf("sessions %v %v", a, b)
	}
	if tab.New() != nil {
		t.Fatal("a third session past MaxSessions 2")
	}
	if got := a.Conn(context.Background()); got != conns[0] {
		t.Fatal("Conn did not make the connection")
	}
	if got := a.Conn(context.Background()); got != conns[0] || len(conns) != 1 {
		t.Fatal("Conn made another connection")
	}
	conn := conns[0]
	if !tab.End(a.ID) || tab.End(a.ID) || tab.Touch(a.ID) != nil {
		t.Fatal("End")
	}
	if len(ended) != 1 || ended[0] != a.ID || conn.closed.Load() != 1 {
		t.Fatalf("OnEnd %v, connection closed %d times", ended, conn.closed.Load())
	}
	if a.Conn(context.Background()) != nil {
		t.Fatal("an ended session made a connection")
	}
	if err := a.Standalone.Enqueue([]byte("{}")); !errors.Is(err, sse.ErrEnded) {
		t.Fatalf("the standalone stream of an ended session: %v", err)
	}
	if tab.New() == nil {
		t.Fatal("no room after End")
	}
}

func TestSessionsExpire(t *testing.T) {
	cfg := testConfig()
	cfg.IdleTimeout = 50 * time.Millisecond
	ended := make(chan string, 1)
	cfg.OnEnd = func(id string) { ended <- id }
	tab := NewSessions(cfg)
	s := tab.New()
	select {
	case id := <-ended:
		if id != s.ID {
			t.Fatalf("ended %s", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an idle session never expired")
	}
	if tab.Touch(s.ID) != nil {
		t.Fatal("an expired session is still live")
	}
}

func TestSessionStreams(t *testing.T) {
	tab := NewSessions(testConfig())
	s := tab.New()
	if s.Stream(0) != s.Standalone || s.Stream(1) != nil {
		t.Fatal("before any POST stream")
	}
	es := tab.PostStream(s)
	if es.Num != 1 || s.Stream(1) != es || es.Store != s.Store {
		t.Fatalf("stream %d", es.Num)
	}
	s.CloseStream(es)
	if got := s.Stream(1); got == nil || got == es || got.Num != 1 {
		t.Fatal("an ended stream is resumed from the store")
	}
	if s.Stream(2) != nil {
		t.Fatal("a stream never opened")
	}
}

func TestServeGETAndDELETE(t *testing.T) {
	tab := NewSessions(testConfig())
	s := tab.New()
	for _, c := range []struct {
		method, accept, session, last string
		want                          int
	}{
		{http.MethodGet, "application/json", s.ID, "", http.StatusNotAcceptable},
		{http.MethodGet, sse.ContentType, "", "", http.StatusBadRequest},
		{http.MethodGet, sse.ContentType, "nope", "", http.StatusNotFound},
		{http.MethodGet, sse.ContentType, s.ID, "7-1", http.StatusBadRequest},
		{http.MethodGet, sse.ContentType, s.ID, "junk", http.StatusBadRequest},
		{http.MethodDelete, "", "", "", http.StatusBadRequest},
		{http.MethodDelete, "", "nope", "", http.StatusNotFound},
		{http.MethodDelete, "", s.ID, "", http.StatusNoContent},
		{http.MethodDelete, "", s.ID, "", http.StatusNotFound},
	} {
		r := httptest.NewRequest(c.method, "/", nil)
		r.Header.Set("Accept", c.accept)
		r.Header.Set(mcp.SessionHeader, c.session)
		if c.last != "" {
			r.Header.Set("Last-Event-ID", c.last)
		}
		w := httptest.NewRecorder()
		if c.method == http.MethodGet {
			tab.ServeGET(w, r)
		} else {
			tab.ServeDELETE(w, r)
		}
		if w.Code != c.want {
			t.Errorf("%s session %q Last-Event-ID %q: %d, want %d", c.method, c.session, c.last, w.Code, c.want)
		}
	}
}

func TestForPOST(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSessions, cfg.InitializeMethod = 1, "initialize"
	tab := NewSessions(cfg)
	post := func(session string, initialize bool) (*Session, *httptest.ResponseRecorder) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set(mcp.SessionHeader, session)
		w := httptest.NewRecorder()
		data := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if initialize {
			data = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
		}
		var sc wire.Scanner
		var m wire.Message
		if err := sc.Parse(data, 64, &m); err != nil {
			t.Fatal(err)
		}
		s := tab.ForPOST(w, r, data, &m)
		return s, w
	}
	s, w := post("", true)
	if s == nil || w.Header().Get(mcp.SessionHeader) != s.ID {
		t.Fatalf("initialize: %d %v", w.Code, w.Header())
	}
	if got, _ := post(s.ID, false); got != s {
		t.Fatal("the session's POST")
	}
	if _, w := post("", true); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("past MaxSessions: %d", w.Code)
	}
	if _, w := post("", false); w.Code != http.StatusBadRequest {
		t.Fatalf("no session header: %d", w.Code)
	}
	if _, w := post("nope", false); w.Code != http.StatusNotFound {
		t.Fatalf("unknown session: %d", w.Code)
	}
}

// replier sets a header of its own and writes JSON as it is.
type replier struct{}

func (replier) ReplyHeader(h http.Header) { h.Set("X-Reply", "1") }

func (replier) WriteJSON(w http.ResponseWriter, msg []byte) error {
	w.Header()["Content-Type"] = jsonContentType
	_, err := w.Write(msg)
	return err
}

func TestAnswer(t *testing.T) {
	var header replier
	newAnswer := func(w http.ResponseWriter, events *sse.Stream) *Answer {
		a := &Answer{W: w, Events: events, Reply: header}
		a.Events.Open(sse.NewOut(w))
		return a
	}
	// A reply alone is one JSON body.
	w := httptest.NewRecorder()
	a := newAnswer(w, &sse.Stream{})
	if err := a.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":1}`), true); err != nil {
		t.Fatal(err)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" || w.Header().Get("X-Reply") != "1" || w.Body.String() != `{"jsonrpc":"2.0","id":1,"result":1}` {
		t.Fatalf("JSON answer: %s %q", ct, w.Body)
	}
	if err := a.Write([]byte(`{}`), true); !errors.Is(err, sse.ErrEnded) {
		t.Fatalf("a second reply: %v", err)
	}
	if a.LetGo() {
		t.Fatal("LetGo cut an answer already finished")
	}
	// A notification first makes it an event stream.
	w = httptest.NewRecorder()
	a = newAnswer(w, &sse.Stream{})
	if err := a.Write([]byte(`{"jsonrpc":"2.0","method":"n"}`), false); err != nil {
		t.Fatal(err)
	}
	if err := a.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":1}`), true); err != nil {
		t.Fatal(err)
	}
	if ct := w.Header().Get("Content-Type"); ct != sse.ContentType || strings.Count(w.Body.String(), "event: message") != 2 {
		t.Fatalf("event stream: %s %q", ct, w.Body)
	}
	// Unanswered (every request cancelled): the answer ends with no response.
	w = httptest.NewRecorder()
	a = newAnswer(w, &sse.Stream{})
	a.Unanswered()
	if ct := w.Header().Get("Content-Type"); ct != sse.ContentType || strings.Contains(w.Body.String(), "event: message") {
		t.Fatalf("an unanswered answer: %s %q", ct, w.Body)
	}
	if err := a.Write([]byte(`{}`), true); !errors.Is(err, sse.ErrEnded) {
		t.Fatalf("a reply after Unanswered: %v", err)
	}
	// Let go before its reply, a JSON answer is cut: nothing more is written.
	w = httptest.NewRecorder()
	a = newAnswer(w, &sse.Stream{})
	if !a.LetGo() {
		t.Fatal("LetGo did not cut a JSON answer")
	}
	if err := a.Write([]byte(`{"jsonrpc":"2.0","method":"n"}`), false); !errors.Is(err, sse.ErrEnded) || w.Body.Len() != 0 || len(w.Header()) != 0 {
		t.Fatalf("a write after LetGo: %v, %q %v", err, w.Body, w.Header())
	}
	// An event stream that keeps its events goes on into the store.
	w = httptest.NewRecorder()
	store := sse.NewStore(8, 1<<10)
	a = newAnswer(w, &sse.Stream{Store: store, Num: 1})
	if err := a.Write([]byte(`{"jsonrpc":"2.0","method":"n"}`), false); err != nil {
		t.Fatal(err)
	}
	a.Events.Detach()
	sent := w.Body.Len()
	if a.LetGo() {
		t.Fatal("LetGo cut an answer that keeps its events")
	}
	if err := a.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":1}`), true); err != nil || w.Body.Len() != sent {
		t.Fatalf("the reply after LetGo: %v, %d bytes written after", err, w.Body.Len()-sent)
	}
}

func TestInboxAndRoutes(t *testing.T) {
	var b Inbox
	b.Init("")
	b.Deliver([]byte("first"))
	if msg, err := b.Recv(); err != nil || string(msg) != "first" {
		t.Fatalf("Recv %q %v", msg, err)
	}
	if !b.Shut() || b.Shut() {
		t.Fatal("Shut reports the first call only")
	}
	if _, err := b.Recv(); err != io.EOF {
		t.Fatalf("Recv after Shut: %v", err)
	}
	for range 10 {
		b.Deliver([]byte("late")) // more than the inbox holds: none blocks once it is shut
	}

	// An inbox shut unused costs no allocation, and behaves as one used.
	var u Inbox
	if allocs := testing.AllocsPerRun(100, func() { u = Inbox{}; u.Init("s"); u.Shut() }); allocs != 0 {
		t.Errorf("%v allocations for an inbox shut unused", allocs)
	}
	u.Deliver([]byte("late")) // dropped, not blocking
	if _, err := u.Recv(); err != io.EOF || u.Shut() || u.SessionID() != "s" {
		t.Fatalf("Recv on an inbox shut unused: %v", err)
	}
	<-u.Closed()

	var r Routes
	ta, tb := &target{session: "a"}, &target{session: "b"}
	k1, ok1 := r.Add(ta)
	k2, ok2 := r.Add(tb)
	if !ok1 || !ok2 || k1 == 0 || k1 == k2 || k1 >= maxRoutes || k2 >= maxRoutes {
		t.Fatalf("keys %d %d", k1, k2)
	}
	if v, ok := r.m[k2]; !ok || v != tb {
		t.Fatal("Add")
	}
	r.Remove(k1)
	if _, ok := r.m[k1]; ok {
		t.Fatal("a removed key")
	}
	if got := r.All(); len(got) != 1 || got[0] != tb {
		t.Fatalf("All %v", got)
	}
	// Keys wrap around below maxRoutes and skip 0 and those in use.
	r.next = maxRoutes - 1
	if k, _ := r.Add(&target{}); k == 0 || k == k2 || k >= maxRoutes {
		t.Fatalf("wrapped key %d", k)
	}
	// No more than Limit live at once: a key freed is given again.
	r.Limit = 2
	if _, ok := r.Add(&target{}); ok {
		t.Fatal("Add past Limit")
	}
	r.Remove(k2)
	if _, ok := r.Add(&target{}); !ok {
		t.Fatal("Add below Limit")
	}
}

func TestSingleResponse(t *testing.T) {
	data := []byte(`[{"jsonrpc":"2.0","id":1,"result":{"a":1}},{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}},{"jsonrpc":"2.0","method":"n"}]`)
	var sc wire.Scanner
	var m wire.Message
	if err := sc.Parse(data, MaxDepth, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`, `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}`, ""}
	for i := range m.Elems {
		if got := string(SingleResponse(data, &m.Elems[i])); got != want[i] {
			t.Errorf("element %d: %s, want %s", i, got, want[i])
		}
	}
}

func TestStatusByError(t *testing.T) {
	for _, c := range []struct {
		body  string
		reply bool // the body is a JSON answer (Reply), not an event stream
		want  int
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, true, http.StatusNotFound},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch","data":{}}}`, true, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}`, true, http.StatusOK},
		{`{"jsonrpc":"2.0","id":1,"result":null}`, true, http.StatusOK},
		{`[{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}]`, true, http.StatusOK},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`, false, http.StatusOK},
	} {
		for _, gzipped := range []bool{false, true} {
			rec := httptest.NewRecorder()
			w := &StatusByError{ResponseWriter: rec}
			if c.reply {
				w.Reply([]byte(c.body))
			}
			body := []byte(c.body)
			if gzipped { // the status is decided before: the encoding does not matter
				var zb bytes.Buffer
				zw := gzip.NewWriter(&zb)
				zw.Write(body)
				zw.Close()
				body = zb.Bytes()
				w.Header().Set("Content-Encoding", "gzip")
			}
			w.WriteHeader(http.StatusOK) // as the server's JSON writer does
			w.Write(body)
			if rec.Code != c.want {
				t.Errorf("%s (reply %v, gzipped %v): %d, want %d", c.body, c.reply, gzipped, rec.Code, c.want)
			}
		}
	}
}

// A session that keeps no events sent no ids: a Last-Event-ID names no
// stream of it (400), and does not reach the store it lacks.
func TestLastEventIDWithoutStore(t *testing.T) {
	cfg := testConfig()
	cfg.StoreSize = 0
	tab := NewSessions(cfg)
	s := tab.New()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept", sse.ContentType)
	r.Header.Set(mcp.SessionHeader, s.ID)
	r.Header.Set("Last-Event-ID", "0-3")
	w := httptest.NewRecorder()
	tab.ServeGET(w, r)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
}
