package framing

import (
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Reusing read buffers (see the package doc): a buffer of smallReuseMin and
// up whose messages have all come back (GiveBack), and that the stream has
// moved past, goes to a pool for the next message of its size (a fresh one
// cost a 1 MiB echo a sixth of its time in zeroed pages). The invariant the
// decoder relies on: a stable buffer is never put in a pool, and the stream
// never writes again into bytes it lent.

// reuseMin is the size of a large read buffer; smallReuseMin the size
// from which read buffers are tracked and reused, each class in a pool of
// its own.
const reuseMin, smallReuseMin = 64 << 10, 4 << 10

// LargeMessage is the size from which a message makes its read buffer
// stable: never recycled, its strings decoded in place.
const LargeMessage = reuseMin

// maxLive bounds the buffers tracked at once; past it the oldest is
// forgotten (never reused).
const maxLive = 4

// lentBuf is a large read buffer and the count of its users: the messages
// lent from it and not given back, plus one while the stream reads into it.
type lentBuf struct {
	buf    []byte
	users  atomic.Int32
	stable atomic.Bool // a large message was lent from it: never recycled
}

var readBufs [2]sync.Pool // *[]byte: from smallReuseMin to reuseMin, and from reuseMin up

// bufClass returns the pool of buffers of size bytes and the unit their
// capacity is rounded up to.
func bufClass(size int) (*sync.Pool, int) {
	if size < reuseMin {
		return &readBufs[0], smallReuseMin
	}
	return &readBufs[1], reuseMin
}

// newBuf returns a read buffer of size bytes, from the pool when large,
// with its record (nil when small), which becomes s.cur once the stream
// moves to it.
func (s *Stream) newBuf(size int) ([]byte, *lentBuf) {
	if size < smallReuseMin {
		return make([]byte, size), nil
	}
	var b []byte
	pool, unit := bufClass(size)
	if p, _ := pool.Get().(*[]byte); p != nil && cap(*p) >= size && cap(*p) <= 4*size {
		b = (*p)[:size] // not its whole capacity: one read must not pass the size asked for (a line over the limit is cut there)
	} else { // rounded up, to serve a message a few bytes longer next time
		b = uninitialized((size + unit - 1) / unit * unit)[:size]
	}
	lb := &lentBuf{buf: b}
	lb.users.Store(1) // the stream's own use
	s.rmu.Lock()
	if len(s.live) == maxLive {
		s.live = append(s.live[:0], s.live[1:]...) // the oldest is forgotten
	}
	s.live = append(s.live, lb)
	s.rmu.Unlock()
	return b, lb
}

// uninitialized returns n bytes of memory that was not zeroed (as
// strings.Builder allocates): the stream lends only bytes it has read into
// a buffer, and zeroing was a tenth of the CPU of a 1 MiB echo.
func uninitialized(n int) []byte {
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	s := sb.String() // its first byte, in memory of at least n bytes
	return unsafe.Slice(unsafe.StringData(s), n)
}

// leave ends the stream's use of its buffer (it moves to another one, or none).
func (s *Stream) leave() {
	if s.cur != nil {
		s.drop(s.cur)
		s.cur = nil
	}
}

// drop ends one use of lb; the last returns its buffer to the pool,
// unless it is stable.
func (s *Stream) drop(lb *lentBuf) {
	if lb.users.Add(-1) != 0 {
		return
	}
	s.forget(lb)
	if lb.stable.Load() {
		return
	}
	b := lb.buf
	pool, _ := bufClass(cap(b))
	pool.Put(&b)
}

// forget stops tracking lb's users.
func (s *Stream) forget(lb *lentBuf) {
	s.rmu.Lock()
	for i, l := range s.live {
		if l == lb {
			s.live = append(s.live[:i], s.live[i+1:]...)
			break
		}
	}
	s.rmu.Unlock()
}

// stabilize makes the current buffer stable, as a large message is lent
// from it (see LargeMessage): never recycled, its users no longer counted.
func (s *Stream) stabilize() {
	if s.cur.stable.Swap(true) {
		return
	}
	wire.MarkStable(s.cur.buf)
	s.forget(s.cur)
}

// GiveBack tells the stream that the caller is done with msg, a message
// Recv returned: nothing reads or keeps any part of it any more. Each
// message may be given back at most once; one never given back costs
// nothing but the reuse of its buffer. It may be called from any
// goroutine.
func (s *Stream) GiveBack(msg []byte) {
	if cap(msg) == 0 {
		return
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(msg)))
	s.rmu.Lock()
	var found *lentBuf
	for _, l := range s.live {
		if start := uintptr(unsafe.Pointer(unsafe.SliceData(l.buf))); at >= start && at < start+uintptr(cap(l.buf)) {
			found = l
			break
		}
	}
	s.rmu.Unlock()
	if found != nil {
		s.drop(found)
	}
}
