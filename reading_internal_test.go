package jsonrpc

import (
	"net"
	"strings"
	"testing"
	"time"
)

// The tests run with checkOneReader set (export_test.go): a second goroutine
// calling Recv while another reads panics. This test shows that the check
// trips, so that every other test of the package also checks the rule.
func TestSecondReaderIsCaught(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	c := NewConn(NewStream(b, StreamOptions{}), nil)
	defer c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.rd.inRecv.Load() == 0 { // the read loop is in Recv
		if time.Now().After(deadline) {
			t.Fatal("the read loop never read")
		}
		time.Sleep(time.Millisecond)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "two goroutines read") {
			t.Fatalf("a second reader was not caught (recovered %v)", r)
		}
		c.rd.inRecv.Add(-1) // undo the count of the caught Recv
	}()
	c.rd.recv()
}
