package framing

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// A large read buffer is reused only once every message lent from it has
// been given back and the stream has moved past it: a message still out
// keeps its bytes, whatever the stream reads next.
func TestGiveBackReusesOnlyWhenAllBack(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	s := New(server, Line, 8<<20, 30*time.Second)
	defer s.Close()
	big := func(c byte) string { return `"` + strings.Repeat(string(c), 20<<10) + `"` }
	go func() {
		// Two large messages read into one buffer, then more of them.
		client.Write([]byte(big('a') + "\n" + big('b') + "\n"))
		for _, c := range []byte("cdefgh") {
			client.Write([]byte(big(c) + "\n"))
		}
	}()
	recv := func() []byte {
		t.Helper()
		m, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := recv(), recv()
	keepA := bytes.Clone(a)
	s.GiveBack(b) // a is still out: the buffer holding both must not be reused
	var kept [][]byte
	for range 6 {
		m := recv()
		kept = append(kept, m)
		if !bytes.Equal(a, keepA) {
			t.Fatal("a message still out was overwritten by a later read")
		}
	}
	// The others, given back once read, are reused: some later message
	// lands in memory a message given back had.
	for _, m := range kept {
		s.GiveBack(m)
	}
	s.GiveBack(a)
	seen := map[*byte]bool{}
	for _, m := range append(kept, a) {
		seen[unsafe.SliceData(m)] = true
	}
	go func() {
		for range 4 {
			client.Write([]byte(big('z') + "\n"))
		}
	}()
	reused := false
	for range 4 {
		m := recv()
		reused = reused || seen[unsafe.SliceData(m)]
		s.GiveBack(m)
	}
	if !reused {
		t.Log("no buffer was reused (the pool may have been emptied by a collection)")
	}
}

// endlessReader is a stream that never sends a newline; it counts what it
// gave.
type endlessReader struct{ n int }

func (r *endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	r.n += len(p)
	return len(p), nil
}
func (r *endlessReader) Write(p []byte) (int, error) { return len(p), nil }
func (r *endlessReader) Close() error                { return nil }

// A reused read buffer larger than the one asked for is used only up to
// the size asked for: a line with no end is cut at the limit, not after a
// read as large as the reused buffer (4 MiB read before a 1 MiB limit
// was reported, when an earlier stream had left a 4 MiB buffer in the
// pool).
func TestReusedBufferKeepsTheLimit(t *testing.T) {
	for range 8 { // one for each size the buffer grows through (those too large for one are dropped)
		big := make([]byte, 4<<20)
		readBufs[1].Put(&big)
	}
	r := &endlessReader{}
	s := New(r, Line, 1<<20, 0)
	if _, err := s.Recv(); err == nil {
		t.Fatal("an endless line was taken")
	}
	if r.n > 1<<20+(64<<10) {
		t.Fatalf("%d bytes read before the line was reported", r.n)
	}
}

// A tracked read buffer's capacity is a multiple of its class's unit, so
// that it serves a next message a few bytes longer than the one it was
// sized for (two streams of one process whose messages differ by a few
// bytes missed the pool every other time and made a fresh buffer).
func TestNewBufRoundsCapacity(t *testing.T) {
	s := New(&endlessReader{}, Line, 8<<20, 0)
	for _, size := range []int{smallReuseMin, 7<<10 + 3, reuseMin - 1, reuseMin, reuseMin + 1, 1<<20 + 77, 3<<20 - 1} {
		b, lb := s.newBuf(size)
		_, unit := bufClass(size)
		if len(b) != size || cap(b)%unit != 0 || lb == nil {
			t.Errorf("newBuf(%d): len %d, cap %d (a multiple of %d wanted), record %v", size, len(b), cap(b), unit, lb != nil)
		}
	}
	if b, lb := s.newBuf(smallReuseMin - 1); lb != nil || cap(b) != smallReuseMin-1 {
		t.Errorf("newBuf(%d): cap %d, record %v; want an untracked buffer of that size", smallReuseMin-1, cap(b), lb != nil)
	}
}
