package wire

import (
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// Stable memory: whoever reads messages into memory it will never write
// again nor hand to a pool (internal/framing's large read buffers) says so
// with MarkStable, and the decoder (internal/codec) asks Stable before it
// shares that memory rather than copy from it. Forgetting a buffer costs a
// copy, never correctness.

// AliasMin is the size from which a value is decoded in place when its
// memory is stable: shorter values are copied, so that a few bytes kept
// by a handler do not hold a large message's whole buffer.
const AliasMin = 1 << 10

// stableSpan is one buffer MarkStable was told of: its address range and
// a weak pointer to it, so that a range whose buffer was collected (and
// whose memory may now be some other, reusable, allocation's) is never
// taken for stable.
type stableSpan struct {
	start, end uintptr
	buf        weak.Pointer[byte]
}

// stable remembers the last buffers marked, in a ring (the newest at
// next-1; an older one is forgotten, and its values copied), in place so
// that marking a buffer costs no allocation of its own.
var stable struct {
	mu    sync.Mutex
	spans [64]stableSpan
	next  uint32
	any   atomic.Bool // a buffer was marked: until then Stable answers at once
}

// MarkStable records that buf, which must start at the beginning of its
// allocation, is never written again in any byte a reader was lent nor
// recycled, for as long as it is reachable.
func MarkStable(buf []byte) {
	if cap(buf) == 0 {
		return
	}
	p := unsafe.SliceData(buf)
	start := uintptr(unsafe.Pointer(p))
	w := weak.Make(p)
	stable.mu.Lock()
	stable.spans[stable.next%uint32(len(stable.spans))] = stableSpan{start: start, end: start + uintptr(cap(buf)), buf: w}
	stable.next++
	stable.mu.Unlock()
	stable.any.Store(true)
}

// Stable reports whether b, of AliasMin bytes or more, lies in a buffer
// MarkStable was told of that is still reachable: its bytes never change,
// and strings may alias them.
func Stable(b []byte) bool {
	if len(b) < AliasMin || !stable.any.Load() {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	stable.mu.Lock()
	defer stable.mu.Unlock()
	n := uint32(len(stable.spans))
	for k := range n {
		sp := &stable.spans[(stable.next-1-k)%n]
		if start >= sp.start && end <= sp.end {
			return sp.buf.Value() != nil // live, it holds b: live allocations never overlap
		}
	}
	return false
}
