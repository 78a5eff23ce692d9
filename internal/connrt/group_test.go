package connrt

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// Stop runs the listeners' closers first, in order, keeps their errors but
// net.ErrClosed, and returns the connections served (not a removed one);
// nothing can be registered once it has begun.
func TestGroupStop(t *testing.T) {
	var g Group[string]
	g.Add("a")
	g.Add("b")
	g.Add("gone")
	g.Remove("gone")
	var order []string
	listenerErr := errors.New("listener failed")
	g.OnShutdown(func(context.Context) error { order = append(order, "listener 1"); return net.ErrClosed })
	g.OnShutdown(func(context.Context) error { order = append(order, "listener 2"); return listenerErr })
	if g.Closing() {
		t.Fatal("Closing before Stop")
	}
	errs, conns := g.Stop(context.Background())
	if len(errs) != 1 || errs[0] != listenerErr {
		t.Fatalf("errors %v; want the listener's, not net.ErrClosed", errs)
	}
	if !slices.Equal(order, []string{"listener 1", "listener 2"}) {
		t.Fatalf("order: %v; want the listeners in order", order)
	}
	if slices.Sort(conns); !slices.Equal(conns, []string{"a", "b"}) {
		t.Fatalf("connections: %v; want a and b (not the removed one)", conns)
	}
	if !g.Closing() {
		t.Fatal("not Closing after Stop")
	}
	if g.OnShutdown(func(context.Context) error { return nil }) {
		t.Fatal("OnShutdown accepted a function after Stop")
	}
	var empty Group[string]
	if errs, conns := empty.Stop(context.Background()); errs != nil || len(conns) != 0 {
		t.Fatalf("Stop of nothing: %v %v", errs, conns)
	}
}

// Wait returns once every request Enter counted has left, however Leave
// and Wait interleave, and at once when none is served; a ctx that ends
// first ends it with ctx's error.
func TestGroupWaitsForRequests(t *testing.T) {
	var g Group[int]
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("Wait with no request: %v", err)
	}
	for range 200 {
		var g Group[int]
		var left atomic.Int64
		for range 8 {
			g.Enter()
		}
		for range 8 {
			go func() { left.Add(1); g.Leave() }()
		}
		if err := g.Wait(context.Background()); err != nil || left.Load() != 8 {
			t.Fatalf("Wait returned (%v) with %d of 8 requests left", err, left.Load())
		}
	}
	g.Enter()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait with a request served: %v", err)
	}
}
