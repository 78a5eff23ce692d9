package netx

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// timeoutErr is a temporary Accept failure.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "accept timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// scripted is a listener whose Accept returns its script in turn, then
// fails with end.
type scripted struct {
	script []any // net.Conn or error
	end    error
}

func (l *scripted) Accept() (net.Conn, error) {
	if len(l.script) == 0 {
		return nil, l.end
	}
	x := l.script[0]
	l.script = l.script[1:]
	if err, ok := x.(error); ok {
		return nil, err
	}
	return x.(net.Conn), nil
}
func (l *scripted) Close() error   { return nil }
func (l *scripted) Addr() net.Addr { return &net.TCPAddr{} }

func TestAcceptorLimitAndRetry(t *testing.T) {
	var conns []net.Conn
	for range 4 {
		a, b := net.Pipe()
		defer b.Close()
		conns = append(conns, a)
	}
	boom := errors.New("boom")
	l := &scripted{script: []any{conns[0], timeoutErr{}, conns[1], conns[2], conns[3]}, end: boom}
	var served, refused []net.Conn
	var dones []func()
	a := Acceptor{Limit: 2, Closing: func() bool { return false },
		Serve: func(nc net.Conn, done func()) {
			served = append(served, nc)
			dones = append(dones, done)
			if len(served) == 2 {
				done() // the second ends at once: the third fits again
			}
		},
		Refused: func(nc net.Conn) { refused = append(refused, nc) }}
	if err := a.Run(l); err != boom {
		t.Fatalf("Run = %v, want the listener's error", err)
	}
	if len(served) != 3 || served[2] != conns[2] {
		t.Fatalf("served %d connections, want the first three", len(served))
	}
	if len(refused) != 1 || refused[0] != conns[3] {
		t.Fatalf("refused %v, want the fourth connection", refused)
	}
	if _, err := conns[3].Write([]byte("x")); err == nil {
		t.Error("the refused connection is still open")
	}
}

func TestAcceptorClosing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var closing atomic.Bool
	var wg sync.WaitGroup
	a := Acceptor{Limit: 10, Closing: closing.Load,
		Serve: func(nc net.Conn, done func()) { nc.Close(); done() }}
	wg.Go(func() {
		if err := a.Run(l); err != ErrClosed {
			t.Errorf("Run after shutdown = %v, want ErrClosed", err)
		}
	})
	c, err := net.DialTimeout("tcp", l.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	closing.Store(true)
	l.Close()
	wg.Wait()
}
