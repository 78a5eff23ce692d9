package framing

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Framing says how messages are cut from a byte stream. Its values are the
// root package's Framing values (jsonrpc.FramingAuto, FramingLine,
// FramingHeader), which document them.
type Framing uint8

const (
	Auto   Framing = iota // detect line or header framing from the first bytes
	Line                  // newline-delimited JSON
	Header                // Content-Length headers (the LSP base protocol)
)

// The JSON-RPC error codes the framing answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// Error reports a message the stream could not take. The root package
// gives it to its callers as a *jsonrpc.FrameError.
type Error struct {
	Fatal bool   // the stream cannot continue
	Code  int64  // the JSON-RPC error code sent to the peer
	Msg   string // what was wrong

	Limit int64  // a message over the limit: the limit,
	Size  int64  // its size (0: unknown, over the limit)
	Head  []byte // and its first bytes, to tell which call a response answers
}

func (e *Error) Error() string { return "jsonrpc: " + e.Msg }

// TooLargeMessage is the message of a message over limit.
func TooLargeMessage(limit int64) string {
	return "message too large: the limit is " + strconv.FormatInt(limit, 10) + " bytes"
}

// tooLarge is the error of a message over limit: its size (0: unknown) and
// a copy of its first bytes.
func tooLarge(limit int64, fatal bool, size int64, msg []byte) *Error {
	head := append([]byte(nil), msg[:min(len(msg), 256)]...)
	return &Error{Fatal: fatal, Code: codeInvalidRequest, Msg: TooLargeMessage(limit), Limit: limit, Size: size, Head: head}
}

// ErrInterrupted is returned by a Recv that InterruptRecv cut short; the
// root package sets it to its own (jsonrpc.ErrRecvInterrupted) in init.
var ErrInterrupted = errors.New("jsonrpc: read interrupted")

// New returns a stream that frames messages on rwc, up to max bytes each;
// wto bounds how long a write may make no progress (0: no bound).
func New(rwc io.ReadWriteCloser, f Framing, max int64, wto time.Duration) *Stream {
	s := &Stream{framing: f, max: max}
	s.writer = writer{rwc: rwc, wto: wto, header: f == Header}
	s.useSocketReader(rwc)
	return s
}

// SetLimits sets the size limit and the write timeout (0: none) of a stream
// not yet in use: it is called before the first Recv or Send, by the
// goroutine that created the stream or one it handed it to.
func (s *Stream) SetLimits(max int64, wto time.Duration) { s.max, s.wto = max, wto }

// Stream cuts messages from a byte stream and frames the messages written
// to it. Recv is called by one goroutine at a time; Send, SendQueued and
// Close by any number at once. The write side, which also holds replies
// back (Hold, HoldCalls, Release and Flush let a read loop keep the
// replies to requests read together for one write), is its writer
// (write.go); the reader releases what is held before it waits for input.
type Stream struct {
	framing Framing // the read side's: Auto until detect decides
	max     int64

	// read side, used by the Recv goroutine only
	buf          []byte // buf[r:w] holds bytes read but not yet consumed
	r, w         int
	eof          bool
	lent         bool          // part of buf was handed out as a message
	unterminated bool          // see Unterminated
	readBytes    atomic.Uint64 // bytes read from rwc (ReadProgress)
	interrupted  atomic.Bool   // set by InterruptRecv until the read it cut returns
	skipping     bool          // an oversize line is being skipped
	hint         int           // size of the last message, to size the next buffer
	cur          *lentBuf      // buf's record, when large (reuse.go)

	lendCheck      LendCheck   // decides whether a line is lent (lend.go; nil: never)
	lending        bool        // a line is lent: Lent reads it
	lentLeft       int64       // Content-Length framing: the bytes of the lent body not yet read
	lentInterrupts int         // reads interrupted while lent
	lentCancelled  atomic.Bool // the borrower gave up (CancelLent)

	rmu  sync.Mutex // guards live
	live []*lentBuf // large buffers some of whose messages are still out (reuse.go)

	writer // the write side (write.go)
}

// Framing returns the framing in use: Auto until the first bytes decided it.
// It is called by the goroutine that calls Recv.
func (s *Stream) Framing() Framing { return s.framing }

func (s *Stream) Close() error { s.unpark(true); return s.rwc.Close() }

// Unterminated reports whether the message Recv returned last ended at
// the end of input without its newline: it may have been cut short. It is
// called by the goroutine that calls Recv.
func (s *Stream) Unterminated() bool { return s.unterminated }

// ReadProgress is the number of bytes read so far; any goroutine may call it.
func (s *Stream) ReadProgress() uint64 { return s.readBytes.Load() }

// fill reads more bytes into buf (see makeRoom).
func (s *Stream) fill() error {
	if s.eof {
		return io.EOF
	}
	if err := s.makeRoom(); err != nil {
		return err
	}
	s.Release() // about to wait for input: what was held goes out
	var n int
	var err error
	if s.sock != nil {
		n, err = s.readSocket()
	} else {
		n, err = s.rwc.Read(s.buf[s.w:])
	}
	s.w += n
	if n > 0 {
		s.readBytes.Add(uint64(n))
	}
	if err != nil && n == 0 && s.interrupted.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
		return s.interruptedRead()
	}
	if err == io.EOF {
		s.eof = true
	}
	if n > 0 {
		return nil // an error comes back at the next read
	}
	return err
}

// WaitInput waits until input arrives on a socket stream that holds no
// buffer (an idle one) and reads it, as Recv's first read would, from a
// frame shallow enough that a goroutine beginning with it waits on its
// small starting stack. Errors are left to Recv, which meets them again.
// On Linux it may instead hand the wait to a waiter the process shares and
// report true at once: the goroutine may end, and r starts a fresh read
// loop when input comes (idleread_linux.go).
func (s *Stream) WaitInput(r Resumer) (parked bool) {
	if s.sock == nil || s.buf != nil || s.eof {
		return false
	}
	s.Release() // about to wait for input: what was held goes out
	if s.park(r) {
		return true
	}
	n, _ := s.readSocket()
	s.w += n
	s.readBytes.Add(uint64(n))
	return false
}

// Resumer starts a fresh read loop for a stream whose wait WaitInput handed on.
type Resumer interface{ StartLoop() }

// makeRoom makes room in buf for a read. Bytes once lent are never
// overwritten: when buf is full, or so little room is left after lending
// that reads would come in small pieces, the unread tail moves to a fresh
// buffer (twice the size when the tail fills more than half, up to the
// size limit plus a header section).
func (s *Stream) makeRoom() error {
	if s.r == s.w && !s.lent {
		s.r, s.w = 0, 0
	}
	if s.buf == nil && s.sock != nil {
		return nil // nothing buffered: readFD makes the buffer once input arrives
	}
	if s.w < len(s.buf) && !(s.lent && len(s.buf)-s.w < len(s.buf)/4) {
		return nil
	}
	tail := s.w - s.r
	size := max(len(s.buf), 512)
	if s.buf == nil {
		size = s.bufferSize()
	}
	if 2*tail > size {
		size = min(2*size, int(min(s.max, math.MaxInt32)+maxHeaderBytes+4096)) // a header section and its message
		if size <= tail {
			return errFull
		}
	}
	if s.lent || size != len(s.buf) {
		nb, lb := s.newBuf(size)
		copy(nb, s.buf[s.r:s.w])
		s.leave()
		s.buf, s.cur, s.lent = nb, lb, false
	} else {
		copy(s.buf, s.buf[s.r:s.w])
	}
	s.r, s.w = 0, tail
	return nil
}

// interruptedRead ends a read InterruptRecv cut: it clears the deadline
// and says so. Nothing is lost: bytes are consumed only once a whole
// message (or a decided error) is there.
func (s *Stream) interruptedRead() error {
	s.interrupted.Store(false)
	s.rwc.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(time.Time{})
	if s.sock != nil && s.r == s.w { // the idle refresh: wait on without a buffer
		s.leave()
		s.buf, s.r, s.w, s.lent = nil, 0, 0, false
		s.writer.dropBuffers()
	}
	return ErrInterrupted
}

// bufferSize is the size of a new read buffer that holds nothing yet.
func (s *Stream) bufferSize() int {
	if s.hint >= LargeMessage {
		return s.hint + s.hint/16 + 4096 // less to spare: never recycled once it lent one
	}
	if s.hint > 512 {
		return s.hint + s.hint/4 // the last message was large: expect another
	}
	return 512
}

// InterruptRecv makes a Recv blocked on the connection return
// ErrInterrupted, with nothing lost: what was read stays buffered and
// the next Recv goes on from there. It reports false when the connection
// has no read deadline to use (see RecvInterrupter).
func (s *Stream) InterruptRecv() bool {
	d, ok := s.rwc.(interface{ SetReadDeadline(time.Time) error })
	if !ok {
		return false
	}
	s.interrupted.Store(true)
	if d.SetReadDeadline(time.Unix(1, 0)) != nil {
		s.interrupted.Store(false)
		return false
	}
	s.unpark(false)
	return true
}

// Buffered returns the number of bytes read and not yet returned by Recv (see BufferedChannel).
func (s *Stream) Buffered() int { return s.w - s.r }

// lend returns b (a slice of buf) as a message the caller owns.
func (s *Stream) lend(b []byte) []byte {
	s.lent = true
	s.hint = len(b)
	if s.cur != nil {
		if len(b) >= LargeMessage {
			s.stabilize() // never recycled: its strings may alias it (reuse.go)
		}
		s.cur.users.Add(1) // until the caller gives it back (GiveBack)
	}
	return b[:len(b):len(b)]
}

var errFull = errors.New("buffer full")

// shrink drops a large read buffer once it is empty, so an idle connection
// does not keep the memory of its largest message.
func (s *Stream) shrink() {
	if s.r == s.w && len(s.buf) > 64<<10 {
		s.leave()
		s.buf, s.r, s.w, s.lent = nil, 0, 0, false
	}
}

func (s *Stream) Recv() ([]byte, error) {
	defer s.shrink()
	if s.framing == Auto {
		if err := s.detect(); err != nil {
			return nil, err
		}
	}
	if s.framing == Header {
		return s.recvHeader()
	}
	return s.recvLine()
}

// detect picks the framing from the first bytes the peer sends, after
// white space (the rules: headerStart and jsonrpc.FramingAuto).
func (s *Stream) detect() error {
	for {
		for s.r < s.w && isSpace(s.buf[s.r]) {
			s.r++
		}
		if s.r < s.w {
			if decided, header := headerStart(s.buf[s.r:s.w]); decided {
				f := Line
				if header {
					f = Header
				}
				s.setFraming(f)
				return nil
			}
		}
		if err := s.fill(); err != nil {
			if err == io.EOF {
				s.setFraming(Line) // what is left is a last line
				return nil
			}
			return err
		}
	}
}

func (s *Stream) setFraming(f Framing) {
	s.framing = f
	s.wmu.Lock() // the writer frames under wmu
	s.header = f == Header
	s.wmu.Unlock()
}

// headerNames are the header names that select Header, with their colon.
var headerNames = [...]string{"content-length:", "content-type:"}

// headerStart reports whether b, the first non-space bytes of a stream,
// decide the framing yet, and if so whether they begin a header section:
// headerNames (after an optional byte-order mark) do. Bytes that begin like
// another header field (a token, then a colon) stay undecided until their
// line ends (a line) or they pass maxHeaderBytes without a newline (a
// header section too long): auto framing reads no more before it decides
// than either framing would after.
func headerStart(b []byte) (decided, header bool) {
	if len(b) < len(wire.BOM) && strings.HasPrefix(wire.BOM, string(b)) {
		return false, false
	}
	b = bytes.TrimPrefix(b, []byte(wire.BOM))
	for _, name := range headerNames {
		n := min(len(b), len(name))
		if strings.EqualFold(string(b[:n]), name[:n]) {
			return n == len(name), n == len(name)
		}
	}
	name := 0
	for name < len(b) && isToken(b[name]) {
		name++
	}
	switch {
	case name == len(b) && name <= maxHeaderBytes:
		return false, false // a name yet, or JSON text (42, true)
	case name == 0 || name == len(b) || b[name] != ':':
		return true, false
	case bytes.IndexByte(b[:min(len(b), maxHeaderBytes+1)], '\n') >= 0:
		return true, false // a line that ends within the bound
	}
	return len(b) > maxHeaderBytes, len(b) > maxHeaderBytes
}

// isToken reports whether c may be part of a header field's name (an HTTP
// token, RFC 9110 §5.6.2).
func isToken(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (s *Stream) recvLine() ([]byte, error) {
	if s.skipping { // the rest of an oversize line, already answered
		if err := s.skipLine(); err != nil {
			return nil, err
		}
	}
	scanned := 0     // bytes of buf[r:w] known to hold no newline
	decided := false // the LendCheck said no to this line
	for {
		if i := bytes.IndexByte(s.buf[s.r+scanned:s.w], '\n'); i >= 0 {
			start, end := s.r, s.r+scanned+i
			line := s.buf[start:end]
			s.r = end + 1
			line = bytes.TrimRight(line, "\r")
			if isBlank(line) {
				scanned = 0
				continue
			}
			if int64(len(line)) > s.max {
				s.r = start // the LendCheck sees the whole line; lent, Lent reads it from there
				if s.checkLend(&decided) {
					return nil, ErrLent // over the limit, but lent: its elements are bound
				}
				s.r = end + 1
				return nil, tooLarge(s.max, false, int64(len(line)), line)
			}
			return s.lend(line), nil
		}
		scanned = s.w - s.r
		if s.checkLend(&decided) { // before the limit: a line lent is not bound by it
			return nil, ErrLent
		}
		// (One byte over may be the "\r" of a "\r\n" not all here yet.)
		if int64(scanned) > s.max && (int64(scanned) > s.max+1 || s.buf[s.w-1] != '\r') {
			// Too long: said now, not at a newline that may never come;
			// the next Recv skips the rest of the line.
			fe := tooLarge(s.max, false, 0, s.buf[s.r:s.w])
			s.r = s.w
			s.skipping = true
			return nil, fe
		}
		if err := s.fill(); err != nil {
			if err == io.EOF && !isBlank(s.buf[s.r:s.w]) { // a last message without its newline
				line := s.lend(bytes.TrimRight(s.buf[s.r:s.w], "\r"))
				s.r = s.w
				s.unterminated = true
				return line, nil
			}
			return nil, err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// skipLine discards input up to and including the next newline.
func (s *Stream) skipLine() error {
	for {
		if i := bytes.IndexByte(s.buf[s.r:s.w], '\n'); i >= 0 {
			s.r += i + 1
			s.skipping = false
			return nil
		}
		s.r = s.w
		if err := s.fill(); err != nil {
			if err == io.EOF {
				s.skipping = false
				return nil
			}
			return err
		}
	}
}

const maxHeaderBytes = 8 << 10

func headerErr(msg string) *Error {
	return &Error{Fatal: true, Code: codeParseError, Msg: "invalid message header: " + msg}
}

// recvHeader reads a message framed by a header section. It consumes
// nothing until the whole message is there (only stray blank lines), so a
// read interrupted halfway resumes where it left off.
func (s *Stream) recvHeader() ([]byte, error) {
	length := int64(-1)
	off := 0 // bytes of buf[r:] read as header lines so far
	withBOM := false
	for {
		line, next, err := s.headerLine(off)
		if err != nil {
			return nil, err
		}
		if off == 0 && bytes.HasPrefix(line, []byte(wire.BOM)) { // read on, answered with a parse error
			line, withBOM = line[len(wire.BOM):], true
		}
		off = next
		if len(line) == 0 && off <= 2 {
			s.r += off // stray blank line between messages
			off = 0
			continue
		}
		if len(line) == 0 {
			break // the end of the header section
		}
		if err := headerField(line, &length); err != nil {
			return nil, err
		}
	}
	if length < 0 {
		return nil, headerErr("missing Content-Length")
	}
	if err := s.bodyIn(off, length, !withBOM); err != nil {
		return nil, err
	}
	body := s.r + off
	s.r = body + int(length)
	if withBOM {
		return nil, &Error{Code: codeParseError, Msg: "parse error: " + wire.ErrBOM}
	}
	return s.lend(s.buf[body:s.r]), nil
}

// headerLine reads the header line at buf[r+off:] and returns it without
// its line end, and the offset after it.
func (s *Stream) headerLine(off int) (line []byte, next int, err error) {
	for {
		if i := bytes.IndexByte(s.buf[s.r+off:s.w], '\n'); i >= 0 {
			if off+i+1 > maxHeaderBytes {
				return nil, 0, headerErr("header section too long")
			}
			return bytes.TrimRight(s.buf[s.r+off:s.r+off+i], "\r"), off + i + 1, nil
		}
		if s.w-s.r > maxHeaderBytes {
			return nil, 0, headerErr("header section too long")
		}
		if err := s.fill(); err != nil {
			if err == io.EOF && s.w > s.r {
				return nil, 0, io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
	}
}

// headerField reads one "Name: value" header line; Content-Length sets
// *length (once), other names are ignored.
func headerField(line []byte, length *int64) error {
	if line[0] == '{' || line[0] == '[' { // the peer frames by lines: said at once
		return headerErr("expected a Content-Length header, got JSON (the peer sends newline-delimited messages): " + strconv.Quote(cut(string(line), 64)))
	}
	k, v, ok := bytes.Cut(line, []byte{':'})
	if !ok {
		return headerErr("expected \"Name: value\", got " + strconv.Quote(cut(string(line), 64)))
	}
	if !strings.EqualFold(string(bytes.TrimSpace(k)), "Content-Length") {
		return nil
	}
	if *length >= 0 {
		return headerErr("Content-Length given twice")
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
	if err != nil || n < 0 {
		return headerErr("Content-Length must be a non-negative integer, got " + strconv.Quote(cut(string(v), 32)))
	}
	*length = n
	return nil
}

// cut returns s, cut to n bytes with an ellipsis when longer.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
