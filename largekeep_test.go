package jsonrpc

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A large message's strings share its read buffer, which is never reused
// (internal/framing's LargeMessage): a handler that keeps its params (the
// typed ones, or a large message's raw Params) after returning, and a
// client that keeps its results, find them intact while later large and
// small messages are read on both sides, by several callers at once.
func TestLargeMessageParamsKept(t *testing.T) {
	type params struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	var mu sync.Mutex
	var keptTyped []params
	var keptRaw []json.RawMessage
	mux := NewMux()
	Register(mux, "keep", func(_ context.Context, p params) (params, error) {
		mu.Lock()
		keptTyped = append(keptTyped, p)
		mu.Unlock()
		return p, nil
	})
	mux.HandleFunc("keepRaw", func(_ context.Context, req *Request) (any, error) {
		if len(req.Params) < 64<<10 {
			return nil, nil // a small message's Params may share a reused buffer: not kept
		}
		mu.Lock()
		keptRaw = append(keptRaw, req.Params)
		mu.Unlock()
		return nil, nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Handler: mux}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, ListenFraming(FramingLine)) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp://"+l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	sizes := []int{300 << 10, 7, 100 << 10, 20 << 10, 1 << 20, 70 << 10, 3, 200 << 10}
	want := func(g, i int) params {
		n := sizes[(g+i)%len(sizes)]
		return params{A: g*1000 + i, B: strings.Repeat(string(rune('a'+(g*7+i)%26)), n)}
	}
	const callers, calls = 4, 12
	results := make([][]params, callers)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				var out params
				if err := c.Call(ctx, "keep", want(g, i), &out); err != nil {
					errs <- err
					return
				}
				results[g] = append(results[g], out)
				if err := c.Call(ctx, "keepRaw", want(g, i), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for g := range callers {
		for i, got := range results[g] {
			if got != want(g, i) {
				t.Fatalf("caller %d: the result of call %d kept by the client changed (%d bytes, %q…)", g, i, len(got.B), got.B[:min(len(got.B), 8)])
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keptTyped) != callers*calls {
		t.Fatalf("%d typed params kept, want %d", len(keptTyped), callers*calls)
	}
	for _, p := range keptTyped {
		if g, i := p.A/1000, p.A%1000; p != want(g, i) {
			t.Fatalf("params %d kept by the handler changed (%d bytes, %q…)", p.A, len(p.B), p.B[:min(len(p.B), 8)])
		}
	}
	for _, raw := range keptRaw {
		var p params
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("raw params kept by the handler changed: %v", err)
		}
		if g, i := p.A/1000, p.A%1000; p != want(g, i) {
			t.Fatalf("raw params %s kept by the handler changed", strconv.Itoa(p.A))
		}
	}
	if len(keptRaw) == 0 {
		t.Fatal("no large raw params kept")
	}
}
