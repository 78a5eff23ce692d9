package jsonrpc

import (
	"bytes"
	"strconv"
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
	n, found, request := headID(fe.head)
	if request {
		return false
	}
	c.mu.Lock()
	var failed []*pendingCall
	if p := c.pending.m[n]; found && p != nil {
		failed = c.pending.takeGroup(p.group)
	} else {
		failed = c.pending.takeOneGroup()
	}
	c.mu.Unlock()
	err := &responseTooLarge{size: fe.size, limit: fe.limit}
	for _, p := range failed {
		p.ch <- callResult{err: err}
	}
	return len(failed) > 0
}

// headID reads the first bytes of a message (of a batch: of its first
// element) for the id of a response, up to its result or error: our ids are
// plain numbers. request reports a "method" member: the peer's request.
func headID(b []byte) (id uint64, found, request bool) {
	b = bytes.TrimLeft(b, " \t\r\n[")
	if len(b) == 0 || b[0] != '{' {
		return 0, false, false
	}
	b = b[1:]
	for {
		var key []byte
		var ok bool
		if key, b, ok = headMember(b); !ok {
			return 0, false, false
		}
		switch string(key) {
		case "method":
			return 0, false, true
		case "id":
			i := 0
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				i++
			}
			id, ok := parseOurID(b[:i])
			return id, ok, false
		case "jsonrpc":
			if _, b, ok = headString(b); !ok {
				return 0, false, false
			}
		default: // the result or the error: the id, if any, comes after it
			return 0, false, false
		}
	}
}

// headMember reads the name of the next member of an object and its colon
// (the separating comma before it, if any), and returns the rest.
func headMember(b []byte) (name, rest []byte, ok bool) {
	if name, b, ok = headString(bytes.TrimLeft(b, " \t\r\n,")); !ok {
		return nil, nil, false
	}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil, nil, false
	}
	return name, bytes.TrimLeft(b[1:], " \t\r\n"), true
}

// headString reads a string without escapes and returns its contents and
// the rest.
func headString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, nil, false
	}
	return b[1 : 1+end], b[2+end:], true
}
