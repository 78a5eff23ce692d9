package jsonrpc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// On Linux an idle TCP connection keeps no goroutine once its read loop has
// been refreshed (its wait goes to the process's epoll waiter): 40
// connections that made a call and idled add fewer than 5 goroutines, each
// still answers its next call, and Shutdown still ends them all.
func TestIdleConnectionsKeepNoGoroutine(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the idle refresh")
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 40
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	call := func(i int, id string) {
		t.Helper()
		io.WriteString(conns[i], `{"jsonrpc":"2.0","method":"echo","params":[`+id+`],"id":`+id+"}\n")
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":[` + id + `]}`
		if got, err := readers[i].ReadString('\n'); err != nil || strings.TrimSpace(got) != want {
			t.Fatalf("connection %d: got %q %v, want %s", i, got, err, want)
		}
	}
	for i := range conns {
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(20 * time.Second))
		conns[i], readers[i] = nc, bufio.NewReader(nc)
		call(i, "1")
	}
	var grew int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if grew = runtime.NumGoroutine() - before; grew < 5 {
			break
		}
	}
	if grew >= 5 {
		t.Fatalf("%d idle connections keep %d goroutines", n, grew)
	}
	for i := range conns {
		call(i, "2")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for i := range conns {
		if _, err := readers[i].ReadString('\n'); err != io.EOF {
			t.Fatalf("connection %d after Shutdown: %v, want EOF", i, err)
		}
	}
}
