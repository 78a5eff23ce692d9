package jsonrpc

import (
	"strconv"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// A message over the client's size limit cannot be read, but the caller
// waiting for it must not wait for its deadline: the connection tells which
// call it answers from its first bytes (where the id of a response usually
// is) and fails that call at once with a responseTooLarge error.

// responseTooLarge is the error of a call whose response was over the size
// limit. errors.Is(err, ErrMessageTooLarge) reports it.
type responseTooLarge struct{ size, limit int64 } // size 0: unknown

func (e *responseTooLarge) Error() string {
	if e.size > e.limit {
		return "jsonrpc: response too large (" + strconv.FormatInt(e.size, 10) + " bytes, limit " + strconv.FormatInt(e.limit, 10) + ")"
	}
	return "jsonrpc: response too large (more than " + strconv.FormatInt(e.limit, 10) + " bytes, limit " + strconv.FormatInt(e.limit, 10) + ")"
}

func (e *responseTooLarge) Unwrap() error { return ErrMessageTooLarge }

// failOversize fails the calls that a message over the size limit answers:
// the call (or our batch) whose id its head names or, when the head names
// none, every waiting call if they all belong to one message. It reports
// false when the message is a request of the peer's, or matches no call.
func (c *Conn) failOversize(fe *FrameError) bool {
	digits, request := wire.HeadID(fe.head)
	if request {
		return false
	}
	n, found := parseOurID(digits)
	c.mu.Lock()
	var failed []*pendingCall
	if p, ok := c.pending.Get(n); found && ok {
		failed = c.pending.TakeGroup(p.group)
	} else {
		failed = c.pending.TakeOneGroup()
	}
	c.mu.Unlock()
	err := &responseTooLarge{size: fe.size, limit: fe.limit}
	for _, p := range failed {
		p.ch <- callResult{err: err}
	}
	return len(failed) > 0
}
