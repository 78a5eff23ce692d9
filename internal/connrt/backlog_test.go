package connrt

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Within the bound, Wait returns at once.
func TestWaitWithinBound(t *testing.T) {
	var b Backlog
	b.Add(100)
	if !b.Wait(context.Background(), 100) {
		t.Fatal("Wait refused within the bound")
	}
	b.Written(100, 100)
	if b.Bytes() != 0 {
		t.Errorf("Bytes = %d after everything was written", b.Bytes())
	}
}

// Over the bound, Wait waits until enough is written to bring the count
// within the bound, and not before.
func TestWaitUntilWritten(t *testing.T) {
	var b Backlog
	b.Add(300)
	done := make(chan bool)
	go func() { done <- b.Wait(context.Background(), 100) }()
	time.Sleep(20 * time.Millisecond)
	b.Written(150, 100) // 150 left: still over
	select {
	case <-done:
		t.Fatal("Wait returned while the count was over the bound")
	case <-time.After(50 * time.Millisecond):
	}
	b.Written(50, 100) // 100 left: within
	select {
	case ok := <-done:
		if !ok {
			t.Error("Wait reported the context ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return once the count dropped")
	}
	// The gate is made again for the next wait.
	b.Add(200)
	go func() { done <- b.Wait(context.Background(), 100) }()
	time.Sleep(20 * time.Millisecond)
	b.Written(300, 100)
	if ok := <-done; !ok {
		t.Error("second Wait failed")
	}
}

// Wait gives up when its context ends.
func TestWaitContextEnds(t *testing.T) {
	var b Backlog
	b.Add(10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- b.Wait(ctx, 5) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("Wait reported the count dropped")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return when its context ended")
	}
}

// Writers on many goroutines never leave Wait waiting once all is written.
func TestWaitRace(t *testing.T) {
	for range 200 {
		var b Backlog
		const n = 8
		b.Add(n * 10)
		done := make(chan bool)
		go func() { done <- b.Wait(context.Background(), 0) }()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() { b.Written(10, 0) })
		}
		wg.Wait()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Wait missed the last write")
		}
	}
}
