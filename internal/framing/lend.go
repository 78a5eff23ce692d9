package framing

import (
	"bytes"
	"errors"
	"io"
)

// Lending a message: a line whose head the stream's owner recognises (a
// response to a call that reads its result as it arrives) is not gathered
// whole. Recv returns ErrLent once the head is buffered, and the rest of
// the line is read through Lent, by whichever goroutine the owner hands
// it to, in the memory of the read buffer whatever the line's length.
// Until Lent has returned io.EOF (or Discard returned), nobody calls Recv:
// the reader is lent, not shared. Only newline framing lends; with
// Content-Length framing a message is read whole, as always.

// Lend is what a LendCheck decides about the head of a line.
type Lend uint8

const (
	LendNo        Lend = iota // read the line whole, as usual
	LendYes                   // lend it: Recv returns ErrLent
	LendUndecided             // ask again once more of the line is buffered
)

// A LendCheck looks at the start of a line not yet whole (the bytes
// buffered so far) and decides. It runs on the goroutine calling Recv.
type LendCheck func(head []byte) Lend

// ErrLent is returned by Recv when the line it met is lent: read it with Lent.
var ErrLent = errors.New("jsonrpc: the message is lent to its reader")

// SetLendCheck installs check, before anything is read.
func (s *Stream) SetLendCheck(check LendCheck) { s.lendCheck = check }

// checkLend asks the LendCheck about the line at buf[r:w], which has no
// newline yet; *decided stops the questions for this line once the
// answer is no.
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

// Lent returns the line Recv lent (from its first byte, without its
// newline): io.EOF at its end, which gives the stream back to Recv.
func (s *Stream) Lent() io.Reader { return lentLine{s} }

type lentLine struct{ s *Stream }

func (l lentLine) Read(p []byte) (int, error) {
	s := l.s
	if !s.lending {
		return 0, io.EOF
	}
	if s.r == s.w {
		if err := s.fillLent(); err != nil {
			return 0, err
		}
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

// fillLent reads more of a lent line. An interrupted read (an idle
// refresh, a caller's context that ended) is not the borrower's concern:
// it reads on, and InterruptsWhileLent tells the owner.
func (s *Stream) fillLent() error {
	if s.r == s.w && len(s.buf) < lentBufSize {
		// Read the line in large pieces rather than in the small buffer
		// of small messages.
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
			s.lentInterrupts++
		case err == io.EOF:
			s.endLend() // a last line without its newline ends here
			return io.EOF
		default:
			s.endLend()
			return err
		}
	}
}

// Discard reads what is left of a lent line and drops it, so that Recv
// finds the next message.
func (s *Stream) Discard() error {
	for s.lending {
		if s.r == s.w {
			if err := s.fillLent(); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
		if i := bytes.IndexByte(s.buf[s.r:s.w], '\n'); i >= 0 {
			s.r += i + 1
			s.endLend()
		} else {
			s.r = s.w
		}
	}
	return nil
}

// InterruptsWhileLent reports, and forgets, how many reads were
// interrupted while a line was lent.
func (s *Stream) InterruptsWhileLent() int {
	n := s.lentInterrupts
	s.lentInterrupts = 0
	return n
}
