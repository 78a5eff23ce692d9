package framing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
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

func tooLarge(limit int64, fatal bool) *Error {
	return &Error{Fatal: fatal, Code: codeInvalidRequest, Msg: TooLargeMessage(limit), Limit: limit}
}

// of records the size of the message that was too large (0: unknown) and a
// copy of its first bytes.
func (e *Error) of(size int64, msg []byte) *Error {
	e.Size = size
	e.Head = append([]byte(nil), msg[:min(len(msg), 256)]...)
	return e
}

// ErrInterrupted is returned by a Recv that InterruptRecv cut short; the
// root package sets it to its own (jsonrpc.ErrRecvInterrupted) in init.
var ErrInterrupted = errors.New("jsonrpc: read interrupted")

// New returns a stream that frames messages on rwc, up to max bytes each;
// wto bounds how long a write may make no progress (0: no bound).
func New(rwc io.ReadWriteCloser, f Framing, max int64, wto time.Duration) *Stream {
	s := &Stream{rwc: rwc, framing: f, max: max, wto: wto}
	s.wcond = sync.NewCond(&s.wmu)
	s.useSocketReader(rwc)
	return s
}

// SetLimits sets the size limit and the write timeout (0: none) of a stream
// not yet in use: it is called before the first Recv or Send, by the
// goroutine that created the stream or one it handed it to.
func (s *Stream) SetLimits(max int64, wto time.Duration) { s.max, s.wto = max, wto }

// Stream cuts messages from a byte stream and frames the messages written
// to it. Recv is called by one goroutine at a time; Send, SendQueued and
// Close by any number at once. Hold, HoldCalls, Release and Flush let a
// read loop keep the replies to requests read together for one write.
type Stream struct {
	rwc     io.ReadWriteCloser
	framing Framing
	max     int64
	wto     time.Duration // write timeout (0: none)

	// read side, used by the Recv goroutine only
	buf  []byte // buf[r:w] holds bytes read but not yet consumed
	r, w int
	eof  bool
	lent bool // part of buf was handed out as a message
	// interrupted is set by InterruptRecv until the read it cut returns.
	interrupted atomic.Bool
	skipping    bool          // an oversize line is being skipped
	hint        int           // size of the last message, to size the next buffer
	sock        *socketReader // TCP and unix sockets: read with no buffer held while waiting (idleread_unix.go)
	cur         *lentBuf      // buf's record, when large (reuse.go)

	lendCheck      LendCheck   // decides whether a line is lent (lend.go; nil: never)
	lending        bool        // a line is lent: Lent reads it
	lentLeft       int64       // Content-Length framing: the bytes of the lent body not yet read
	lentInterrupts int         // reads interrupted while lent
	lentCancelled  atomic.Bool // the borrower gave up (CancelLent)

	rmu  sync.Mutex // guards live
	live []*lentBuf // large buffers some of whose messages are still out (reuse.go)

	// write side: the first writer writes, later ones queue behind it
	wmu      sync.Mutex
	queue    []byte // framed messages waiting for the writer
	spare    []byte
	writing  bool
	held     atomic.Int32 // what hold holds back (holdNone: nothing)
	waitMax  uint64       // the latest round a sender waits for (see writeQueue)
	flushing int          // flush calls waiting for the queue to empty
	taken    uint64       // rounds taken from the queue by a writer
	written  uint64       // rounds written
	werr     error
	wcond    *sync.Cond
}

// Framing returns the framing in use: Auto until the first bytes decided it.
// It is called by the goroutine that calls Recv.
func (s *Stream) Framing() Framing { return s.framing }

func (s *Stream) Close() error { return s.rwc.Close() }

// fill reads more bytes into buf. Messages are handed out as slices of
// buf (no copy), so bytes once lent are never overwritten: when buf is full
// or consumed after lending, the unread tail moves to a new buffer. buf grows
// as needed, never past the size limit plus a margin.
func (s *Stream) fill() error {
	if s.eof {
		return io.EOF
	}
	if s.r == s.w && !s.lent {
		s.r, s.w = 0, 0
	}
	if s.buf == nil && s.sock != nil {
		// Nothing buffered: readFD makes the buffer once input arrives.
	} else if s.w == len(s.buf) || (s.lent && len(s.buf)-s.w < len(s.buf)/4) {
		// Full, or so little room left after lending that reads would come
		// in small pieces: move the tail to a fresh buffer.
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
	if err != nil && n == 0 && s.interrupted.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
		// InterruptRecv: clear the deadline and say so. Nothing is lost:
		// the framing functions consume bytes only once a whole message
		// (or a decided error) is there, so the next Recv resumes.
		s.interrupted.Store(false)
		s.rwc.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(time.Time{})
		if s.sock != nil && s.r == s.w {
			// The idle refresh: wait on without a buffer (idleread_unix.go).
			s.leave()
			s.buf, s.r, s.w, s.lent = nil, 0, 0, false
		}
		return ErrInterrupted
	}
	if err == io.EOF {
		s.eof = true
		if n > 0 {
			return nil
		}
	}
	if err != nil && n == 0 {
		return err
	}
	return nil
}

// bufferSize is the size of a new read buffer that holds nothing yet.
func (s *Stream) bufferSize() int {
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
	return true
}

// Buffered returns the number of bytes read and not yet returned by Recv (see BufferedChannel).
func (s *Stream) Buffered() int { return s.w - s.r }

// lend returns b (a slice of buf) as a message the caller owns.
func (s *Stream) lend(b []byte) []byte {
	s.lent = true
	s.hint = len(b)
	if s.cur != nil {
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

// detect picks the framing from the first bytes the peer sends. White space
// is skipped; a header name ("Content-Length:" or "Content-Type:", in any
// case, after an optional byte-order mark) selects Header, anything
// else Line. It reads only while the bytes could still begin such a
// name, so the choice does not depend on how the input is cut into reads,
// and JSON text of any kind (a bare 42, "x", null, garbage) is read as a
// line and answered as one. A line that begins like another header field
// (a name and a colon, which JSON text never is) is read no further than
// a header section may be: past that bound without its newline, it is
// taken as a header section too long, as Header would (see headerStart).
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
	s.wmu.Lock() // frame reads the framing under wmu
	s.framing = f
	s.wmu.Unlock()
}

// headerNames are the header names that select Header, with their colon.
var headerNames = [...]string{"content-length:", "content-type:"}

// headerStart reports whether b, the first non-space bytes of a stream,
// decide the framing yet, and if so whether they begin a header section.
// Bytes that begin like a header field other than those names (a token,
// then a colon) stay undecided until their line ends, a line then, or
// until they pass maxHeaderBytes without a newline, a header section
// then: auto framing bounds what it reads before it decides as each
// framing does after (a line of garbage of 1 MiB, with no newline, was
// otherwise read on towards the message size limit, unanswered).
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
				if s.lendWhole(start, &decided) {
					return nil, ErrLent // over the limit, but lent: its elements are bound
				}
				return nil, tooLarge(s.max, false).of(int64(len(line)), line)
			}
			return s.lend(line), nil
		}
		scanned = s.w - s.r
		if s.checkLend(&decided) { // before the limit: a line lent is not bound by it
			return nil, ErrLent
		}
		// One byte over the limit may be the "\r" of a "\r\n" whose "\n"
		// has not arrived yet: wait for it before judging the line.
		if int64(scanned) > s.max && (int64(scanned) > s.max+1 || s.buf[s.w-1] != '\r') {
			// Too long: report it now, without waiting for the newline
			// (which may never come); the next Recv skips the rest of the
			// line, holding no more of it than one read.
			fe := tooLarge(s.max, false).of(0, s.buf[s.r:s.w])
			s.r = s.w
			s.skipping = true
			return nil, fe
		}
		if err := s.fill(); err != nil {
			if err == io.EOF && !isBlank(s.buf[s.r:s.w]) {
				// A last message without its newline.
				line := s.lend(bytes.TrimRight(s.buf[s.r:s.w], "\r"))
				s.r = s.w
				return line, nil
			}
			return nil, err
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
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
		// Read one header line.
		var line []byte
		first := off == 0
		for {
			if i := bytes.IndexByte(s.buf[s.r+off:s.w], '\n'); i >= 0 {
				line = s.buf[s.r+off : s.r+off+i]
				off += i + 1
				break
			}
			if s.w-s.r > maxHeaderBytes {
				return nil, headerErr("header section too long")
			}
			if err := s.fill(); err != nil {
				if err == io.EOF && s.w > s.r {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		if off > maxHeaderBytes {
			return nil, headerErr("header section too long")
		}
		line = bytes.TrimRight(line, "\r")
		if first && bytes.HasPrefix(line, []byte(wire.BOM)) {
			// A byte-order mark before the message: the message is read
			// (so the stream goes on) and answered with a parse error.
			line, withBOM = line[len(wire.BOM):], true
		}
		if len(line) == 0 {
			if off <= 2 {
				s.r += off // stray blank line between messages
				off = 0
				continue
			}
			break
		}
		if line[0] == '{' || line[0] == '[' {
			// JSON where a header belongs: the peer frames by lines.
			// Said at once, rather than waiting for a header section's
			// end that never comes.
			return nil, headerErr("expected a Content-Length header, got JSON (the peer sends newline-delimited messages): " + strconv.Quote(cut(string(line), 64)))
		}
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return nil, headerErr("expected \"Name: value\", got " + strconv.Quote(cut(string(line), 64)))
		}
		if strings.EqualFold(string(bytes.TrimSpace(k)), "Content-Length") {
			if length >= 0 {
				return nil, headerErr("Content-Length given twice")
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil || n < 0 {
				return nil, headerErr("Content-Length must be a non-negative integer, got " + strconv.Quote(cut(string(v), 32)))
			}
			length = n
		}
	}
	if length < 0 {
		return nil, headerErr("missing Content-Length")
	}
	if err := s.bodyIn(off, length, !withBOM); err != nil {
		return nil, err
	}
	body := s.r + off
	if withBOM {
		s.r = body + int(length)
		return nil, &Error{Code: codeParseError, Msg: "parse error: " + wire.ErrBOM}
	}
	msg := s.lend(s.buf[body : body+int(length)])
	s.r = body + int(length)
	return msg, nil
}

// Send frames msg and writes it. Concurrent senders are coalesced: while
// one goroutine writes, the others append to a queue that it writes in its
// next round, so many small responses leave in few system calls. Each
// sender returns once the round holding its bytes has been written.
func (s *Stream) Send(msg []byte) error { return s.SendQueued(msg, nil) }

// SendQueued is Send that calls queued (when not nil) once msg is in the
// queue, before waiting for it to be written (see QueuedSender).
func (s *Stream) SendQueued(msg []byte, queued func()) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if queued != nil {
		defer func() {
			if queued != nil {
				queued()
			}
		}()
	}
	if s.werr != nil {
		return s.werr
	}
	if len(msg) >= directWrite && !s.writing && len(s.queue) == 0 {
		// A large message and nobody writing: write it from msg itself,
		// rather than copy it into the queue. Senders that come meanwhile
		// queue and wait for the next round.
		if queued != nil {
			queued()
			queued = nil
		}
		s.writing = true
		s.taken++
		header := s.framing == Header
		s.wmu.Unlock()
		err := s.writeFramed(msg, header)
		s.wmu.Lock()
		s.written = s.taken
		if err != nil {
			s.werr = err
		}
		s.writing = false
		s.wcond.Broadcast()
		return s.werr
	}
	s.queue = s.frame(s.queue, msg)
	if queued != nil {
		queued()
		queued = nil
	}
	if s.held.Load() != holdNone && len(s.queue) < maxHeld {
		return nil // written at release, with what follows it
	}
	mine := s.taken + 1 // the round that will carry these bytes
	s.waitMax = max(s.waitMax, mine)
	for s.writing && s.written < mine && s.werr == nil {
		s.wcond.Wait()
	}
	if s.written >= mine || s.werr != nil {
		return s.werr
	}
	s.writeQueue(mine)
	return s.werr
}

// maxHeld bounds the bytes that hold keeps back: past it, sends write.
const maxHeld = 64 << 10

// What hold holds back (stream.held).
const (
	holdNone    int32 = iota
	holdReplies       // the replies to requests read together (hold)
	holdCalls         // the calls that callers of responses read together make next (holdCalls)
)

// Hold makes later sends queue their messages without writing them (and
// return), until release or until Recv must wait for input. A Conn holds
// its replies while it dispatches requests it has already read, so that
// their replies leave together in few writes, as a server that writes when
// its input runs dry.
func (s *Stream) Hold() {
	if s.held.Load() == holdNone {
		s.held.Store(holdReplies)
	}
}

// HoldCalls is hold for the calls the callers of responses just delivered
// will make: at release, the write first lets the goroutines that are ready
// to run (those callers) queue their calls (runtime.Gosched), so that many
// callers on one connection send in few writes.
func (s *Stream) HoldCalls() { s.held.Store(holdCalls) }

// Release ends hold. What was held is written on a goroutine of its own
// (unless a writer is at work: it writes the rest of the queue before it
// stops), so that the caller, the reader, never waits for the peer to read.
// A failed write fails the sends that follow.
func (s *Stream) Release() {
	switch s.held.Load() {
	case holdNone:
		return
	case holdCalls:
		if s.held.CompareAndSwap(holdCalls, holdReplies) {
			connrt.Go(func() {
				runtime.Gosched()
				s.held.Store(holdNone)
				s.writeHeld()
			})
		}
		return
	}
	if s.held.Swap(holdNone) == holdNone {
		return
	}
	s.wmu.Lock()
	flush := len(s.queue) > 0 && !s.writing && s.werr == nil
	s.wmu.Unlock()
	if flush {
		connrt.Go(s.writeHeld)
	}
}

// writeHeld writes the queue unless a writer is at work.
func (s *Stream) writeHeld() {
	s.wmu.Lock()
	if len(s.queue) > 0 && !s.writing && s.werr == nil {
		s.writeQueue(0)
	}
	s.wmu.Unlock()
}

// Flush ends hold and returns once everything queued has been written (or
// the stream has failed).
func (s *Stream) Flush() {
	s.held.Store(holdNone)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for (len(s.queue) > 0 || s.writing) && s.werr == nil {
		if !s.writing {
			s.writeQueue(0)
			continue
		}
		s.flushing++
		s.wcond.Wait()
		s.flushing--
	}
}

// writeQueue writes the queue in rounds (s.wmu held, and released while
// writing) until it is empty, or until round mine is written and a sender
// waits to take over the rest.
func (s *Stream) writeQueue(mine uint64) {
	s.writing = true
	for len(s.queue) > 0 && s.werr == nil {
		out := s.queue
		s.queue = s.spare[:0]
		s.taken++
		s.wmu.Unlock()
		err := s.write(out)
		s.wmu.Lock()
		s.written = s.taken
		if err != nil {
			s.werr = err
		}
		if cap(out) <= 64<<10 {
			s.spare = out[:0]
		} else {
			s.spare = nil
		}
		s.wcond.Broadcast()
		if s.written >= mine && len(s.queue) > 0 && (s.waitMax > s.written || s.flushing > 0) {
			// Hand the rest to a sender that waits for a round not yet
			// written (it writes on when it wakes), or to flush, rather
			// than write for everyone. Without one, the writer writes on:
			// held messages have no sender waiting for them, and a waiter
			// whose round is written returns without writing.
			break
		}
	}
	s.writing = false
	s.wcond.Broadcast()
}

// directWrite is the size from which a message is written in place
// rather than copied into the write queue.
const directWrite = 64 << 10

// writeFramed writes msg with its frame around it, without copying it.
func (s *Stream) writeFramed(msg []byte, header bool) error {
	if header {
		var h [40]byte
		b := append(h[:0], "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(msg)), 10)
		b = append(b, "\r\n\r\n"...)
		if err := s.write(b); err != nil {
			return err
		}
		return s.write(msg)
	}
	if err := s.write(msg); err != nil {
		return err
	}
	return s.write([]byte{'\n'})
}

// write writes p, failing when the peer accepts no bytes at all for the
// write timeout: with a deadline on connections that support one, otherwise
// with a timer that closes the stream. Either is renewed whenever bytes go
// out, so the timeout bounds a stall, not a slow transfer: a deadline that
// expires after part of p went out counts as progress, and without
// deadlines p leaves in chunks for the timer to see progress within a large
// message. With a deadline p is written whole, in as few system calls as
// the socket's buffer allows (64 KiB chunks cost a system call each and
// woke the reader as often).
func (s *Stream) write(p []byte) error {
	if s.wto <= 0 {
		_, err := s.rwc.Write(p)
		return err
	}
	dl, ok := s.rwc.(interface{ SetWriteDeadline(time.Time) error })
	if ok && dl.SetWriteDeadline(time.Now().Add(s.wto)) != nil {
		ok = false // e.g. a file that does not support deadlines
	}
	var timer *time.Timer
	var stalled atomic.Bool
	chunk := len(p)
	if !ok {
		chunk = 64 << 10
		timer = time.AfterFunc(s.wto, func() { stalled.Store(true); s.rwc.Close() })
		defer timer.Stop()
	}
	for len(p) > 0 {
		n, err := s.rwc.Write(p[:min(len(p), chunk)])
		p = p[n:]
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		if err != nil && !(timedOut && n > 0) {
			if timedOut || stalled.Load() {
				return errWriteStalled(s.wto)
			}
			return err
		}
		// Progress (a chunk, or part of p before the deadline): renew.
		if len(p) > 0 {
			if ok {
				dl.SetWriteDeadline(time.Now().Add(s.wto))
			} else {
				timer.Reset(s.wto)
			}
		}
	}
	return nil
}

func errWriteStalled(d time.Duration) error {
	return fmt.Errorf("jsonrpc: write timed out after %s without progress: the peer is not reading: %w", d, os.ErrDeadlineExceeded)
}

func (s *Stream) frame(dst, msg []byte) []byte {
	if s.framing == Header {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(msg)), 10)
		dst = append(dst, "\r\n\r\n"...)
		return append(dst, msg...)
	}
	dst = append(dst, msg...)
	return append(dst, '\n')
}

// cut returns s, cut to n bytes with an ellipsis when longer.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
