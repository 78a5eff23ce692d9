package pubsub

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// recorder is a Subscriber that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	sent   []string
	ended  []error
	broken error
	fail   error // Send's error
	sentCh chan struct{}
}

func newRecorder() *recorder { return &recorder{sentCh: make(chan struct{}, 100)} }

func (r *recorder) Send(msg []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.sent = append(r.sent, string(msg))
	r.sentCh <- struct{}{}
	return nil
}
func (r *recorder) Ended(err error) { r.ended = append(r.ended, err) } // the outbox's lock is held
func (r *recorder) AppendError(b []byte, err error) []byte {
	return append(b, `{"code":1,"message":"`+err.Error()+`"}`...)
}
func (r *recorder) Broken(err error) { r.mu.Lock(); r.broken = err; r.mu.Unlock() }

// waitSent waits for n messages and returns them.
func (r *recorder) waitSent(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		select {
		case <-r.sentCh:
		case <-time.After(10 * time.Second):
			t.Fatalf("sent %v, want %d messages", r.sent, n)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// Nothing is sent before Ready; DropOldest keeps the newest events and the
// next one sent says how many were dropped.
func TestOutboxDropOldest(t *testing.T) {
	r := newRecorder()
	var o Outbox
	o.Init(2, DropOldest, []byte(`{"p":"s"`), r)
	for _, ev := range []string{"1", "2", "3", "4"} {
		if !o.Push([]byte(ev)) {
			t.Fatal("Push refused an event")
		}
	}
	if len(r.sentCh) != 0 {
		t.Fatal("an event was sent before Ready")
	}
	o.Ready()
	got := r.waitSent(t, 2)
	if got[0] != `{"p":"s","dropped":2,"result":3}}` || got[1] != `{"p":"s","result":4}}` {
		t.Fatalf("sent %q", got)
	}
}

// Close ends the subscription when the buffer is full: the queued events
// go out, then the error; Push refuses from then on.
func TestOutboxClose(t *testing.T) {
	r := newRecorder()
	var o Outbox
	o.Init(1, Close, []byte(`{`), r)
	if !o.Push([]byte("1")) || o.Push([]byte("2")) || o.Push([]byte("3")) {
		t.Fatal("Push: want the first event taken, then refusals")
	}
	o.Ready()
	got := r.waitSent(t, 2)
	if got[0] != `{,"result":1}}` || got[1] != `{,"error":{"code":1,"message":"`+ErrOverflow.Error()+`"}}}` {
		t.Fatalf("sent %q", got)
	}
	if len(r.ended) != 1 || !errors.Is(r.ended[0], ErrOverflow) {
		t.Fatalf("Ended told %v", r.ended)
	}
}

// Block makes Push wait for room, which a send or the end makes; End
// without deliver discards the queue.
func TestOutboxBlock(t *testing.T) {
	r := newRecorder()
	var o Outbox
	o.Init(1, Block, []byte(`{`), r)
	o.Push([]byte("1"))
	pushed := make(chan bool)
	go func() { pushed <- o.Push([]byte("2")) }()
	select {
	case <-pushed:
		t.Fatal("Push did not wait for room")
	case <-time.After(50 * time.Millisecond):
	}
	o.End(nil, false)
	if <-pushed {
		t.Fatal("a Push waiting when the subscription ended was taken")
	}
	o.Ready()
	time.Sleep(20 * time.Millisecond)
	if len(r.sentCh) != 0 {
		t.Fatalf("a discarded queue was sent: %v", r.sent)
	}
}

// A failed Send ends the subscription and reports the connection broken.
func TestOutboxBroken(t *testing.T) {
	r := newRecorder()
	r.fail = errors.New("write failed")
	var o Outbox
	o.Init(4, Block, []byte(`{`), r)
	o.Ready()
	o.Push([]byte("1"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		broken := r.broken
		r.mu.Unlock()
		if broken != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Broken was not called")
		}
		time.Sleep(time.Millisecond)
	}
	if o.Push([]byte("2")) {
		t.Fatal("Push after a failed send was taken")
	}
}
