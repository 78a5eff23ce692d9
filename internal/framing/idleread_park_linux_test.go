package framing

import (
	"net"
	"testing"
	"time"
)

// resumer counts StartLoop calls on a channel.
type resumer chan struct{}

func (r resumer) StartLoop() { r <- struct{}{} }

// wantResumed fails unless r is resumed within a second, or, with !want,
// is not within 50ms.
func wantResumed(t *testing.T, r resumer, want bool, what string) {
	t.Helper()
	wait := 50 * time.Millisecond
	if want {
		wait = time.Second
	}
	select {
	case <-r:
		if !want {
			t.Fatalf("%s: resumed", what)
		}
	case <-time.After(wait):
		if want {
			t.Fatalf("%s: not resumed", what)
		}
	}
}

// waiterRunning reports whether the shared waiter's goroutine runs.
func waiterRunning() bool {
	waiter.mu.Lock()
	defer waiter.mu.Unlock()
	return waiter.running
}

// An idle TCP stream's wait goes to the shared waiter, which resumes its
// loop when input comes, on InterruptRecv and on Close; input already there
// is read at once; the waiter's goroutine ends when nothing is parked.
func TestIdleStreamParks(t *testing.T) {
	peer, s := socketStream(t)
	r := make(resumer, 4)

	if !s.WaitInput(r) {
		t.Fatal("an idle stream did not park")
	}
	if !waiterRunning() {
		t.Fatal("nothing waits for the parked stream")
	}
	wantResumed(t, r, false, "no input")
	const a = `{"jsonrpc":"2.0","method":"a"}`
	peer.Write([]byte(a + "\n"))
	wantResumed(t, r, true, "input")
	if s.WaitInput(r) {
		t.Fatal("parked with input waiting")
	}
	if msg, err := s.Recv(); err != nil || string(msg) != a {
		t.Fatalf("Recv after the wait: %q, %v", msg, err)
	}

	s.buf, s.r, s.w = nil, 0, 0 // as the idle refresh leaves it (interruptedRead)
	if !s.WaitInput(r) {
		t.Fatal("an idle stream did not park")
	}
	if !s.InterruptRecv() {
		t.Fatal("InterruptRecv failed")
	}
	wantResumed(t, r, true, "InterruptRecv")
	if s.WaitInput(r) {
		t.Fatal("parked with an interrupt pending")
	}
	if _, err := s.Recv(); err != ErrInterrupted {
		t.Fatalf("Recv after InterruptRecv: %v", err)
	}

	if !s.WaitInput(r) {
		t.Fatal("an idle stream did not park")
	}
	s.Close()
	wantResumed(t, r, true, "Close")
	if s.WaitInput(r) {
		t.Fatal("a closed stream parked")
	}
	if _, err := s.Recv(); err == nil {
		t.Fatal("Recv on a closed stream succeeded")
	}
	for deadline := time.Now().Add(time.Second); waiterRunning(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiter's goroutine runs on with nothing parked")
		}
	}
}

// A parked stream whose peer hangs up is resumed, and reads the end of input.
func TestParkedStreamHangUp(t *testing.T) {
	peer, s := socketStream(t)
	r := make(resumer, 4)
	if !s.WaitInput(r) {
		t.Fatal("an idle stream did not park")
	}
	peer.Close()
	wantResumed(t, r, true, "hang-up")
	s.WaitInput(r)
	if _, err := s.Recv(); err == nil {
		t.Fatal("Recv after the hang-up succeeded")
	}
}

// Input, an interrupt and Close racing for one parked stream resume its
// loop exactly once, for each of 50 streams parked at once.
func TestParkedStreamResumedOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 50
	peers, streams, rs := make([]net.Conn, n), make([]*Stream, n), make([]resumer, n)
	for i := range n {
		if peers[i], err = net.Dial("tcp", l.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer peers[i].Close()
		nc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		streams[i], rs[i] = New(nc, Line, 10<<20, 30*time.Second), make(resumer, 4)
		if !streams[i].WaitInput(rs[i]) {
			t.Fatalf("stream %d did not park", i)
		}
	}
	for i := range n {
		go peers[i].Write([]byte("x"))
		go streams[i].InterruptRecv()
		go streams[i].Close()
	}
	for i := range n {
		wantResumed(t, rs[i], true, "racing wake-ups")
	}
	time.Sleep(50 * time.Millisecond) // a second resume would come by now
	for i := range n {
		if len(rs[i]) != 0 {
			t.Fatalf("stream %d resumed %d more times", i, len(rs[i]))
		}
	}
}
