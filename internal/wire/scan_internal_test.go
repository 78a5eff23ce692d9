package wire

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func plainByte(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

// The eight-bytes-at-a-time check agrees with the byte-by-byte one: every
// byte value at every position, then random words (borrows between bytes).
func TestPlainASCII8(t *testing.T) {
	check := func(b []byte) {
		want := true
		for _, c := range b {
			want = want && plainByte(c)
		}
		if got := plainASCII8(binary.LittleEndian.Uint64(b)); got != want {
			t.Fatalf("%q: got %v want %v", b, got, want)
		}
	}
	for c := range 256 {
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '#', '\\', ']', 0x7f, 0x80, 0xff, 'a'}
	for range 200000 {
		var b [8]byte
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		check(b[:])
	}
}

func BenchmarkScanLongString(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","params":{"s":"` + string(make([]byte, 0)) + strings.Repeat("x", 1<<20) + `"},"id":1}`)
	b.SetBytes(int64(len(msg)))
	var s Scanner
	var m Message
	for b.Loop() {
		if err := s.Parse(msg, 128, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// A batch of 100 small requests: short strings, where the long-string
// fast path must cost nothing.
func BenchmarkScanBatch(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"jsonrpc":"2.0","method":"echo","params":{"a":%d,"b":"hello"},"id":%d}`, i, i)
	}
	sb.WriteByte(']')
	msg := []byte(sb.String())
	b.SetBytes(int64(len(msg)))
	var s Scanner
	var m Message
	for b.Loop() {
		if err := s.Parse(msg, 128, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// The word-at-a-time loops stop at the first byte that needs a look, at
// any offset within or across their 32- and 8-byte steps.
func TestScanStringStopsAtEveryOffset(t *testing.T) {
	for p := 0; p < 80; p++ {
		for _, tc := range []struct {
			special string
			ok      bool
			End     int // where the scan ends: the closing quote's next byte
		}{
			{`"`, true, 1 + p + 1},
			{`\n`, true, 1 + p + 2 + 10 + 1},
			{"\u00e9", true, 1 + p + 2 + 10 + 1},
			{"\x1f", false, 0},
			{"\xff", false, 0},
		} {
			in := `"` + strings.Repeat("a", p) + tc.special + strings.Repeat("b", 10) + `"`
			var s Scanner
			s.Reset([]byte(in), 10)
			_, ok := s.str()
			if ok != tc.ok || ok && s.Pos != tc.End {
				t.Fatalf("%q at %d: ok %v, end %d; want %v, %d", tc.special, p, ok, s.Pos, tc.ok, tc.End)
			}
		}
	}
}

// A long string (plainUpTo's path) ends where the general loop ends it,
// whichever special byte comes at whichever offset, or is refused alike.
func TestScanLongStringStopsAtEveryOffset(t *testing.T) {
	for p := 0; p < 300; p++ {
		for _, tc := range []struct {
			special string
			ok      bool
			escaped bool
		}{
			{`"`, true, false},
			{`\n`, true, true},
			{`\"`, true, true},
			{"\u00e9", true, false},
			{"\x7f", true, false},
			{"\x1f", false, false},
			{"\xff", false, false},
			{"\xed\xa0\x80", false, false}, // a surrogate in UTF-8
		} {
			in := `"` + strings.Repeat("a", p) + tc.special + strings.Repeat("b", 100) + `"` + strings.Repeat(" ", 70)
			end := len(in) - 70
			if tc.special == `"` {
				end = 1 + p + 1
			}
			var s Scanner
			s.Reset([]byte(in), 10)
			escaped, ok := s.str()
			if ok != tc.ok || ok && (s.Pos != end || escaped != tc.escaped) {
				t.Fatalf("%q at %d: ok %v, end %d, escaped %v; want %v, %d, %v", tc.special, p, ok, s.Pos, escaped, tc.ok, end, tc.escaped)
			}
		}
	}
}
