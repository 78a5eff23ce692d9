package jsonrpc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// callLine sends one line-framed request on nc and returns the reply line.
func callLine(t *testing.T, nc net.Conn, br *bufio.Reader, req string) string {
	t.Helper()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, req+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func TestMaxConnsRefusesThenRecovers(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxConns: 2}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	addr := strings.TrimPrefix(l.URL, "tcp://")
	const req = `{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`
	const want = `{"jsonrpc":"2.0","id":1,"result":[1]}`

	var open []net.Conn
	for range 2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if got := callLine(t, nc, bufio.NewReader(nc), req); got != want {
			t.Fatalf("got %s", got)
		}
		open = append(open, nc)
	}
	// A third connection is closed at once.
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	extra.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(extra, req+"\n")
	if n, err := extra.Read(make([]byte, 10)); err == nil {
		t.Fatalf("over the limit, read %d bytes, want the connection closed", n)
	}
	extra.Close()
	// The others keep working; once one closes, a new one is served.
	if got := callLine(t, open[1], bufio.NewReader(open[1]), req); got != want {
		t.Fatalf("got %s", got)
	}
	open[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(2 * time.Second))
		io.WriteString(nc, req+"\n")
		line, err := bufio.NewReader(nc).ReadString('\n')
		nc.Close()
		if err == nil {
			if strings.TrimSpace(line) != want {
				t.Fatalf("got %s", line)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a slot never freed after a connection closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMaxConnsHTTP503(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "hold", func(ctx context.Context, _ []any) (int, error) {
		entered <- struct{}{}
		<-release
		return 1, nil
	})
	srv := &jsonrpc.Server{Handler: mux, MaxConns: 1}
	l, err := srv.Listen("http://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	post := func() (*http.Response, error) {
		return http.Post(l.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"hold","id":1}`))
	}
	done := make(chan error, 1)
	go func() {
		resp, err := post()
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	resp, err := post()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Served again once the slot is free.
	go func() { <-entered }()
	resp, err = post()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after the limit cleared: status %d", resp.StatusCode)
	}
}

// A WebSocket outlives the HTTP server's ReadTimeout and WriteTimeout, also
// when the handler is mounted on a user's own http.Server.
func TestWebSocketOutlivesHTTPReadTimeout(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.WebSocketHandler(jsonrpc.WebSocketOptions{}), ReadTimeout: 100 * time.Millisecond, WriteTimeout: 100 * time.Millisecond}
	go hs.Serve(nl)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.DialWebSocket(ctx, "ws://"+nl.Addr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(300 * time.Millisecond)
	var got []int
	if err := c.Call(ctx, "echo", []int{1}, &got); err != nil || len(got) != 1 {
		t.Fatalf("after the read timeout: %v %v", got, err)
	}
}
