package jsonrpc

import "time"

func init() { checkOneReader = true } // every Recv of the tests checks that it is the only one

// SetOverlapWindow sets how long overlapping calls keep c's read loop (see
// reading.go).
func SetOverlapWindow(c *Conn, d time.Duration) {
	c.mu.Lock()
	c.rd.window = d
	c.mu.Unlock()
}
