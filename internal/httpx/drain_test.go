package httpx

import (
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
)

// On Linux, connections the kernel completed before stop are handed out by
// Accept, not reset by a close, and a connect after stop is refused.
func TestDrainListenerServesQueuedConnections(t *testing.T) {
	nl, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl := newDrainListener(nl)
	defer dl.Close()
	var queued []net.Conn
	for range 3 {
		c, err := net.DialTimeout("tcp", nl.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		queued = append(queued, c)
	}
	dl.stop()
	if runtime.GOOS == "linux" {
		if c, err := net.DialTimeout("tcp", nl.Addr().String(), time.Second); err == nil {
			c.Close()
			t.Fatal("a connect after stop was completed")
		}
	} else {
		queued = nil // closed: the kernel reset them
	}
	var accepted []net.Conn
	for {
		c, err := dl.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Accept after the queue: %v, want net.ErrClosed", err)
			}
			break
		}
		defer c.Close()
		accepted = append(accepted, c)
	}
	if len(accepted) != len(queued) {
		t.Fatalf("accepted %d of the %d queued connections", len(accepted), len(queued))
	}
	// Each accepted connection carries its client's bytes.
	for i, c := range queued {
		c.Write([]byte{byte(i)})
	}
	seen := map[byte]bool{}
	for _, c := range accepted {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1)
		if _, err := c.Read(b); err != nil {
			t.Fatal(err)
		}
		seen[b[0]] = true
	}
	if len(seen) != len(queued) {
		t.Fatalf("bytes seen: %v", seen)
	}
	if _, err := net.DialTimeout("tcp", nl.Addr().String(), time.Second); err == nil {
		t.Fatal("the listener still accepts after the drain")
	}
}
