package wsconn

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// Lending is a Channel whose messages can be lent as they arrive: one
// whose start the check (SetLendCheck) wants lent is not read whole but
// handed to its reader (Lent) from where it is, as internal/framing's
// stream lends a line. Since a lent message may be larger than the
// channel's Limit, the socket's own per-message limit is off and Limit is
// kept here for the messages read whole: one over it closes the socket
// with 1009 (Options.TooLarge's error), as the socket would.
type Lending struct {
	*Channel
	check framing.LendCheck
	lent  io.Reader // the message lent: its head, then the rest
}

// NewLending returns ch lending its messages (none until SetLendCheck).
func NewLending(ch *Channel) *Lending {
	ch.wc.SetReadLimit(-1)
	return &Lending{Channel: ch}
}

// SetLendCheck sets the check that decides, from a message's start,
// whether it is lent.
func (ch *Lending) SetLendCheck(check framing.LendCheck) { ch.check = check }

// Lent is the message lent: its head, then the rest as it arrives.
func (ch *Lending) Lent() io.Reader { return ch.lent }

// CancelLent closes the socket: the borrower of a message gave up, and a
// WebSocket read cannot be interrupted and resumed. The borrower's read
// fails, and so does the channel's next.
func (ch *Lending) CancelLent() { ch.wc.CloseNow() }

// ResumeLent does nothing: the socket is closed.
func (ch *Lending) ResumeLent() {}

// InterruptsWhileLent is 0: a WebSocket read is never interrupted.
func (ch *Lending) InterruptsWhileLent() int { return 0 }

// Discard reads the rest of the lent message (a message must be read to
// its end before the next).
func (ch *Lending) Discard() error {
	if ch.lent == nil {
		return nil // discarded already
	}
	_, err := io.Copy(io.Discard, ch.lent)
	ch.lent = nil
	if err != nil {
		return ch.ReadError(err)
	}
	return nil
}

// Recv reads the next message, or lends it (framing.ErrLent) once its
// start shows it is a message the check wants lent.
func (ch *Lending) Recv() ([]byte, error) {
	typ, r, err := ch.wc.Reader(context.Background())
	if err != nil {
		return nil, ch.ReadError(err)
	}
	if typ != websocket.MessageText {
		return nil, ch.BinaryFrame()
	}
	buf := make([]byte, 0, 512)
	decided := ch.check == nil
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		// Asked before the limit is applied: a message lent is not bound
		// by it (its elements are), whatever the size of the first read.
		if !decided && n > 0 {
			switch ch.check(buf) {
			case framing.LendYes:
				ch.lent = io.MultiReader(bytes.NewReader(buf), r)
				return nil, framing.ErrLent
			case framing.LendNo:
				decided = true
			}
		}
		if int64(len(buf)) > ch.opts.Limit {
			reason := "read limited at " + strconv.FormatInt(ch.opts.Limit, 10) + " bytes"
			go ch.wc.Close(websocket.StatusMessageTooBig, reason) // the rest is not read
			return nil, ch.opts.TooLarge(ch.opts.Limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, ch.ReadError(err)
		}
	}
}
