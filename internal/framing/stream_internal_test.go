package framing

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// A read interrupted at any byte of the input, within a header, a body, a
// line or an oversize line being skipped, loses nothing: the next Recv
// resumes and every message comes out whole.
func TestStreamInterruptAnywhere(t *testing.T) {
	const a, b = `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`
	long := `{"x":"` + strings.Repeat("y", 80) + `"}`
	for _, tc := range []struct {
		name    string
		framing Framing
		input   string
		want    []string // messages, or "!" for a too-large error
	}{
		{"header", Header, "Content-Length: 30\r\nX-Other: 1\r\n\r\n" + a + "\r\nContent-Length: 30\r\n\r\n" + b, []string{a, b}},
		{"line", Line, a + "\r\n\n" + b + "\n", []string{a, b}},
		{"skip", Line, long + "\n" + b + "\n", []string{"!", b}},
	} {
		for cut := 1; cut < len(tc.input); cut++ {
			client, server := net.Pipe()
			s := New(server, tc.framing, 40, 30*time.Second)
			go func() {
				// The pipe's Write returns once the reader took every byte, so
				// the reader needs the rest when its read is cut.
				client.Write([]byte(tc.input[:cut]))
				s.InterruptRecv()
				// Let the cut read return before more bytes can race it.
				for end := time.Now().Add(time.Second); s.interrupted.Load() && time.Now().Before(end); {
					time.Sleep(10 * time.Microsecond)
				}
				client.Write([]byte(tc.input[cut:]))
			}()
			var got []string
			interrupted := false
			for len(got) < len(tc.want) {
				msg, err := s.Recv()
				var fe *Error
				switch {
				case errors.Is(err, ErrInterrupted):
					interrupted = true
				case errors.As(err, &fe) && !fe.Fatal:
					got = append(got, "!")
				case err != nil:
					t.Fatalf("%s, cut at %d: %v", tc.name, cut, err)
				default:
					got = append(got, string(msg))
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s, cut at %d: got %q, want %q", tc.name, cut, got, tc.want)
			}
			if !interrupted {
				t.Errorf("%s, cut at %d: the read was not interrupted", tc.name, cut)
			}
			client.Close()
			server.Close()
		}
	}
}

// gatedRWC is a connection whose writes wait for the test to let each one
// through, recording what was written.
type gatedRWC struct {
	gate    chan struct{}
	mu      sync.Mutex
	written []string
}

func (g *gatedRWC) Read([]byte) (int, error) { select {} }
func (g *gatedRWC) Close() error             { return nil }
func (g *gatedRWC) Write(p []byte) (int, error) {
	<-g.gate
	g.mu.Lock()
	g.written = append(g.written, string(p))
	g.mu.Unlock()
	return len(p), nil
}

// A held message is written even when the sender that takes over from the
// writer finds its own round written: here D writes round 2, which carries
// E's message too, while B's message is held and released meanwhile; E
// must not be taken for the one who writes what is left.
func TestHeldMessageNotLeftBehindByWaiters(t *testing.T) {
	g := &gatedRWC{gate: make(chan struct{})}
	s := New(g, Line, 10<<20, 0)
	state := func(f func() bool) { // waits until f holds, under the stream's lock
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			s.wmu.Lock()
			ok := f()
			s.wmu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the stream did not reach the expected state")
			}
			time.Sleep(time.Millisecond)
		}
	}
	send := func(m string) chan error {
		done := make(chan error, 1)
		go func() { done <- s.Send([]byte(m)) }()
		return done
	}
	w0 := send("w0") // the writer of round 1, held at the gate
	state(func() bool { return s.writing && s.taken == 1 })
	d, e := send("d"), send("e") // both wait for round 2
	state(func() bool { return s.waitMax == 2 && strings.Count(string(s.queue), "\n") == 2 })
	g.gate <- struct{}{} // round 1 written; D or E takes round 2 and waits at the gate
	if err := <-w0; err != nil {
		t.Fatal(err)
	}
	state(func() bool { return s.writing && s.taken == 2 })
	s.Hold()
	if err := <-send("b"); err != nil { // held: queued, not waited for
		t.Fatal(err)
	}
	s.Release()          // a writer is at work: it must write what was held
	g.gate <- struct{}{} // round 2
	select {
	case g.gate <- struct{}{}: // round 3: the held message
	case <-time.After(5 * time.Second):
		t.Fatal("the held message was never written")
	}
	for _, ch := range []chan error{d, e} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	state(func() bool { return !s.writing && len(s.queue) == 0 })
	g.mu.Lock()
	defer g.mu.Unlock()
	if got := strings.Join(g.written, ""); got != "w0\nd\ne\nb\n" && got != "w0\ne\nd\nb\n" {
		t.Errorf("written %q", got)
	}
}
