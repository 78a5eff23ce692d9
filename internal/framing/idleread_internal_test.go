//go:build unix

package framing

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// A stream on a TCP socket that is interrupted while idle (the idle
// refresh) waits on holding no read buffer (nor write buffers), and reads the next messages
// whole: one sent whole, one cut into pieces, and the hang-up.
func TestIdleStreamHoldsNoBuffer(t *testing.T) {
	peer, s := socketStream(t)
	if s.sock == nil {
		t.Fatal("a TCP stream does not read its socket directly")
	}
	recv := func() chan string {
		got := make(chan string, 1)
		go func() {
			msg, err := s.Recv()
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			got <- string(msg)
		}()
		return got
	}
	const a, b = `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`
	peer.Write([]byte(a + "\n"))
	if got := <-recv(); got != a {
		t.Fatalf("first message %q", got)
	}
	if s.buf == nil {
		t.Fatal("a busy stream let its buffer go")
	}
	for range 2 { // a reply in each of the write queue's two buffers
		if err := s.Send([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.ReadFull(peer, make([]byte, 2*len(b+"\n"))); err != nil {
		t.Fatal(err) // read, so that the hang-up below is an end of input, not a reset
	}
	for range 2 { // interrupted twice while idle
		got := recv()
		time.Sleep(20 * time.Millisecond) // let Recv wait on the socket
		if !s.InterruptRecv() {
			t.Fatal("InterruptRecv failed")
		}
		if msg := <-got; msg != "error: "+ErrInterrupted.Error() {
			t.Fatalf("interrupted Recv: %q", msg)
		}
		if s.buf != nil {
			t.Fatalf("an idle stream holds a %d-byte buffer", len(s.buf))
		}
		if s.queue != nil || s.spare != nil {
			t.Fatalf("an idle stream holds write buffers of %d and %d bytes", cap(s.queue), cap(s.spare))
		}
	}
	got := recv()
	time.Sleep(20 * time.Millisecond)
	peer.Write([]byte(a + "\n" + b[:5]))
	if msg := <-got; msg != a {
		t.Fatalf("after the idle wait: %q", msg)
	}
	got = recv()
	time.Sleep(20 * time.Millisecond)
	peer.Write([]byte(b[5:] + "\n"))
	if msg := <-got; msg != b {
		t.Fatalf("a message in two pieces: %q", msg)
	}
	got = recv()
	peer.Close()
	if msg := <-got; msg != "error: EOF" {
		t.Fatalf("after the hang-up: %q", msg)
	}
	s.Close()
	s.eof = false // as if the peer had not hung up: the read meets the closed socket
	_, err := s.Recv()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// A read error of a socket read directly is what net.Conn.Read reports:
// a *net.OpError wrapping the system error.
func TestIdleStreamReadError(t *testing.T) {
	peer, s := socketStream(t)
	peer.Write([]byte(`{"jsonrpc":"2.0","method":"a"}` + "\n"))
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	peer.(*net.TCPConn).SetLinger(0) // closing sends a reset
	peer.Close()
	_, err := s.Recv()
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Op != "read" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after a reset: %v (%T)", err, err)
	}
}

// socketStream is a line Stream on the accepted side of a loopback TCP
// connection, with the dialled side as its peer; both close when the test
// ends.
func socketStream(t *testing.T) (peer net.Conn, s *Stream) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if peer, err = net.Dial("tcp", l.Addr().String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s = New(nc, Line, 10<<20, 30*time.Second)
	t.Cleanup(func() { s.Close() })
	return peer, s
}
