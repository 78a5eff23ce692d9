package jsonrpc

import "time"

// SetOverlapWindow sets how long overlapping calls keep a connection's
// read loop (see reading.go) and returns a function that restores it.
func SetOverlapWindow(d time.Duration) (restore func()) {
	old := overlapWindow.Swap(int64(d))
	return func() { overlapWindow.Store(old) }
}
