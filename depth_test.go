package jsonrpc_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// stackHandler records, on each call, the functions of package jsonrpc on
// its caller's stack, innermost first, up to the first function of another
// package (net/http's server, the test, a goroutine's start).
type stackHandler struct {
	mu     sync.Mutex
	frames []string
}

func (h *stackHandler) ServeRPC(context.Context, *jsonrpc.Request) (any, error) {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	var got []string
	for {
		f, more := frames.Next()
		name, ok := strings.CutPrefix(f.Function, "github.com/seedhq/jsonrpc.")
		if !ok || !more {
			break
		}
		got = append(got, name)
	}
	h.mu.Lock()
	h.frames = got
	h.mu.Unlock()
	return 1, nil
}

func (h *stackHandler) last() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.frames
}

// Issue 36: serving is at most three calls deep from the function that has
// the message (the read loop, ServeHTTP, Process) to the handler, on every
// transport, with the timeout and the rest as steps of those calls.
func TestServingDepth(t *testing.T) {
	h := &stackHandler{}
	srv := &jsonrpc.Server{Handler: h}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(t *testing.T, url string) {
		c, err := jsonrpc.Dial(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Call(ctx, "depth", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tcp, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := srv.Listen("ws://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	for _, tc := range []struct {
		name  string
		entry string // the function that has the message
		conn  bool   // or a worker's closure, given the read loop's task
		serve func(t *testing.T)
	}{
		{"HTTP", "(*Server).ServeHTTP", false, func(t *testing.T) { call(t, hs.URL) }},
		{"Process", "(*Server).Process", false, func(t *testing.T) {
			srv.Process(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"depth"}`))
		}},
		{"TCP", "(*Conn).readLoop", true, func(t *testing.T) { call(t, tcp.URL) }},
		{"WebSocket", "(*Conn).readLoop", true, func(t *testing.T) { call(t, ws.URL) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.serve(t)
			got := h.last()
			entry := len(got) > 0 && (got[len(got)-1] == tc.entry || tc.conn && strings.Contains(got[len(got)-1], ".func"))
			if !entry || len(got) > 4 {
				t.Errorf("from %s to the handler: %s; want at most three calls", tc.entry, strings.Join(got, " ← "))
			}
		})
	}
}
