package jsonrpc

// Hostile input on the stream transports (issue 6): each case asserts the
// documented error and that the connection (when it stays open) or a fresh
// one is served normally afterwards. HTTP and WebSocket cases live with
// their transports.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const okReq = `{"jsonrpc":"2.0","method":"echo","params":["ok"],"id":"ok"}`

// hostileServer serves rulesMux on a TCP listener with the given framing.
func hostileServer(t *testing.T, srv *Server, framing Framing) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, ListenFraming(framing)) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return l.Addr().String()
}

func newHostileServer() *Server {
	return &Server{Handler: rulesMux(), MaxMessageSize: 4 << 10, MaxBatchLen: 10, Logger: quietLogger}
}

// client is one raw connection to a server.
type client struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{t: t, nc: nc, br: bufio.NewReaderSize(nc, 1<<16)}
}

func (c *client) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, s); err != nil {
		c.t.Fatal(err)
	}
}

// line reads one newline-framed reply.
func (c *client) line() []byte {
	c.t.Helper()
	b, err := c.br.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("read: %v (got %q)", err, b)
	}
	return bytes.TrimRight(b, "\r\n")
}

// frame reads one Content-Length framed reply.
func (c *client) frame() []byte {
	c.t.Helper()
	n := -1
	for {
		l, err := c.br.ReadString('\n')
		if err != nil {
			c.t.Fatalf("read header: %v", err)
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		c.t.Fatal("reply without Content-Length")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.br, b); err != nil {
		c.t.Fatal(err)
	}
	return b
}

// expectClosed checks that the server closed the connection.
func (c *client) expectClosed() {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := c.br.ReadByte()
	if err == nil {
		rest, _ := c.br.Peek(c.br.Buffered())
		c.t.Fatalf("connection still open: read %q%q", b, rest)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatal("connection still open (read timed out)")
	}
}

func (c *client) checkServedLine() {
	c.t.Helper()
	c.write(okReq + "\n")
	checkWant(c.t, c.line(), ok(`"ok"`, `["ok"]`))
}

func (c *client) checkServedFrame() {
	c.t.Helper()
	c.write(lspFrame(okReq))
	checkWant(c.t, c.frame(), ok(`"ok"`, `["ok"]`))
}

func lspFrame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func TestHostileOversizedLineResyncs(t *testing.T) {
	addr := hostileServer(t, newHostileServer(), FramingLine)
	c := dialRaw(t, addr)
	for _, size := range []int{4<<10 + 1, 64 << 10, 1 << 20} {
		big := `{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("x", size) + `"],"id":1}`
		c.write(big + "\n")
		checkWant(t, c.line(), want{id: "null", code: CodeInvalidRequest, msg: "message too large"})
		c.checkServedLine() // the same connection goes on
	}
	// Exactly at the limit is fine.
	pad := 4<<10 - len(`{"jsonrpc":"2.0","method":"echo","params":[""],"id":1}`)
	c.write(`{"jsonrpc":"2.0","method":"echo","params":["` + strings.Repeat("y", pad) + `"],"id":1}` + "\n")
	checkWant(t, c.line(), ok("1", ""))
	dialRaw(t, addr).checkServedLine()
}

func TestHostileOversizedHeaderBodyCloses(t *testing.T) {
	addr := hostileServer(t, newHostileServer(), FramingHeader)
	c := dialRaw(t, addr)
	c.checkServedFrame()
	c.write("Content-Length: 5000\r\n\r\n" + strings.Repeat(" ", 5000))
	checkWant(t, c.frame(), want{id: "null", code: CodeInvalidRequest, msg: "message too large"})
	c.expectClosed()
	dialRaw(t, addr).checkServedFrame()

	// The error reply must reach a peer that is still sending when the
	// server gives up (closing with unread input would reset the
	// connection and destroy the reply before the peer reads it).
	c = dialRaw(t, addr)
	go func() {
		io.WriteString(c.nc, "Content-Length: 1048576\r\n\r\n"+strings.Repeat(" ", 1<<20))
	}()
	time.Sleep(100 * time.Millisecond) // read late, after the server has closed
	checkWant(t, c.frame(), want{id: "null", code: CodeInvalidRequest, msg: "message too large"})
	c.expectClosed()
}

func TestHostileContentLengthHeaders(t *testing.T) {
	addr := hostileServer(t, newHostileServer(), FramingHeader)
	cases := []struct {
		name, in string
		code     int64
	}{
		{"negative", "Content-Length: -5\r\n\r\n", CodeParseError},
		{"huge", "Content-Length: 99999999999999999999999\r\n\r\n", CodeParseError},
		{"max int64", "Content-Length: 9223372036854775807\r\n\r\n", CodeInvalidRequest},
		{"non-numeric", "Content-Length: ten\r\n\r\n", CodeParseError},
		{"hex", "Content-Length: 0x10\r\n\r\n", CodeParseError},
		{"empty value", "Content-Length: \r\n\r\n", CodeParseError},
		{"fraction", "Content-Length: 1.5\r\n\r\n", CodeParseError},
		{"missing", "Content-Type: application/json\r\n\r\n" + okReq, CodeParseError},
		{"repeated", "Content-Length: 5\r\nContent-Length: 5\r\n\r\n", CodeParseError},
		{"repeated other case", "Content-Length: 5\r\ncontent-length: 6\r\n\r\n", CodeParseError},
		{"no colon", "Content-Length 5\r\n\r\n", CodeParseError},
		{"header section too long", "X-Junk: " + strings.Repeat("a", 9<<10) + "\r\n", CodeParseError},
		{"many headers", strings.Repeat("X-A: b\r\n", 2000), CodeParseError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.write(tc.in)
			checkWant(t, c.frame(), want{id: "null", code: tc.code})
			c.expectClosed()
			dialRaw(t, addr).checkServedFrame()
		})
	}
	// Accepted variants: name case, spaces, other headers, CRLF or LF.
	c := dialRaw(t, addr)
	for _, in := range []string{
		"content-length: " + strconv.Itoa(len(okReq)) + "\r\n\r\n" + okReq,
		"CONTENT-LENGTH:" + strconv.Itoa(len(okReq)) + "\r\n\r\n" + okReq,
		"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(okReq)) + "\r\n\r\n" + okReq,
		"Content-Length: " + strconv.Itoa(len(okReq)) + "\n\n" + okReq,
	} {
		c.write(in)
		checkWant(t, c.frame(), ok(`"ok"`, `["ok"]`))
	}
}

func TestHostileGarbageOnStreams(t *testing.T) {
	addr := hostileServer(t, newHostileServer(), FramingLine)
	c := dialRaw(t, addr)
	for _, g := range []string{
		"\xff\xfe\xfd", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xc0\xaf\"],\"id\":1}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\\ud800\"],\"id\":1}", "\x00\x01\x02", "{{{{", "]]]]",
		`{"jsonrpc":"2.0","method":"echo","id":1}{"jsonrpc":"2.0","method":"panic","id":2}`,
	} {
		c.write(g + "\n")
		checkWant(t, c.line(), fail("null", CodeParseError))
		c.checkServedLine()
	}
	// Smuggling attempts: one side must not see another method than the other.
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"echo","Method":"panic","id":1}`,
		`{"jsonrpc":"2.0","method":"echo","method":"panic","id":1}`,
		`{"jsonrpc":"2.0","method":"echo","m\u0065thod":"panic","id":1}`,
		`{"jsonrpc":"2.0","method":"echo","METHOD":"panic","id":1}`,
		`{"jsonrpc":"2.0","method":"echo","method\u0000":"panic","id":1}`,
	} {
		c.write(s + "\n")
		checkWant(t, c.line(), fail("1", CodeInvalidRequest))
	}
	c.checkServedLine()
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileHugeBatchAllocation: a batch far over MaxBatchLen is rejected
// with one -32600 without memory per element (before the fix, a 2 MiB batch
// of "1," allocated an envelope for each of its million elements, ~250 MB).
func TestHostileHugeBatchAllocation(t *testing.T) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger} // default MaxBatchLen 1000
	msg := []byte("[" + strings.Repeat("1,", 1<<20) + "1]")
	var reply []byte
	alloc := allocDuring(func() { reply = srv.Process(context.Background(), msg) })
	checkWant(t, reply, want{id: "null", code: CodeInvalidRequest, msg: "1048577 requests, the limit is 1000"})
	if alloc > 512<<10 {
		t.Fatalf("rejecting the batch allocated %d bytes", alloc)
	}
	// The same over a stream, and the connection goes on.
	srv2 := &Server{Handler: rulesMux(), MaxBatchLen: 3, Logger: quietLogger}
	addr := hostileServer(t, srv2, FramingLine)
	c := dialRaw(t, addr)
	c.write("[" + strings.Repeat(okReq+",", 1000) + okReq + "]\n")
	checkWant(t, c.line(), want{id: "null", code: CodeInvalidRequest, msg: "batch too long"})
	c.checkServedLine()
}

// TestHostileDeepNesting: nesting past MaxDepth is scanned to the end,
// without recursion, so that invalid JSON is a parse error (-32700) however
// deep it goes and only valid JSON nested too deep is -32600 (issue 12
// point 8; before, anything past the limit was -32600).
func TestHostileDeepNesting(t *testing.T) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger, MaxMessageSize: 4 << 20}
	const n = 100_000
	closed := func(open, close string) string { return strings.Repeat(open, n) + strings.Repeat(close, n) }
	inParams := func(v string) string { return `{"jsonrpc":"2.0","method":"echo","id":1,"params":` + v + "}" }
	for name, tc := range map[string]struct {
		msg  string
		code int64
	}{
		"unclosed arrays":     {strings.Repeat("[", n), CodeParseError},
		"a million arrays":    {strings.Repeat("[", 1_000_000), CodeParseError},
		"unclosed objects":    {strings.Repeat(`{"a":`, n), CodeParseError},
		"unclosed in params":  {inParams(strings.Repeat("[", n)), CodeParseError},
		"unclosed in a batch": {"[" + strings.Repeat("[", n), CodeParseError},
		"wrong closer":        {strings.Repeat("[", n) + "}" + strings.Repeat("]", n-1), CodeParseError},
		"bad scalar deep":     {strings.Repeat("[", n) + "nul" + strings.Repeat("]", n), CodeParseError},
		"missing colon deep":  {strings.Repeat(`{"a":`, n) + `{"b"}` + strings.Repeat("}", n), CodeParseError},
		"trailing comma deep": {strings.Repeat("[", n) + "1," + strings.Repeat("]", n), CodeParseError},
		"garbage after deep":  {closed("[", "]") + "x", CodeParseError},
		"bad utf8 deep":       {strings.Repeat("[", n) + "\"\xff\"" + strings.Repeat("]", n), CodeParseError},
		"closed arrays":       {closed("[", "]"), CodeInvalidRequest},
		"closed objects":      {closed(`{"a":`, "}")[:5*n] + "1" + strings.Repeat("}", n), CodeInvalidRequest},
		"mixed, with members": {strings.Repeat(`[{"a":1,"b":[2,"x"],"c":`, n) + "{}" + strings.Repeat("}]", n), CodeInvalidRequest},
		"closed in params":    {inParams(closed("[", "]")), CodeInvalidRequest},
		"closed in a batch":   {"[" + closed("[", "]") + "]", CodeInvalidRequest},
		"just past the limit": {closed("[", "]")[n-129 : n+129], CodeInvalidRequest},
	} {
		t.Run(name, func(t *testing.T) {
			var reply []byte
			data := []byte(tc.msg)
			alloc := allocDuring(func() { reply = srv.Process(context.Background(), data) })
			checkWant(t, reply, want{id: "null", code: tc.code})
			// One bit per level past the limit, no recursion: at most an
			// eighth of the message (plus growth), not a frame per level.
			if limit := uint64(len(data)/4 + 64<<10); alloc > limit {
				t.Fatalf("scanning %d bytes allocated %d bytes (limit %d)", len(data), alloc, limit)
			}
		})
	}
	// At the limit: 128 levels in all (the envelope is one) are accepted.
	params := strings.Repeat("[", 127) + strings.Repeat("]", 127)
	checkWant(t, dispatchOnce(srv, req("echo", params, "1")), ok("1", params))
	params = strings.Repeat("[", 128) + strings.Repeat("]", 128)
	checkWant(t, dispatchOnce(srv, req("echo", params, "1")), fail("null", CodeInvalidRequest))
	// Over a stream the connection goes on.
	addr := hostileServer(t, srv, FramingLine)
	c := dialRaw(t, addr)
	c.write(strings.Repeat("[", 1_000_000) + "\n")
	checkWant(t, c.line(), want{id: "null", code: CodeParseError, msg: "unexpected end of JSON input"})
	c.write(closed("[", "]") + "\n")
	checkWant(t, c.line(), want{id: "null", code: CodeInvalidRequest, msg: "depth"})
	c.checkServedLine()
}

// BenchmarkDeepNesting: a million "[" are answered in one pass (a few
// milliseconds), allocating one bit per level past the limit.
func BenchmarkDeepNesting(b *testing.B) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger}
	data := []byte(strings.Repeat("[", 1_000_000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		srv.Process(context.Background(), data)
	}
}

func TestHostileHugeNumbersAndIDs(t *testing.T) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger}
	addr := hostileServer(t, srv, FramingLine)
	c := dialRaw(t, addr)
	for _, id := range []string{
		strings.Repeat("9", 100_000), "-" + strings.Repeat("1", 5000) + "." + strings.Repeat("0", 5000) + "e-99999999999",
		`"` + strings.Repeat("\\u00e9", 20_000) + `"`, "1e999999999999999999999", "18446744073709551616",
	} {
		c.write(req("echo", `[1]`, id) + "\n")
		checkWant(t, c.line(), ok(id, "[1]"))
	}
	// Huge numbers as params come back unchanged (raw params), and a typed
	// method reports them as invalid params instead of overflowing.
	n := strings.Repeat("7", 50_000)
	c.write(req("echo", "["+n+"]", "1") + "\n")
	checkWant(t, c.line(), ok("1", "["+n+"]"))
	c.write(req("square", "["+n+"]", "1") + "\n")
	checkWant(t, c.line(), fail("1", CodeInvalidParams))
	c.write(req("subtract", `[1e400,1]`, "1") + "\n")
	checkWant(t, c.line(), fail("1", CodeInvalidParams))
	c.checkServedLine()
}

func TestHostilePanickingHandlers(t *testing.T) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger}
	addr := hostileServer(t, srv, FramingLine)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c := dialRaw(t, addr)
			ms := []string{"panic", "panicnil", "bad_result", "bad_raw", "nan", "typednil", "panic_marshal", "panic_stream", "panic_elem"}
			for i := range 54 {
				m := ms[i%len(ms)]
				c.write(req(m, "", strconv.Itoa(i)) + "\n")
				checkWant(t, c.line(), fail(strconv.Itoa(i), CodeInternalError))
				c.write(req(m, "", "") + "\n") // as a notification: nothing
			}
			c.checkServedLine()
		})
	}
	wg.Wait()
	dialRaw(t, addr).checkServedLine()
}

// TestHostileSlowWriter trickles requests a few bytes at a time.
func TestHostileSlowWriter(t *testing.T) {
	for _, f := range []Framing{FramingLine, FramingHeader} {
		t.Run(f.String(), func(t *testing.T) {
			addr := hostileServer(t, &Server{Handler: rulesMux(), Logger: quietLogger}, f)
			c := dialRaw(t, addr)
			msg := okReq + "\n" + okReq + "\n"
			if f == FramingHeader {
				msg = lspFrame(okReq) + lspFrame(okReq)
			}
			for i := 0; i < len(msg); i += 3 {
				c.write(msg[i:min(i+3, len(msg))])
				time.Sleep(200 * time.Microsecond)
			}
			for range 2 {
				if f == FramingHeader {
					checkWant(t, c.frame(), ok(`"ok"`, `["ok"]`))
				} else {
					checkWant(t, c.line(), ok(`"ok"`, `["ok"]`))
				}
			}
		})
	}
}

// bigMux has a method returning n bytes, to fill a peer that does not read.
func bigMux() *Mux {
	mux := rulesMux()
	Register(mux, "big", func(_ context.Context, n int) (string, error) { return strings.Repeat("x", n), nil })
	return mux
}

// slowReaderPair returns a server Conn on one end of a TCP loopback
// connection and the raw client end, which the test never reads.
func slowReaderPair(t *testing.T, writeTimeout time.Duration) (*Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	conn := NewConn(NewStream(sc, StreamOptions{}), &Server{Handler: bigMux(), MaxConcurrency: 4, WriteTimeout: writeTimeout, Logger: quietLogger})
	t.Cleanup(func() { conn.Close() })
	return conn, cc
}

// flood sends calls of big until the connection breaks or stop closes.
func flood(nc net.Conn, stop <-chan struct{}) {
	r := []byte(req("big", "[262144]", "1") + "\n")
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := nc.Write(r); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
	}
}

func TestHostileSlowReaderWriteTimeout(t *testing.T) {
	conn, cc := slowReaderPair(t, 200*time.Millisecond)
	stop := make(chan struct{})
	defer close(stop)
	go flood(cc, stop)
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a peer that never reads kept the connection open")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "write timed out") {
		t.Fatalf("Err = %v, want a write timeout", err)
	}
	// A fresh connection is served normally.
	conn2, cc2 := slowReaderPair(t, 200*time.Millisecond)
	_ = conn2
	c := &client{t: t, nc: cc2, br: bufio.NewReader(cc2)}
	cc2.SetDeadline(time.Now().Add(5 * time.Second))
	c.checkServedLine()
}

// deadlineless hides SetWriteDeadline, to test the timer fallback.
type deadlineless struct{ net.Conn }

func (d deadlineless) SetWriteDeadline(time.Time) error { return errors.New("not supported") }

func TestHostileSlowReaderNoDeadlineSupport(t *testing.T) {
	a, b := net.Pipe() // never read b
	defer b.Close()
	s := NewStream(deadlineless{a}, StreamOptions{}).(stream)
	s.setLimits(DefaultMaxMessageSize, 100*time.Millisecond)
	errc := make(chan error, 1)
	go func() { errc <- s.Send([]byte(okReq)) }()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "write timed out") {
			t.Fatalf("got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("write did not time out")
	}
}

// TestHostileConnectionFlood opens many connections at once, some idle,
// some sending garbage, some half a message; the server survives and a
// fresh connection is served once they are gone.
func TestHostileConnectionFlood(t *testing.T) {
	srv := &Server{Handler: rulesMux(), Logger: quietLogger, MaxConns: 100}
	addr := hostileServer(t, srv, FramingAuto)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	for i := range 300 {
		wg.Go(func() {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				return // refused under the flood is fine
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			nc.SetDeadline(time.Now().Add(5 * time.Second))
			switch i % 4 {
			case 0:
				io.WriteString(nc, "\xff garbage\n")
			case 1:
				io.WriteString(nc, `{"jsonrpc":"2.0","meth`)
			case 2:
				io.WriteString(nc, "Content-Length: 100\r\n\r\n{")
			}
		})
	}
	wg.Wait()
	for _, nc := range conns {
		nc.Close()
	}
	// Every flood connection is released: a fresh one is served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := len(srv.life.Conns())
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still tracked after the flood closed", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A connection counts against MaxConns until its handlers have
	// returned, a moment after it is untracked: retry while refused.
	for {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(nc, okReq+"\n")
		line, err := bufio.NewReader(nc).ReadBytes('\n')
		nc.Close()
		if err == nil {
			checkWant(t, bytes.TrimSpace(line), ok(`"ok"`, `["ok"]`))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a fresh connection is not served: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerShutdownAnswersEveryRequest: requests running on several TCP
// connections when Shutdown starts are all answered, later connections are
// refused, and Shutdown returns once everything is answered.
func TestServerShutdownAnswersEveryRequest(t *testing.T) {
	bl := newBlocker()
	mux := rulesMux()
	bl.register(mux)
	srv := &Server{Handler: mux, Logger: quietLogger}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l, ListenFraming(FramingLine)) }()
	const n = 5
	var clients []*client
	for i := range n {
		c := dialRaw(t, l.Addr().String())
		c.write(req("block", "", strconv.Itoa(i)) + "\n")
		clients = append(clients, c)
	}
	waitStarted(t, bl, n)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	// The listener stops accepting.
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			break
		}
		nc.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting after Shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned before the requests were answered: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(bl.release)
	for i, c := range clients {
		checkWant(t, c.line(), ok(strconv.Itoa(i), `"released"`))
		c.expectClosed()
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
}

// TestHostileHalfClose: a client that sends its requests and half-closes
// its side still gets every answer, then the server closes.
func TestHostileHalfClose(t *testing.T) {
	for _, f := range []Framing{FramingLine, FramingHeader} {
		t.Run(f.String(), func(t *testing.T) {
			mux := rulesMux()
			Register(mux, "slow", func(ctx context.Context, ms int) (int, error) {
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return ms, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			})
			addr := hostileServer(t, &Server{Handler: mux, Logger: quietLogger}, f)
			c := dialRaw(t, addr)
			for i := range 3 {
				r := req("slow", "["+strconv.Itoa(20+10*i)+"]", strconv.Itoa(i))
				if f == FramingHeader {
					c.write(lspFrame(r))
				} else {
					c.write(r + "\n")
				}
			}
			if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for range 3 {
				var b []byte
				if f == FramingHeader {
					b = c.frame()
				} else {
					b = c.line()
				}
				r := checkInvariants(t, b)
				if r.Error != nil {
					t.Fatalf("error reply %s", b)
				}
				seen[string(r.ID)] = true
			}
			if len(seen) != 3 {
				t.Fatalf("answers: %v", seen)
			}
			c.expectClosed()
		})
	}
}

// TestLineAtLimitWithCRLF: a line of exactly MaxMessageSize bytes ended by
// "\r\n" is accepted however the bytes arrive (before the fix it was
// rejected as too large when "\r" and "\n" came in different reads).
func TestLineAtLimitWithCRLF(t *testing.T) {
	const limit = 64
	body := `{"jsonrpc":"2.0","method":"echo","id":1,"params":["` + strings.Repeat("x", limit-54) + `"]}`
	if len(body) != limit {
		t.Fatalf("body is %d bytes", len(body))
	}
	in := []byte(body + "\r\n" + body + "\n")
	for _, sizes := range [][]byte{{byte(len(in) - 1)}, {limit - 1}, {0}, {limit}, {limit + 1}, {3}} {
		ch := newLimitedStream(&chunkReader{data: bytes.Clone(in), sizes: sizes}, FramingLine, limit)
		for i := range 2 {
			msg, err := ch.Recv()
			if err != nil || string(msg) != body {
				t.Fatalf("chunks %v, message %d: %q, %v", sizes, i, msg, err)
			}
		}
	}
}

// TestServerMaxMessageSizeOnAnyChannel: Server.MaxMessageSize holds even
// when the Channel was built with a larger limit of its own (before the
// fix, NewConn(NewStream(rwc, StreamOptions{}), srv) ignored it).
func TestServerMaxMessageSizeOnAnyChannel(t *testing.T) {
	srv := &Server{Handler: rulesMux(), MaxMessageSize: 100, MaxConcurrency: 1, Logger: quietLogger}
	p := newPipeRT(t, srv)
	big := req("echo", `["`+strings.Repeat("x", 100)+`"]`, "1")
	checkWant(t, p.roundTrip(big), want{id: "null", code: CodeInvalidRequest, msg: "message too large"})
	checkWant(t, p.roundTrip(req("echo", "[1]", "2")), ok("2", "[1]"))
	checkWant(t, dispatchOnce(srv, big), want{id: "null", code: CodeInvalidRequest, msg: "message too large"})
}
