package connrt

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
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
