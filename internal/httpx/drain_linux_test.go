package httpx

import (
	"errors"
	"net"
	"testing"
	"time"
)

// Once dropSYN is on a listener, a new connect goes unanswered (its
// client would send the SYN again later), while a connection completed
// before is accepted and carries its bytes both ways.
func TestDropSYNLeavesCompletedConnections(t *testing.T) {
	nl, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	before, err := net.DialTimeout("tcp", nl.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	rc, err := nl.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = attachFilter(fd, dropSYN) }); err != nil || ferr != nil {
		t.Fatal(err, ferr)
	}
	if c, err := net.DialTimeout("tcp", nl.Addr().String(), 300*time.Millisecond); err == nil {
		c.Close()
		t.Fatal("a connect after the filter was completed")
	} else if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Fatalf("a connect after the filter: %v, want a timeout (unanswered, not refused)", err)
	}
	c, err := nl.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	before.SetDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 4)
	if _, err := before.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(b); err != nil || string(b) != "ping" {
		t.Fatalf("server read %q, %v", b, err)
	}
	if _, err := c.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := before.Read(b); err != nil || string(b) != "pong" {
		t.Fatalf("client read %q, %v", b, err)
	}
}
