package wire

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Span is a half-open byte range [start, end) of the message; end == 0 means absent.
type Span struct{ Start, End int }

func (s Span) Present() bool         { return s.End > 0 }
func (s Span) Of(data []byte) []byte { return data[s.Start:s.End] }

// scanError is a syntax error: the text is not valid JSON.
type scanError struct {
	off int
	msg string
}

func (e *scanError) Error() string { return "offset " + strconv.Itoa(e.off) + ": " + e.msg }

// DepthError means the text nests deeper than the configured limit.
type DepthError struct{ Limit int }

func (e *DepthError) Error() string {
	return "JSON nesting depth exceeds the limit of " + strconv.Itoa(e.Limit)
}

// Name is an object member name seen by the scanner, kept to detect duplicates.
type Name struct {
	Span
	escaped bool
}

// Cursor is a position in JSON text, shared by the scanner and the
// decoder of the compiled codec (codec.go).
type Cursor struct {
	Data []byte
	Pos  int
}

// Scanner validates JSON text. It is reused across messages (see reset).
type Scanner struct {
	Cursor
	depth    int
	maxDepth int
	dups     int    // count of duplicate names found so far
	names    []Name // names of the objects being scanned, innermost last
	Err      error
	tooDeep  bool     // a value nested past maxDepth was seen (and scanned: see deepValue)
	deep     []uint64 // deepValue's stack: one bit per open level, set for objects
}

func (s *Scanner) Reset(data []byte, maxDepth int) {
	s.Data, s.Pos, s.depth, s.maxDepth, s.dups, s.Err, s.tooDeep = data, 0, 0, maxDepth, 0, nil, false
	s.names = s.names[:0]
}

func (s *Scanner) fail(msg string) bool {
	if s.Err == nil {
		s.Err = &scanError{off: s.Pos, msg: msg}
	}
	return false
}

func (s *Cursor) skipSpace() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte, or 0 at the end of input.
func (s *Cursor) Peek() byte {
	s.skipSpace()
	if s.Pos < len(s.Data) {
		return s.Data[s.Pos]
	}
	return 0
}

// Next consumes the ',' or the closer due after an element or member of
// an array or object: more reports a ',', ok false that neither comes next.
func (s *Cursor) Next(closer byte) (more, ok bool) {
	switch s.Peek() {
	case ',':
		more = true
	case closer:
	default:
		return false, false
	}
	s.Pos++
	return more, true
}

// Value scans one JSON value starting at the next non-space byte and returns its span.
func (s *Scanner) Value() (Span, bool) {
	c := s.Peek()
	start := s.Pos
	var ok bool
	switch {
	case c == '{':
		ok = s.Object(nil)
	case c == '[':
		ok = s.Array(nil)
	case c == '"':
		_, ok = s.str()
	case c == '-' || (c >= '0' && c <= '9'):
		ok = s.number()
	case c == 't':
		ok = s.literal("true")
	case c == 'f':
		ok = s.literal("false")
	case c == 'n':
		ok = s.literal("null")
	case c == 0 && s.Pos >= len(s.Data):
		ok = s.fail("unexpected end of JSON input")
	default:
		ok = s.fail("invalid character " + strconv.QuoteRune(rune(c)) + " looking for beginning of value")
	}
	return Span{start, s.Pos}, ok
}

func (s *Scanner) literal(lit string) bool { return s.Literal(lit) || s.fail("invalid literal") }

// Literal consumes lit if it comes next, at Pos.
func (s *Cursor) Literal(lit string) bool {
	if len(s.Data)-s.Pos >= len(lit) && string(s.Data[s.Pos:s.Pos+len(lit)]) == lit {
		s.Pos += len(lit)
		return true
	}
	return false
}

func (s *Scanner) digits() int {
	n := 0
	for s.Pos < len(s.Data) && s.Data[s.Pos] >= '0' && s.Data[s.Pos] <= '9' {
		s.Pos++
		n++
	}
	return n
}

func (s *Scanner) number() bool {
	if s.Data[s.Pos] == '-' {
		s.Pos++
	}
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '0' {
		s.Pos++
	} else if s.digits() == 0 {
		return s.fail("invalid number")
	}
	if s.Pos < len(s.Data) && s.Data[s.Pos] == '.' {
		s.Pos++
		if s.digits() == 0 {
			return s.fail("invalid number: no digits after decimal point")
		}
	}
	if s.Pos < len(s.Data) && (s.Data[s.Pos] == 'e' || s.Data[s.Pos] == 'E') {
		s.Pos++
		if s.Pos < len(s.Data) && (s.Data[s.Pos] == '+' || s.Data[s.Pos] == '-') {
			s.Pos++
		}
		if s.digits() == 0 {
			return s.fail("invalid number: no digits in exponent")
		}
	}
	return true
}

// str scans a string starting at the opening quote. It reports whether the
// string holds escape sequences (whose decoded text differs from its bytes).
func (s *Scanner) str() (escaped, ok bool) {
	s.Pos++ // opening quote
	data := s.Data
	tried := false // plainRun's look at the whole body, once per string
	for {
		s.Pos = plainRun(data, s.Pos, &tried)
		if s.Pos >= len(data) {
			return escaped, s.fail("unexpected end of JSON input in string")
		}
		switch c := data[s.Pos]; {
		case c == '"':
			s.Pos++
			return escaped, true
		case c == '\\':
			escaped = true
			if !s.escape() {
				return escaped, false
			}
		case c < 0x20:
			return escaped, s.fail("invalid control character in string")
		default:
			r, size := utf8.DecodeRune(data[s.Pos:])
			if r == utf8.RuneError && size == 1 {
				return escaped, s.fail("invalid UTF-8 in string")
			}
			s.Pos += size
		}
	}
}

// plainRun returns the index of the first byte of data from i on that is
// not plain (printable ASCII other than quote and backslash), or
// len(data): the first 16 bytes one at a time (most names and values end
// there), then 32 at a time, then eight, then one at a time. The first
// time 32 plain bytes pass with longString more to go (*tried is then
// set), it looks at the rest whole up to the next quote (plainUpTo) and,
// when that is all plain, returns the quote's index (or len(data)) at
// once. The scanner (str) and the encoder (appendQuote) both use it: for
// the one the quote ends the string, the other escapes it.
func plainRun(data []byte, i int, tried *bool) int {
	if j := plainBytes(data, i, min(i+16, len(data))); j < i+16 {
		return j
	}
	i += 16
	for i+32 <= len(data) {
		w := data[i : i+32 : i+32]
		if (specialBits(binary.LittleEndian.Uint64(w))|specialBits(binary.LittleEndian.Uint64(w[8:]))|
			specialBits(binary.LittleEndian.Uint64(w[16:]))|specialBits(binary.LittleEndian.Uint64(w[24:])))&highBits != 0 {
			break
		}
		i += 32
		if !*tried && i+longString <= len(data) {
			*tried = true
			if q := plainUpTo(data[i:]); q >= 0 {
				return i + q
			}
		}
	}
	for i+8 <= len(data) && plainASCII8(binary.LittleEndian.Uint64(data[i:])) {
		i += 8
	}
	return plainBytes(data, i, len(data))
}

// plainBytes returns the index of the first byte of data[i:end] that is
// not plain, or end.
func plainBytes(data []byte, i, end int) int {
	for ; i < end; i++ {
		if c := data[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return end
}

// longString is the input left after a string's first 32 plain bytes
// from which plainRun tries plainUpTo: a long string is then found in
// three passes that each go faster than the one pass of the general loop
// (two vectorised searches and a test of three operations a word); a
// short one, or one that is not plain, goes through the general loop.
const longString = 64

// plainUpTo returns the index of the first quote in b (len(b) when there
// is none) when the bytes before it are plain: printable ASCII with no
// backslash. Otherwise (an escape, a control character, a byte from 0x80)
// it returns -1, for the general loop to decide.
func plainUpTo(b []byte) int {
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		q = len(b)
	}
	if bytes.IndexByte(b[:q], '\\') >= 0 || !printableASCII(b[:q]) {
		return -1
	}
	return q
}

// printableASCII reports whether every byte of b is from 0x20 to 0x7f. A
// byte below 0x20 borrows in x-0x20, one from 0x80 has its high bit set:
// a borrow sets bits only above a byte that fails itself.
func printableASCII(b []byte) bool {
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := b[i : i+32 : i+32]
		x0, x1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		x2, x3 := binary.LittleEndian.Uint64(w[16:]), binary.LittleEndian.Uint64(w[24:])
		if ((x0-0x20*ones)|x0|(x1-0x20*ones)|x1|(x2-0x20*ones)|x2|(x3-0x20*ones)|x3)&highBits != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plainASCII8 reports whether the eight bytes of x are all printable ASCII
// other than '"' and '\\' (no byte below 0x20 or from 0x80 up).
func plainASCII8(x uint64) bool { return specialBits(x)&highBits == 0 }

const ones, highBits = 0x0101010101010101, 0x8080808080808080

// specialBits, masked by highBits, is zero when every byte of x is plain
// (the mask is left to the caller: a block's words are or-ed and masked
// once). The high bit of a byte comes from
// x-0x20 (a byte below 0x20 borrows), from x itself (0x80 and up), or from
// the zero-byte test v-1 &^ v on x^'"' and x^'\\'. A borrow can only set
// bits above a byte that is special itself, so zero means none is.
func specialBits(x uint64) uint64 {
	q, bs := x^('"'*ones), x^('\\'*ones)
	return (x - 0x20*ones) | x | (q-ones)&^q | (bs-ones)&^bs
}

func (s *Scanner) escape() bool {
	if s.Pos+1 >= len(s.Data) {
		return s.fail("unexpected end of JSON input in string escape")
	}
	switch s.Data[s.Pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.Pos += 2
		return true
	case 'u':
		r, ok := hex4(s.Data, s.Pos+2)
		if !ok {
			return s.fail("invalid \\u escape")
		}
		s.Pos += 6
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return s.fail("invalid \\u escape: lone low surrogate")
		case r >= 0xD800 && r <= 0xDBFF:
			if s.Pos+1 < len(s.Data) && s.Data[s.Pos] == '\\' && s.Data[s.Pos+1] == 'u' {
				if lo, ok := hex4(s.Data, s.Pos+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					s.Pos += 6
					return true
				}
			}
			return s.fail("invalid \\u escape: unpaired high surrogate")
		}
		return true
	}
	s.Pos++
	return s.fail("invalid escape sequence in string")
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// enter opens the object or array at s.pos; it reports false when that
// would nest past the limit (the caller then scans it with deepValue).
func (s *Scanner) enter() bool {
	if s.depth >= s.maxDepth {
		return false
	}
	s.depth++
	s.Pos++
	return true
}

// deepValue scans the object or array at s.pos, which nests past the
// limit. The message is refused either way, but the scan goes on to its
// end to tell invalid JSON (a parse error) from valid JSON nested too deep
// (an invalid request). It does not recurse: a stack of one bit per open
// level (set for an object) says which closer is due, so a million "["
// cost 125 KB, an eighth of their own size at most, and one pass.
func (s *Scanner) deepValue() bool {
	s.tooDeep = true
	l := levels{bits: s.deep[:0]}
	defer func() {
		if cap(l.bits) <= 1<<10 {
			s.deep = l.bits[:0] // keep a small stack for the next message
		}
	}()
	for {
		// A value is due at s.pos.
		if c := s.Peek(); c == '{' || c == '[' {
			l.push(c == '{', len(s.Data)-s.Pos)
			s.Pos++
			if s.Peek() != c+2 { // not empty ('}' is '{'+2, ']' is '['+2)
				if c == '{' && !s.skipName() {
					return false
				}
				continue
			}
			s.Pos++
			l.depth--
		} else if _, ok := s.Value(); !ok { // a scalar, or an error
			return false
		}
		switch more, ok := s.closeLevels(&l); {
		case !ok:
			return false
		case !more:
			return true
		}
	}
}

// closeLevels closes the levels a value ends until one goes on with ','
// (more: a value or member is due) or none is left open.
func (s *Scanner) closeLevels(l *levels) (more, ok bool) {
	for l.depth > 0 {
		object := l.object()
		switch c := s.Peek(); {
		case c == ',':
			s.Pos++
			return true, !object || s.skipName()
		case object && c != '}':
			return false, s.fail("expected ',' or '}' after object member")
		case !object && c != ']':
			return false, s.fail("expected ',' or ']' after array element")
		}
		s.Pos++
		l.depth--
	}
	return false, true
}

// levels is deepValue's stack of open levels: one bit per level, set for
// an object.
type levels struct {
	bits  []uint64
	depth int
}

// push opens a level. rest, the bytes left to scan, bounds how deep the
// text could still go: the stack grows by doubling (the sizes allocated
// add up to twice the last), never past that.
func (l *levels) push(object bool, rest int) {
	if l.depth/64 == len(l.bits) {
		if len(l.bits) == cap(l.bits) {
			n := min(max(2*cap(l.bits), 16), (l.depth+rest)/64+1)
			l.bits = append(make([]uint64, 0, n), l.bits...)
		}
		l.bits = append(l.bits, 0)
	}
	bit := uint64(1) << (l.depth % 64)
	if object {
		l.bits[l.depth/64] |= bit
	} else {
		l.bits[l.depth/64] &^= bit
	}
	l.depth++
}

// object reports whether the innermost open level is an object.
func (l *levels) object() bool {
	d := l.depth - 1
	return l.bits[d/64]>>(d%64)&1 == 1
}

func (s *Scanner) skipName() bool { _, ok := s.memberName(); return ok }

// memberName scans an object member's name and its colon.
func (s *Scanner) memberName() (Name, bool) {
	if s.Peek() != '"' {
		return Name{}, s.fail("expected object member name")
	}
	start := s.Pos
	escaped, ok := s.str()
	n := Name{Span{start + 1, s.Pos - 1}, escaped}
	if !ok || s.Peek() != ':' {
		return n, ok && s.fail("expected ':' after object member name")
	}
	s.Pos++
	return n, true
}

// Object scans an object. When env is non-nil, the object is a message
// envelope and its members are recorded there.
func (s *Scanner) Object(env *envSink) bool {
	if !s.enter() {
		return s.deepValue()
	}
	if s.names == nil {
		s.names = make([]Name, 0, 16) // a fresh scanner's: one allocation, not one per doubling
	}
	base := len(s.names)
	defer func() { s.names = s.names[:base] }()
	var large map[string]struct{} // decoded names, once the object has many
	if s.Peek() == '}' {
		s.Pos++
		s.depth--
		return true
	}
	for more := true; more; {
		n, ok := s.memberName()
		if !ok {
			return false
		}
		if s.isDup(n, s.names[base:], &large) {
			s.dups++
		}
		s.names = append(s.names, n)
		dups := s.dups
		v, ok := s.Value()
		if !ok {
			return false
		}
		if env != nil {
			env.member(s, n, v, dups)
		}
		if more, ok = s.Next('}'); !ok {
			return s.fail("expected ',' or '}' after object member")
		}
	}
	s.depth--
	return true
}

// isDup reports whether n repeats one of the names already seen in the
// same object. Past 32 names it switches to a map kept for the rest of the
// object, so that a huge object costs linear time.
func (s *Scanner) isDup(n Name, seen []Name, large *map[string]struct{}) bool {
	if len(seen) >= 32 {
		if *large == nil {
			*large = make(map[string]struct{}, 2*len(seen))
			for _, o := range seen {
				(*large)[string(s.decodedName(o))] = struct{}{}
			}
		}
		k := string(s.decodedName(n))
		if _, dup := (*large)[k]; dup {
			return true
		}
		(*large)[k] = struct{}{}
		return false
	}
	nb := n.Of(s.Data)
	for _, o := range seen {
		if !n.escaped && !o.escaped {
			if bytes.Equal(nb, o.Of(s.Data)) {
				return true
			}
		} else if bytes.Equal(s.decodedName(n), s.decodedName(o)) {
			return true
		}
	}
	return false
}

func (s *Scanner) decodedName(n Name) []byte {
	if !n.escaped {
		return n.Of(s.Data)
	}
	return Unquote(n.Of(s.Data))
}

// Array scans an array. elem, when non-nil, scans each element in place of value.
func (s *Scanner) Array(elem func() bool) bool {
	if !s.enter() {
		return s.deepValue()
	}
	if s.Peek() == ']' {
		s.Pos++
		s.depth--
		return true
	}
	for more := true; more; {
		var ok bool
		if elem != nil {
			ok = elem()
		} else {
			_, ok = s.Value()
		}
		if !ok {
			return false
		}
		if more, ok = s.Next(']'); !ok {
			return s.fail("expected ',' or ']' after array element")
		}
	}
	s.depth--
	return true
}

// End checks that only white space follows the value.
func (s *Scanner) End() bool {
	if s.Peek() != 0 || s.Pos < len(s.Data) {
		return s.fail("invalid character after top-level value")
	}
	return true
}

// Members calls fn for each member of obj, a valid JSON object (not on
// hot paths: it allocates for escaped names).
func Members(obj []byte, fn func(name, value []byte)) {
	s := pooledScanner(obj, 1<<30)
	defer s.release()
	if s.Peek() != '{' {
		return
	}
	s.Pos++
	for s.Peek() == '"' {
		n, _ := s.memberName()
		v, ok := s.Value()
		if !ok {
			return
		}
		fn(s.decodedName(n), v.Of(obj))
		if s.Peek() == ',' {
			s.Pos++
		}
	}
}

// scanners keep the Scanners of Members and Valid, whose names of nested
// objects would otherwise be allocated on every call.
var scanners = sync.Pool{New: func() any { return new(Scanner) }}

func pooledScanner(data []byte, maxDepth int) *Scanner {
	s := scanners.Get().(*Scanner)
	s.Reset(data, maxDepth)
	return s
}

func (s *Scanner) release() {
	s.Data = nil
	scanners.Put(s)
}

// Unquote decodes the body of a valid JSON string (without its quotes):
// every caller's text has passed the scanner, so each escape is whole and
// a surrogate escape is a high one followed by an escaped low one.
func Unquote(b []byte) []byte {
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for ; i >= 0; i = bytes.IndexByte(b, '\\') {
		out = append(out, b[:i]...)
		if c := unescaped[b[i+1]]; c != 0 {
			out, b = append(out, c), b[i+2:]
			continue
		}
		r, _ := hex4(b, i+2)
		if b = b[i+6:]; r >= 0xD800 && r <= 0xDFFF {
			lo, _ := hex4(b, 2)
			r, b = 0x10000+(r-0xD800)<<10+(lo-0xDC00), b[6:]
		}
		out = utf8.AppendRune(out, r)
	}
	return append(out, b...)
}

// unescaped is what the one-letter escape \c stands for, 0 for the others.
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Valid reports whether b is exactly one valid JSON value (used on
// pre-encoded results handed to us by handlers).
func Valid(b []byte) bool {
	s := pooledScanner(b, 10000)
	defer s.release()
	_, ok := s.Value()
	return ok && s.End() && s.dups == 0 && !s.tooDeep
}
