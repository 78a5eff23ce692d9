package wsconn

import (
	"bytes"
	"context"
	"io"
	"slices"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// SetLendCheck sets the check that decides, from a message's start,
// whether it is lent.
func (ch *Channel) SetLendCheck(check framing.LendCheck) { ch.check = check }

// Lent is the message lent: its head, then the rest as it arrives.
func (ch *Channel) Lent() io.Reader { return ch.lent }

// CancelLent closes the socket: the borrower of a message gave up, and a
// WebSocket read cannot be interrupted and resumed. The borrower's read
// fails, and so does the channel's next.
func (ch *Channel) CancelLent() { ch.wc.CloseNow() }

// ResumeLent does nothing: the socket is closed.
func (ch *Channel) ResumeLent() {}

// InterruptsWhileLent is 0: a WebSocket read is never interrupted.
func (ch *Channel) InterruptsWhileLent() int { return 0 }

// Discard reads the rest of the lent message (a message must be read to
// its end before the next).
func (ch *Channel) Discard() error {
	if ch.lent == nil {
		return nil // discarded already
	}
	_, err := io.Copy(io.Discard, ch.lent)
	ch.lent = nil
	if err != nil {
		return ch.readError(err)
	}
	return nil
}

// Recv reads the next message, or lends it (framing.ErrLent) once its
// start shows it is a message the check wants lent. A peer's normal close
// is io.EOF; a binary frame closes the socket with status 1003
// (ErrBinaryFrame).
func (ch *Channel) Recv() ([]byte, error) {
	typ, r, err := ch.wc.Reader(context.Background())
	if err != nil {
		return nil, ch.readError(err)
	}
	if typ != websocket.MessageText {
		ch.wc.Close(websocket.StatusUnsupportedData, "binary frames are not supported: send JSON-RPC messages as text frames")
		return nil, ErrBinaryFrame
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
			ch.tooBig.Store(true)
			go ch.Close() // with 1009, whoever closes first; the rest is not read
			return nil, ch.opts.TooLarge(ch.opts.Limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, ch.readError(err)
		}
	}
}
