package framing

import "errors"

// ErrNotIncremental is returned by OpenMessage on a stream whose framing
// needs a message's length before its first byte (Content-Length headers).
var ErrNotIncremental = errors.New("framing: Content-Length framing cannot write a message in pieces")

// MessageWriter writes one message in pieces (see OpenMessage). Its
// methods are called by one goroutine.
type MessageWriter struct {
	s    *writer
	done bool
}

// OpenMessage takes the output for one message that the caller writes in
// pieces with the returned writer and ends with Close (or Abort). It waits
// until what was queued before it is written; messages sent meanwhile
// queue behind it and leave once it is closed. With Content-Length framing
// it fails with ErrNotIncremental: the length must come first.
func (s *Stream) OpenMessage() (*MessageWriter, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.header {
		return nil, ErrNotIncremental
	}
	for {
		switch {
		case s.werr != nil:
			return nil, s.werr
		case s.writing:
			s.wait()
		case len(s.queue) > 0:
			s.writeQueue(0) // what was queued (or held) before goes first
		default:
			s.writing = true
			s.taken++ // senders that come meanwhile wait for a later round
			return &MessageWriter{s: &s.writer}, nil
		}
	}
}

// Write writes p, a piece of the message, under the stream's write
// timeout (a stall, not a slow transfer). p must not hold a newline on a
// line-framed stream (JSON text encoded compactly holds none).
func (m *MessageWriter) Write(p []byte) error {
	if m.done {
		return errors.New("framing: write to a message already ended")
	}
	if err := m.s.write(p); err != nil {
		m.end(err)
		return err
	}
	return nil
}

// Close ends the message (its newline) and lets the messages queued
// behind it go out.
func (m *MessageWriter) Close() error {
	if m.done {
		return nil
	}
	err := m.s.write([]byte{'\n'})
	m.end(err)
	return err
}

// Abort gives up a message cut short: the stream is failed with cause (a
// peer could not find the next message after a partial one), so that
// every later send fails, and the write side is closed when the
// transport can close it alone; the caller closes the stream.
func (m *MessageWriter) Abort(cause error) {
	if m.done {
		return
	}
	m.end(cause)
	if cw, ok := m.s.rwc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite() // the peer sees the end at once (on stdio, whose Close leaves standard output open)
	}
}

// end gives the output back, failing the stream with err (when not nil).
func (m *MessageWriter) end(err error) {
	m.done = true
	s := m.s
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.written = s.taken
	if err != nil && s.werr == nil {
		s.werr = err
	}
	s.writing = false
	s.broadcast()
	if len(s.queue) > 0 && s.werr == nil && s.waitMax <= s.written && s.flushing == 0 {
		s.writeQueue(0) // queued behind it with no sender to write them (held replies)
	}
}
