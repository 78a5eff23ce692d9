package jsonrpc

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// wsLending is the Channel of a WebSocket client (Dial): a message that
// begins as the response to a waiting CallIter call is lent to that call
// as it arrives (see calliter.go), like a line on a stream. Since a lent
// message may be larger than the size limit (which then bounds each
// element), the library's per-message limit is off and the limit is kept
// here for the messages read whole: one over it closes the socket with
// 1009, as the library would.
type wsLending struct {
	wsChannel
	check framing.LendCheck
	lent  io.Reader // the message lent: its head, then the rest
}

func newWSLending(ch wsChannel) *wsLending {
	ch.Conn().SetReadLimit(-1)
	return &wsLending{wsChannel: ch}
}

func (ch *wsLending) SetLendCheck(check framing.LendCheck) { ch.check = check }
func (ch *wsLending) Lent() io.Reader                      { return ch.lent }
func (ch *wsLending) InterruptsWhileLent() int             { return 0 } // a WebSocket read is never interrupted

// Discard reads the rest of the lent message (a message must be read to
// its end before the next).
func (ch *wsLending) Discard() error {
	_, err := io.Copy(io.Discard, ch.lent)
	ch.lent = nil
	if err != nil {
		return ch.ReadError(err)
	}
	return nil
}

// Recv reads the next message, or lends it (framing.ErrLent) once its
// start shows it is a response the check wants lent.
func (ch *wsLending) Recv() ([]byte, error) {
	typ, r, err := ch.Conn().Reader(context.Background())
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
		if int64(len(buf)) > ch.Limit() {
			reason := "read limited at " + strconv.FormatInt(ch.Limit(), 10) + " bytes"
			go ch.Conn().Close(websocket.StatusMessageTooBig, reason) // the rest is not read
			return nil, tooLarge(ch.Limit(), true)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, ch.ReadError(err)
		}
		if !decided && n > 0 {
			switch ch.check(buf) {
			case framing.LendYes:
				ch.lent = io.MultiReader(bytes.NewReader(buf), r)
				return nil, framing.ErrLent
			case framing.LendNo:
				decided = true
			}
		}
	}
}
