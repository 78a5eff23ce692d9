package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// listenWS serves srv on a ws:// URL with Server.Listen until the end of the test.
func listenWS(t *testing.T, srv *jsonrpc.Server) string {
	t.Helper()
	l, err := srv.Listen("ws://127.0.0.1:0/ws")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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

// rawWS opens a WebSocket with the library itself (no jsonrpc code on the
// client side).
func rawWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wc, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wc.CloseNow() })
	return wc
}

// wsRoundTrip sends each request in a text frame followed by a sentinel
// call, and collects the frames up to the sentinel's reply.
func wsRoundTrip(wc *websocket.Conn) roundTrip {
	return func(t *testing.T, request string) []byte {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, m := range []string{request, sentinel} {
			if err := wc.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		var replies [][]byte
		for {
			typ, data, err := wc.Read(ctx)
			if err != nil {
				t.Fatalf("read: %v (got %q)", err, replies)
			}
			if typ != websocket.MessageText {
				t.Fatalf("frame of type %v", typ)
			}
			if bytes.Contains(data, []byte(`"sentinel-id"`)) {
				break
			}
			replies = append(replies, data)
		}
		switch len(replies) {
		case 0:
			return nil
		case 1:
			return replies[0]
		}
		t.Fatalf("more than one reply: %q", replies)
		return nil
	}
}

func TestConformanceWebSocket(t *testing.T) {
	url := listenWS(t, newDemoServer())
	checkVectors(t, wsRoundTrip(rawWS(t, url)))
}

func TestWebSocketClient(t *testing.T) {
	noLeaks(t)
	url := listenWS(t, &jsonrpc.Server{Handler: demo.Shared{}.NewMux()})
	ctx := context.Background()
	cl, err := jsonrpc.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, ok := cl.(*jsonrpc.Conn); !ok {
		t.Fatalf("Dial(ws) returned %T", cl)
	}
	var diff float64
	if err := cl.Call(ctx, "subtract", map[string]int{"minuend": 42, "subtrahend": 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("subtract: %v %v", diff, err)
	}
	if err := cl.Call(ctx, "nope", nil, nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("nope: %v", err)
	}
	if err := cl.Notify(ctx, "update", []int{1}); err != nil {
		t.Fatal(err)
	}
	var b jsonrpc.Batch
	var sum float64
	c1 := b.Call("sum", []int{1, 2}, &sum)
	b.Notify("update", nil)
	c2 := b.Call("nope", nil, nil)
	if err := cl.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || sum != 3 || !errors.Is(c2.Err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("batch: %v %v %v", c1.Err, sum, c2.Err)
	}

	// Send is safe for concurrent use: many calls at once on one socket.
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			var got []int
			if err := cl.Call(ctx, "echo", []int{i}, &got); err != nil || len(got) != 1 || got[0] != i {
				errc <- errors.Join(err, errors.New("wrong echo"))
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

func TestWebSocketBidirectional(t *testing.T) {
	noLeaks(t)
	// The server's handler asks the client for its name during a request
	// and uses the answer; it also notifies the client.
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "greet", func(ctx context.Context, _ struct{}) (string, error) {
		conn := jsonrpc.ConnFromContext(ctx)
		if err := conn.Notify(ctx, "client.progress", map[string]int{"step": 1}); err != nil {
			return "", err
		}
		var name string
		if err := conn.Call(ctx, "client.name", nil, &name); err != nil {
			return "", err
		}
		return "hello, " + name, nil
	})
	url := listenWS(t, &jsonrpc.Server{Handler: mux, MaxConcurrency: 1})

	progress := make(chan int, 1)
	clientMux := jsonrpc.NewMux()
	jsonrpc.Register(clientMux, "client.name", func(ctx context.Context, _ struct{}) (string, error) {
		return "ada", nil
	})
	jsonrpc.Register(clientMux, "client.progress", func(ctx context.Context, p struct {
		Step int `json:"step"`
	}) (any, error) {
		select {
		case progress <- p.Step:
		default: // one is enough
		}
		return nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := jsonrpc.DialWebSocket(ctx, url, jsonrpc.WithHandler(clientMux))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Several at once, with MaxConcurrency 1 on the server: callbacks must
	// not deadlock the connection.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var got string
			if err := conn.Call(ctx, "greet", nil, &got); err != nil || got != "hello, ada" {
				t.Errorf("greet: %q %v", got, err)
			}
		})
	}
	wg.Wait()
	select {
	case step := <-progress:
		if step != 1 {
			t.Fatalf("progress %d", step)
		}
	case <-ctx.Done():
		t.Fatal("the server's notification did not arrive")
	}
}

func TestWebSocketBinaryFrameClosed(t *testing.T) {
	url := listenWS(t, newDemoServer())
	wc := rawWS(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.Write(ctx, websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","method":"echo","id":1}`)); err != nil {
		t.Fatal(err)
	}
	_, _, err := wc.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusUnsupportedData || !strings.Contains(ce.Reason, "text frames") {
		t.Fatalf("want close 1003 with a reason, got %v", err)
	}
}

func TestWebSocketReadLimit(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxMessageSize: 1024}
	url := listenWS(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// At the limit: served.
	wc := rawWS(t, url)
	msg := `{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`
	msg += strings.Repeat(" ", 1024-len(msg))
	if err := wc.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := wc.Read(ctx); err != nil || string(data) != `{"jsonrpc":"2.0","id":1,"result":[1]}` {
		t.Fatalf("%s %v", data, err)
	}
	// Over it: closed with 1009.
	if err := wc.Write(ctx, websocket.MessageText, []byte(msg+" ")); err != nil {
		t.Fatal(err)
	}
	_, _, err := wc.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v (%v), want 1009", got, err)
	}
}

func TestWebSocketPingDetectsDeadPeer(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	defer srv.Shutdown(context.Background())
	ts := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{PingInterval: 50 * time.Millisecond, PingTimeout: 100 * time.Millisecond}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A client that does not read does not answer pings: a dead peer.
	wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.CloseNow()
	time.Sleep(500 * time.Millisecond) // its first ping goes unanswered
	// Now reading shows that the server dropped the socket.
	if _, _, err := wc.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("the server kept a dead peer (read: %v)", err)
	}

	// A live client (the reader answers pings) stays connected through
	// several ping rounds. Its pongs get a generous timeout: on a loaded
	// machine one can take longer than 100ms to come back.
	live := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{PingInterval: 50 * time.Millisecond, PingTimeout: 5 * time.Second}))
	defer live.Close()
	conn, err := jsonrpc.DialWebSocket(ctx, "ws"+strings.TrimPrefix(live.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(400 * time.Millisecond) // several ping rounds
	var n float64
	if err := conn.Call(ctx, "sum", []int{2, 3}, &n); err != nil || n != 5 {
		t.Fatalf("a live peer was dropped: %v %v", n, err)
	}
}

// The client's pings (WithPing) find a server that stopped reading, and
// keep a live one.
func TestWebSocketClientPing(t *testing.T) {
	noLeaks(t)
	// A server that accepts and never reads answers no ping.
	stuck := make(chan struct{})
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wc, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		<-stuck
		wc.CloseNow()
	}))
	defer dead.Close()
	defer close(stuck)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := jsonrpc.DialWebSocket(ctx, "ws"+strings.TrimPrefix(dead.URL, "http"), jsonrpc.WithPing(30*time.Millisecond, 60*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-conn.Done():
		if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "ping") {
			t.Fatalf("ended with %v, want a ping error", err)
		}
	case <-ctx.Done():
		t.Fatal("the client kept a server that answers no ping")
	}

	// Our server reads, so it answers: the client stays connected.
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	defer srv.Shutdown(context.Background())
	live := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer live.Close()
	c, err := jsonrpc.Dial(ctx, "ws"+strings.TrimPrefix(live.URL, "http"), jsonrpc.WithPing(30*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(200 * time.Millisecond) // several ping rounds
	var n float64
	if err := c.Call(ctx, "sum", []int{2, 3}, &n); err != nil || n != 5 {
		t.Fatalf("a live server was dropped: %v %v", n, err)
	}
}

func TestWebSocketHandshake(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	var gotAuth string
	var mu sync.Mutex
	wrap := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			gotAuth = r.Header.Get("Authorization")
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	ts := httptest.NewServer(wrap(srv.WebSocketHandler(jsonrpc.WebSocketOptions{})))
	defer ts.Close()
	url := "ws" + strings.TrimPrefix(ts.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Headers go in the handshake.
	conn, err := jsonrpc.DialWebSocket(ctx, url, jsonrpc.WithHeader("Authorization", "Bearer t0k"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	mu.Lock()
	if gotAuth != "Bearer t0k" {
		t.Fatalf("Authorization %q", gotAuth)
	}
	mu.Unlock()

	// A cross-origin browser is refused by default...
	_, err = jsonrpc.DialWebSocket(ctx, url, jsonrpc.WithHeader("Origin", "https://evil.example"))
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin: %v", err)
	}
	// ...unless its origin is allowed.
	srv2 := &jsonrpc.Server{Handler: srv.Handler, AllowedOrigins: []string{"app.example"}}
	ts2 := httptest.NewServer(srv2.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer ts2.Close()
	conn, err = jsonrpc.DialWebSocket(ctx, "ws"+strings.TrimPrefix(ts2.URL, "http"), jsonrpc.WithHeader("Origin", "https://app.example"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()

	// A plain HTTP request to the WebSocket endpoint is refused.
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"echo","id":1}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 4 {
		t.Fatalf("plain POST: status %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestWebSocketShutdown(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	l, err := srv.Listen("ws://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := jsonrpc.DialWebSocket(ctx, l.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A call in flight when Shutdown starts is answered, then the socket closes.
	var got int64
	errc := make(chan error, 1)
	go func() { errc <- conn.Call(ctx, "sleep", map[string]int{"ms": 200}, &got) }()
	time.Sleep(50 * time.Millisecond)
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil || got != 200 {
		t.Fatalf("in-flight call: %v %v", got, err)
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the client's connection did not end")
	}
	if err := conn.Err(); err != io.EOF {
		t.Fatalf("client Err %v, want io.EOF (normal closure)", err)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestWebSocketTLS(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	ts := httptest.NewUnstartedServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	ts.StartTLS()
	defer ts.Close()
	url := "wss" + strings.TrimPrefix(ts.URL, "https")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := jsonrpc.DialWebSocket(ctx, url); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	cl, err := jsonrpc.Dial(ctx, url, jsonrpc.WithTLSConfig(&tls.Config{RootCAs: pool}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var n float64
	if err := cl.Call(ctx, "sum", []int{1, 2}, &n); err != nil || n != 3 {
		t.Fatalf("%v %v", n, err)
	}
}

// A client may send its first frames in the same write as its handshake:
// the server reads them after the upgrade, and a message larger than the
// socket's buffers goes through whole, both ways.
func TestWebSocketFramesSentWithTheHandshake(t *testing.T) {
	for _, size := range []int{0, 64} { // the default buffers, and tiny ones
		t.Run(strconv.Itoa(size), func(t *testing.T) { testFramesWithHandshake(t, size) })
	}
}

func testFramesWithHandshake(t *testing.T, bufferSize int) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	defer srv.Shutdown(context.Background())
	ts := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{BufferSize: bufferSize}))
	defer ts.Close()
	nc, err := net.DialTimeout("tcp", ts.Listener.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	frame := func(payload string) []byte { // a masked text frame
		key := []byte{1, 2, 3, 4}
		b := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(b[2:], uint64(len(payload)))
		b = append(b, key...)
		for i := range len(payload) {
			b = append(b, payload[i]^key[i%4])
		}
		return b
	}
	big := strings.Repeat("x", 5000)
	msg := "GET / HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	wire := append([]byte(msg), frame(`{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}`)...)
	wire = append(wire, frame(`{"jsonrpc":"2.0","id":2,"method":"echo","params":["`+big+`"]}`)...)
	if _, err := nc.Write(wire); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	read := func() string {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			t.Fatal(err)
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			io.ReadFull(br, l[:])
			n = uint64(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			io.ReadFull(br, l[:])
			n = binary.BigEndian.Uint64(l[:])
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	got := []string{read(), read()}
	slices.Sort(got)
	want := []string{`{"jsonrpc":"2.0","id":1,"result":19}`, `{"jsonrpc":"2.0","id":2,"result":["` + big + `"]}`}
	if got[0] != want[0] || got[1] != want[1] {
		t.Errorf("replies %.80q, want %.80q", got, want)
	}
}

// A client that offers subprotocols gets one the server lists, in the
// server's order of preference, or none; a browser would fail a handshake
// that selects none of those it offered.
func TestWebSocketSubprotocols(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	for _, tc := range []struct {
		listed []string
		offer  []string
		want   string
	}{
		{nil, []string{"mcp"}, "mcp"},
		{nil, []string{"graphql-ws", "jsonrpc-2.0", "jsonrpc"}, "jsonrpc"},
		{nil, []string{"graphql-ws"}, ""},
		{nil, nil, ""},
		{[]string{}, []string{"mcp"}, ""},
		{[]string{"x-custom"}, []string{"mcp", "x-custom"}, "x-custom"},
	} {
		ts := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{Subprotocols: tc.listed}))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), &websocket.DialOptions{Subprotocols: tc.offer})
		if err != nil {
			t.Fatalf("listed %q, offer %q: %v", tc.listed, tc.offer, err)
		}
		if got := wc.Subprotocol(); got != tc.want {
			t.Errorf("listed %q, offer %q: selected %q, want %q", tc.listed, tc.offer, got, tc.want)
		}
		// The socket serves JSON-RPC whatever was selected.
		if err := wc.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"echo","params":[1],"id":7}`)); err != nil {
			t.Fatal(err)
		}
		if _, got, err := wc.Read(ctx); err != nil || string(got) != `{"jsonrpc":"2.0","id":7,"result":[1]}` {
			t.Errorf("reply %s, %v", got, err)
		}
		wc.Close(websocket.StatusNormalClosure, "")
		cancel()
		ts.Close()
	}
}
