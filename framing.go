package jsonrpc

import (
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// Framing says how messages are cut from a byte stream.
type Framing uint8

const (
	// FramingAuto detects the framing from the first bytes the peer sends:
	// a header name ("Content-Length:" or "Content-Type:", any case, after
	// optional white space) selects FramingHeader, anything else (JSON text
	// of any kind, garbage) FramingLine. The choice waits only as long as
	// the bytes could still begin such a name, and does not depend on how
	// they are cut into reads; a first line that begins like another header
	// field ("X-Name:") and has no newline within 8 KiB is a header section
	// too long, answered and cut as with FramingHeader. Outgoing messages
	// before detection use FramingLine.
	FramingAuto Framing = iota
	// FramingLine is newline-delimited JSON: one message per line ("\r\n"
	// tolerated, blank lines skipped). A line over the size limit is
	// answered with an error as soon as the limit is crossed, then skipped
	// up to its newline (holding none of it); the stream goes on.
	FramingLine
	// FramingHeader is the LSP base protocol: "Content-Length: N" (the name
	// case-insensitive, other headers ignored), a blank line, then N bytes.
	// A body over the size limit, a missing or bad length, a header section
	// over 8 KiB end the stream after an error, since the next message
	// cannot be found reliably; a message cut short by the end of input
	// ends it with io.ErrUnexpectedEOF.
	FramingHeader
)

// String returns "auto", "line" or "header".
func (f Framing) String() string {
	switch f {
	case FramingLine:
		return "line"
	case FramingHeader:
		return "header"
	}
	return "auto"
}

// ParseFraming accepts "auto", "line" (or "ndjson", "newline") and "header" (or "lsp").
func ParseFraming(s string) (Framing, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return FramingAuto, nil
	case "line", "ndjson", "newline":
		return FramingLine, nil
	case "header", "lsp", "content-length":
		return FramingHeader, nil
	}
	return 0, errors.New("jsonrpc: unknown framing " + strconv.Quote(s) + " (want line, lsp or auto)")
}

// FrameError reports a message the channel could not take. See Channel.
type FrameError struct {
	Fatal bool   // the stream cannot continue
	Code  int64  // the JSON-RPC error code sent to the peer
	Msg   string // what was wrong

	limit int64  // a message over the limit: the limit,
	size  int64  // its size (0: unknown, over the limit)
	head  []byte // and its first bytes, to tell which call a response answers
}

func (e *FrameError) Error() string { return "jsonrpc: " + e.Msg }

// Is makes errors.Is(err, ErrMessageTooLarge) work.
func (e *FrameError) Is(target error) bool {
	return target == ErrMessageTooLarge && e.Code == CodeInvalidRequest && strings.HasPrefix(e.Msg, "message too large")
}

// StreamOptions configure NewStream: the way the byte stream's messages are
// cut (the limits are the Conn's that takes the channel: see NewStream).
// The zero value is FramingAuto.
type StreamOptions struct {
	Framing Framing
}

// DefaultWriteTimeout is the default Server.WriteTimeout of a socket: a
// peer that accepts no bytes for this long is disconnected.
const DefaultWriteTimeout = 30 * time.Second

// NewStream returns a Channel that frames messages on rwc, up to
// DefaultMaxMessageSize bytes each, bounding a stalled write on a socket
// (a net.Conn) by DefaultWriteTimeout and on anything else (pipes, stdio)
// not at all, until a [Conn] takes it and applies its limits
// (Server.MaxMessageSize and Server.WriteTimeout; a client's:
// WithMaxMessageSize).
func NewStream(rwc io.ReadWriteCloser, opts StreamOptions) Channel {
	_, socket := rwc.(net.Conn)
	st := stream{framing.New(rwc, framing.Framing(opts.Framing), 0, 0), socket}
	st.setLimits(DefaultMaxMessageSize, 0)
	return st
}

// stream is the Channel of NewStream: the framing engine (internal/framing)
// answering with this package's errors.
type stream struct {
	*framing.Stream
	socket bool // a net.Conn: a stalled write is bounded by default
}

// setLimits sets the size limit and the write timeout: zero means
// DefaultWriteTimeout on a socket and none on anything else, negative none.
func (s stream) setLimits(maxSize int64, writeTimeout time.Duration) {
	if writeTimeout == 0 && s.socket {
		writeTimeout = DefaultWriteTimeout
	}
	s.SetLimits(maxSize, max(writeTimeout, 0))
}

// takenBy applies the limits of the Server of the Conn that takes the
// channel (see limitedChannel), once, before the Conn reads or writes.
func (s stream) takenBy(srv *Server) { s.setLimits(srv.maxMessageSize(), srv.WriteTimeout) }

// Recv gives the engine's errors about a message as *FrameErrors.
func (s stream) Recv() ([]byte, error) {
	msg, err := s.Stream.Recv()
	if fe, ok := err.(*framing.Error); ok {
		return nil, &FrameError{Fatal: fe.Fatal, Code: fe.Code, Msg: fe.Msg, limit: fe.Limit, size: fe.Size, head: fe.Head}
	}
	return msg, err // nil with an error
}

// What a Conn looks for in the channel of NewStream.
var (
	_ RecvInterrupter = stream{}
	_ BufferedChannel = stream{}
	_ QueuedSender    = stream{}
	_ replyHolder     = stream{}
	_ limitedChannel  = stream{}
)
