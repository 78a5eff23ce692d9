package connrt

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTokensBound has 16 goroutines take and give tokens under a bound of
// 3 many times: never more than 3 are held at once, and every Take ends.
func TestTokensBound(t *testing.T) {
	var tk Tokens
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 2000 {
				if !tk.Take(context.Background(), 3) {
					t.Error("Take failed with a context that cannot end")
					return
				}
				n := in.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				in.Add(-1)
				tk.Give()
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m > 3 || m < 1 {
		t.Fatalf("at most %d tokens held at once, want 1 to 3", m)
	}
	if tk.held.Load() != 0 {
		t.Fatalf("%d tokens held at the end, want 0", tk.held.Load())
	}
}

// TestTokensWait: with the bound reached, TryTake fails, Take waits until
// a token is given back, and a Take whose context ends reports false.
func TestTokensWait(t *testing.T) {
	var tk Tokens
	if !tk.TryTake(1) || tk.TryTake(1) {
		t.Fatal("TryTake: want the first token and not a second")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if tk.Take(ctx, 1) {
		t.Fatal("Take got a second token")
	}
	got := make(chan bool)
	go func() { got <- tk.Take(context.Background(), 1) }()
	select {
	case <-got:
		t.Fatal("Take returned while the token was held")
	case <-time.After(20 * time.Millisecond):
	}
	tk.Give()
	select {
	case ok := <-got:
		if !ok || tk.held.Load() != 1 {
			t.Fatalf("Take after Give: %v, %d held; want true, 1", ok, tk.held.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Take did not wake after Give")
	}
}
