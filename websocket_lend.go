package jsonrpc

import "github.com/seedhq/jsonrpc/internal/wsconn"

// wsLending is the Channel of a WebSocket client (Dial): a message that
// begins as the response to a waiting CallIter call is lent to that call
// as it arrives (see calliter.go), like a line on a stream; the reading
// is internal/wsconn's Lending. It writes as wsChannel does.
type wsLending struct{ *wsconn.Lending }

func newWSLending(ch wsChannel) wsLending { return wsLending{wsconn.NewLending(ch.Channel)} }

// openMessage writes one WebSocket text message in frames.
func (ch wsLending) openMessage() (messageWriter, error) {
	return wsChannel{ch.Channel}.openMessage()
}
