package jsonrpc

import (
	"context"
	"testing"
	"time"
)

// Deadline is the earlier of the parent's and its own; Value answers the
// peer it carries and asks the parent for everything else.
func TestLazyCtxDeadlineAndValues(t *testing.T) {
	type key struct{}
	soon, later := time.Now().Add(time.Second), time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, "v"), later)
	defer cancel()
	pi := &peerInfo{peer: Peer{Transport: "http"}}
	var c lazyCtx
	c.Init(parent, pi)
	if d, ok := c.Deadline(); !ok || !d.Equal(later) {
		t.Errorf("Deadline = %v %v, want the parent's", d, ok)
	}
	c.When = soon
	if d, ok := c.Deadline(); !ok || !d.Equal(soon) {
		t.Errorf("Deadline = %v %v, want its own", d, ok)
	}
	if p, ok := PeerFromContext(&c); !ok || p.Transport != "http" || c.Value(key{}) != "v" {
		t.Errorf("values: %v %v %v", p, ok, c.Value(key{}))
	}
	c.Cancel(context.Canceled, context.Canceled)
	if p, ok := PeerFromContext(&c); !ok || p.Transport != "http" || c.Value(key{}) != "v" {
		t.Errorf("values once cancelled: %v %v %v", p, ok, c.Value(key{}))
	}
}
