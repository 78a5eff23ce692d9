package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// The client's reader of Server-Sent Events (WHATWG HTML, "Server-sent
// events", the event stream interpretation): lines end with CRLF, LF or CR;
// a line starting with a colon is a comment; "field: value" loses one space
// after the colon; data lines join with LF; a blank line dispatches the
// event; an event without data is not dispatched; an id containing NUL and
// a retry that is not all digits are ignored; a leading BOM is skipped; an
// event cut by the end of the stream is discarded.

// ErrEventTooLarge is the error of an event over the reader's limit; the
// root package sets it to its own (jsonrpc.ErrEventTooLarge) in init.
var ErrEventTooLarge = errors.New("sse: event over the size limit")

// Event is one dispatched event. Data is valid until the next call of Next.
type Event struct {
	Type string // "" means "message"
	Data []byte
}

// Reader reads the events of one stream.
type Reader struct {
	br     *bufio.Reader
	Limit  int    // bytes of one event's lines
	LastID string // the last event id seen (it persists across events)
	Retry  time.Duration
	HasID  bool // an id field was seen

	data    []byte
	typ     []byte
	size    int  // bytes of the event so far
	partial bool // a field of an undispatched event was read
	skipLF  bool // the last line ended with CR: a LF right after belongs to it
	started bool // the BOM check is done
	line    []byte
}

func NewReader(r io.Reader, limit int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 16<<10), Limit: limit}
}

// Resume returns a reader of body, the stream that resumes r's (after a
// reconnection): the last event id and the retry delay carry over.
func (r *Reader) Resume(body io.Reader) *Reader {
	next := NewReader(body, r.Limit)
	next.LastID, next.HasID, next.Retry = r.LastID, r.HasID, r.Retry
	return next
}

// Next returns the next event with data. At the end of the stream it
// returns io.EOF, or io.ErrUnexpectedEOF when an event was cut short.
func (r *Reader) Next() (Event, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.partial {
				err = io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 { // dispatch
			r.size, r.partial = 0, false
			if len(r.data) == 0 {
				r.typ = r.typ[:0]
				continue
			}
			ev := Event{Type: string(r.typ), Data: r.data[:len(r.data)-1]}
			r.data, r.typ = r.data[:0], r.typ[:0]
			return ev, nil
		}
		if line[0] == ':' {
			continue // a comment (a keep-alive, usually)
		}
		r.partial = true
		r.field(line)
	}
}

// field takes one field line of the event being read.
func (r *Reader) field(line []byte) {
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "event":
		r.typ = append(r.typ[:0], value...)
	case "data":
		r.data = append(append(r.data, value...), '\n')
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.LastID, r.HasID = string(value), true
		}
	case "retry":
		if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil {
			r.Retry = time.Duration(ms) * time.Millisecond
		}
	}
}

// readLine returns the next line without its end, counting it against the
// event's size.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	if !r.started {
		r.started = true
		// An event needs more than 3 bytes: waiting for them cannot stall one.
		if b, err := r.br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
			r.br.Discard(3)
		}
	}
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if err == io.EOF && len(r.line) > 0 {
					r.partial = true // a line without its end: the event is cut
				}
				return nil, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if r.skipLF {
			r.skipLF = false
			if buf[0] == '\n' {
				r.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		n := i
		if i < 0 {
			n = len(buf)
		}
		if r.size += n; r.size > r.Limit {
			return nil, ErrEventTooLarge
		}
		r.line = append(r.line, buf[:n]...)
		if i < 0 {
			r.br.Discard(n)
			continue
		}
		r.skipLF = buf[i] == '\r'
		r.br.Discard(i + 1)
		return r.line, nil
	}
}

// ErrStreamCut reports an event stream that ended before the responses due.
var ErrStreamCut = errors.New("jsonrpc: the server's event stream ended before the response")
