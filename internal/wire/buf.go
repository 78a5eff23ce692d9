package wire

import "sync"

// bufPool holds the buffers messages are encoded into and read from.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// GetBuf returns a buffer of length 0 from the pool.
func GetBuf() *[]byte { return bufPool.Get().(*[]byte) }

// PutBuf gives b (if not nil) back for reuse. Buffers up to 4 MiB are kept: a large
// message then costs no fresh allocation (whose pages the kernel must
// fault in: the 1 MiB echo ran at half the speed); the pool lets them go
// within two garbage collections, so an idle process holds none for long.
func PutBuf(b *[]byte) {
	if b == nil || cap(*b) > 4<<20 {
		return // none, or a huge buffer: let it go rather than pin it
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
