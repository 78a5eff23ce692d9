package framing

import (
	"bytes"
	"errors"
	"io"
)

// Lending a message: Recv returns ErrLent once the head of a line its
// owner's LendCheck recognises is buffered, and the rest is read through
// Lent, by whichever goroutine the owner hands it to; until Lent has
// returned io.EOF (or Discard returned), nobody calls Recv. With
// Content-Length framing the body is lent, exactly its length.

// Lend is what a LendCheck decides about the head of a line.
type Lend uint8

const (
	LendNo        Lend = iota // read the line whole, as usual
	LendYes                   // lend it: Recv returns ErrLent
	LendUndecided             // ask again once more of the line is buffered
)

// A LendCheck looks at the start of a line not yet whole (the bytes
// buffered so far; none yet, for a body whose header section is read)
// and decides. It runs on the goroutine calling Recv.
type LendCheck func(head []byte) Lend

// ErrLent is returned by Recv when the line it met is lent: read it with Lent.
var ErrLent = errors.New("jsonrpc: the message is lent to its reader")

// SetLendCheck installs check, before anything is read.
func (s *Stream) SetLendCheck(check LendCheck) { s.lendCheck = check }

// checkLend asks the LendCheck about the line at buf[r:w], not yet whole;
// *decided stops the questions once the answer is no.
func (s *Stream) checkLend(decided *bool) bool {
	if s.lendCheck == nil || *decided || s.framing != Line || s.r == s.w {
		return false
	}
	switch s.lendCheck(s.buf[s.r:s.w]) {
	case LendYes:
		s.lending = true
		return true
	case LendNo:
		*decided = true
	}
	return false
}

// bodyIn waits until the body of length bytes after the header section
// (off bytes from s.r) is whole in the buffer, or lends it (ErrLent, the
// header section consumed). It consumes nothing otherwise, so a read
// interrupted resumes. A body over the limit not lent is a fatal error.
func (s *Stream) bodyIn(off int, length int64, lendable bool) error {
	ask := lendable && s.lendCheck != nil && length > 0
	for {
		have := int64(s.w - s.r - off)
		if have >= length && length <= s.max {
			return nil // whole: read as usual
		}
		if ask { // even with no byte of the body yet: the check may know already
			switch s.lendCheck(s.buf[s.r+off : s.r+off+int(min(have, length))]) {
			case LendYes:
				s.r += off
				s.lending, s.lentLeft = true, length
				return ErrLent
			case LendNo:
				ask = false
			default: // undecided by the whole body or past the limit: not lent
				ask = have < length && have <= s.max
			}
		}
		if !ask && length > s.max {
			return tooLarge(s.max, true, length, nil)
		}
		if err := s.fill(); err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// Lent returns the message Recv lent: a line from its first byte, without
// its newline, or a body of its Content-Length; io.EOF at its end, which
// gives the stream back to Recv (a body cut short: io.ErrUnexpectedEOF).
func (s *Stream) Lent() io.Reader { return lentLine{s} }

type lentLine struct{ s *Stream }

func (l lentLine) Read(p []byte) (int, error) {
	s := l.s
	if !s.lending {
		return 0, io.EOF
	}
	if s.lentCancelled.Load() {
		return 0, ErrLentCancelled
	}
	if s.r == s.w {
		if err := s.fillLent(); err != nil {
			return 0, err
		}
	}
	if s.framing == Header {
		n := copy(p, s.buf[s.r:s.r+int(min(int64(s.w-s.r), s.lentLeft))])
		s.r += n
		if s.lentLeft -= int64(n); s.lentLeft == 0 {
			s.endLend()
		}
		return n, nil
	}
	seg := s.buf[s.r:s.w]
	end := bytes.IndexByte(seg, '\n')
	if end >= 0 {
		seg = seg[:end]
	}
	n := copy(p, seg)
	s.r += n
	if n == end { // the whole rest: the newline is the line's end
		s.r++
		s.endLend()
	}
	return n, nil
}

// lentBufSize is the read buffer of a lent line: the line is read in
// pieces this large (pooled, see reuse.go), whatever its length.
const lentBufSize = reuseMin

// endLend gives the stream back to Recv; the large buffer of the lent
// line goes back to the pool if nothing is left in it.
func (s *Stream) endLend() {
	s.lending = false
	if s.r == s.w && s.cur != nil {
		s.leave()
		s.buf, s.r, s.w, s.lent = nil, 0, 0, false
	}
}

// fillLent reads more of a lent line. An interrupted read is not the
// borrower's concern: it reads on, and InterruptsWhileLent tells the owner.
func (s *Stream) fillLent() error {
	if s.r == s.w && len(s.buf) < lentBufSize { // read it in large pieces
		nb, lb := s.newBuf(lentBufSize)
		s.leave()
		s.buf, s.cur, s.r, s.w, s.lent = nb, lb, 0, 0, false
	}
	for {
		err := s.fill()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrInterrupted):
			if s.lentCancelled.Load() {
				return ErrLentCancelled
			}
			s.lentInterrupts++
		case err == io.EOF:
			s.endLend() // a last line without its newline ends here
			if s.framing == Header {
				return io.ErrUnexpectedEOF // a body cut short
			}
			return io.EOF
		default:
			s.endLend()
			return err
		}
	}
}

// ErrLentCancelled is the error of a read of a lent message whose
// borrower gave up (CancelLent).
var ErrLentCancelled = errors.New("jsonrpc: the read of a lent message was cancelled")

// CancelLent makes the borrower's read of the lent message, blocked (where
// a read deadline can cut it) or next, return ErrLentCancelled. Any
// goroutine may call it; ResumeLent undoes it, for Discard to read the rest.
func (s *Stream) CancelLent() {
	s.lentCancelled.Store(true)
	s.InterruptRecv()
}

// ResumeLent undoes CancelLent.
func (s *Stream) ResumeLent() { s.lentCancelled.Store(false) }

// Discard reads what is left of a lent message and drops it, so that Recv
// finds the next message.
func (s *Stream) Discard() error {
	_, err := io.Copy(io.Discard, lentLine{s})
	return err
}

// InterruptsWhileLent reports, and forgets, how many reads were
// interrupted while a line was lent.
func (s *Stream) InterruptsWhileLent() int {
	n := s.lentInterrupts
	s.lentInterrupts = 0
	return n
}
