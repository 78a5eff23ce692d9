package redial

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// An endpoint that cannot be dialled is skipped and probed until it
// answers; InTurn goes round the endpoints; Close closes what is held.
func TestPool(t *testing.T) {
	var upB atomic.Bool
	a, b := newFake(1), newFake(2)
	dials := []func(context.Context) (*fakeConn, error){
		func(context.Context) (*fakeConn, error) { return a, nil },
		func(context.Context) (*fakeConn, error) {
			if !upB.Load() {
				return nil, errors.New("refused")
			}
			return b, nil
		},
	}
	var checks atomic.Int32
	p := NewPool(dials, 5*time.Millisecond, func(context.Context, *fakeConn) error { checks.Add(1); return nil }, (*fakeConn).Close)
	ctx := context.Background()
	reached := func() map[int]bool {
		got := map[int]bool{}
		for ep := range p.InTurn {
			if c, ok := p.Get(ctx, ep); ok {
				got[c.n] = true
			}
		}
		return got
	}
	if got := reached(); !got[1] || got[2] {
		t.Fatalf("with B down, reached %v", got)
	}
	upB.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for !reached()[2] {
		if time.Now().After(deadline) {
			t.Fatal("the probe did not bring B back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if checks.Load() == 0 {
		t.Fatal("B came back without a check")
	}
	// Setting A aside closes its client.
	for ep := range p.InTurn {
		if c, ok := p.Get(ctx, ep); ok && c == a {
			p.SetAside(ep, c)
		}
	}
	deadline = time.Now().Add(10 * time.Second)
	for !a.closed.Load() {
		if time.Now().After(deadline) {
			t.Fatal("a client set aside was not closed")
		}
		time.Sleep(time.Millisecond)
	}
	p.Close()
	if !b.closed.Load() {
		t.Fatal("Close left a client open")
	}
	for ep := range p.InTurn {
		if _, ok := p.Get(ctx, ep); ok {
			t.Fatal("an endpoint was handed out after Close")
		}
	}
}
