package redial

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConn is a connection that ends when dropped.
type fakeConn struct {
	n      int
	done   chan struct{}
	once   sync.Once
	closed atomic.Bool
}

func newFake(n int) *fakeConn { return &fakeConn{n: n, done: make(chan struct{})} }

func (c *fakeConn) Done() <-chan struct{} { return c.done }
func (c *fakeConn) drop()                 { c.once.Do(func() { close(c.done) }) }
func (c *fakeConn) Close() error          { c.closed.Store(true); c.drop(); return nil }

var errClosed = errors.New("closed")

func options(notify func(error)) Options[*fakeConn] {
	return Options[*fakeConn]{Min: time.Millisecond, Max: 4 * time.Millisecond, Notify: notify,
		Done: (*fakeConn).Done, Cause: func(*fakeConn) error { return errors.New("dropped") }, Close: (*fakeConn).Close, Closed: errClosed}
}

// A dropped connection is replaced, after failed dials, by the next one;
// Notify hears the drop and the return; Acquire skips a connection found
// closed.
func TestRedialReplaces(t *testing.T) {
	var dials atomic.Int32
	next := make(chan *fakeConn, 1)
	dial := func(ctx context.Context) (*fakeConn, error) {
		if dials.Add(1) < 3 {
			return nil, errors.New("refused")
		}
		c := newFake(int(dials.Load()))
		next <- c
		return c, nil
	}
	heard := make(chan error, 4)
	first := newFake(0)
	r := Start(first, dial, options(func(err error) { heard <- err }))
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := r.Acquire(ctx, nil); c != first || err != nil {
		t.Fatalf("Acquire: %v %v", c, err)
	}
	first.drop()
	c, err := r.Acquire(ctx, first)
	if err != nil || c != <-next || c.n != 3 {
		t.Fatalf("Acquire after the drop: %v %v (%d dials)", c, err, dials.Load())
	}
	// Notify hears the return after the connection is handed out (so that
	// a callback may call on it), so wait for it.
	for i, want := range []string{"dropped", ""} {
		select {
		case err := <-heard:
			if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
				t.Fatalf("Notify %d heard %v, want %q", i, err, want)
			}
		case <-ctx.Done():
			t.Fatalf("Notify %d not heard", i)
		}
	}
	select {
	case err := <-heard:
		t.Fatalf("Notify heard more: %v", err)
	default:
	}
}

// Close ends the wait of Acquire and the redialling, and closes the
// connection held.
func TestRedialClose(t *testing.T) {
	first := newFake(0)
	r := Start(first, func(ctx context.Context) (*fakeConn, error) {
		<-ctx.Done() // a dial that hangs until the Redialer closes
		return nil, ctx.Err()
	}, options(nil))
	first.drop()
	got := make(chan error, 1)
	go func() {
		_, err := r.Acquire(context.Background(), first)
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	r.Close()
	if err := <-got; err != errClosed {
		t.Fatalf("Acquire across Close: %v", err)
	}
	if !r.Closed() {
		t.Fatal("Closed is false after Close")
	}
	r.Close() // again: no effect

	held := newFake(1)
	r = Start(held, func(context.Context) (*fakeConn, error) { return newFake(2), nil }, options(nil))
	r.Close()
	if !held.closed.Load() {
		t.Fatal("Close left the connection held open")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := r.Acquire(ctx, nil); err != errClosed {
		t.Fatalf("Acquire after Close: %v", err)
	}
}
