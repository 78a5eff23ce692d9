package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/convention"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/pubsub"
	"github.com/seedhq/jsonrpc/internal/resultstream"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Error codes reserved by the JSON-RPC 2.0 specification.
const (
	CodeParseError     = -32700 // invalid JSON was received
	CodeInvalidRequest = -32600 // the JSON sent is not a valid request object
	CodeMethodNotFound = -32601 // the method does not exist or is not available
	CodeInvalidParams  = -32602 // invalid method parameters
	CodeInternalError  = -32603 // internal JSON-RPC error
)

// Server-defined error codes (the specification reserves -32000..-32099 for them).
const (
	CodeRequestCanceled = -32001 // the connection closed or shut down before the handler finished
	CodeRequestTimeout  = -32002 // the handler ran past Server.HandlerTimeout (go-ethereum's code and message)
)

// Error is a JSON-RPC error object. A handler that returns an *Error (or an
// error wrapping one) sends it to the peer as is; clients return the *Error
// they receive, so errors.As works on both sides.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"` // raw JSON, nil when absent
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithData returns a copy of e whose data member is v encoded as JSON. If v
// cannot be encoded, the copy has no data.
func (e *Error) WithData(v any) *Error {
	c := *e
	c.Data, _ = codec.Marshal(v)
	return &c
}

func (e *Error) Error() string {
	s := "jsonrpc: code " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
	if len(e.Data) > 0 {
		s += " (data: " + string(e.Data) + ")"
	}
	return s
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// parseErrorObject decodes a response's error member strictly: an object
// with an integer code, a string message and optional data.
func parseErrorObject(data []byte) (*Error, bool) {
	if !wire.Valid(data) || data[0] != '{' {
		return nil, false
	}
	var e Error
	var code, msg []byte
	wire.Members(data, func(name, v []byte) {
		switch string(name) {
		case "code":
			code = v
		case "message":
			msg = v
		case "data":
			e.Data = append(json.RawMessage(nil), v...)
		}
	})
	if code == nil || msg == nil || msg[0] != '"' {
		return nil, false
	}
	var err error
	if e.Code, err = strconv.ParseInt(string(code), 10, 64); err != nil {
		return nil, false
	}
	e.Message = string(wire.Unquote(msg[1 : len(msg)-1]))
	return &e, true
}

// The errors a user matches with errors.Is. They are defined here, and the
// internal packages that return them receive them in init (they cannot
// import this package), so an error is the same value wherever it comes
// from.
var (
	// ErrMessageTooLarge matches (errors.Is) every FrameError about a
	// message over the size limit.
	ErrMessageTooLarge = errors.New("jsonrpc: message too large")

	// ErrEventTooLarge matches (errors.Is) the error of an event stream
	// whose event is over the client's message size limit
	// (WithMaxMessageSize, default 10 MiB); it also matches
	// ErrMessageTooLarge. The stream is not read further.
	ErrEventTooLarge = fmt.Errorf("%w: server-sent event over the size limit", ErrMessageTooLarge)

	// ErrRecvInterrupted is returned by a Recv that
	// [RecvInterrupter.InterruptRecv] cut short.
	ErrRecvInterrupted = errors.New("jsonrpc: read interrupted")

	// ErrInvalidResponse matches (errors.Is) the error of a call whose
	// answer breaks the protocol: not JSON, not a response object, an id
	// that matches no call, or an error object without an integer code and
	// a string message.
	ErrInvalidResponse = errors.New("jsonrpc: invalid response")

	// ErrSubscriptionClosed is returned by Sink.Send once the subscription
	// has ended (the error wraps the reason when there is one).
	ErrSubscriptionClosed = errors.New("jsonrpc: subscription closed")

	// ErrSubscriptionOverflow ends a subscription whose buffer overflowed:
	// on the server under OverflowClose, on the client when events arrive
	// faster than they are taken.
	ErrSubscriptionOverflow = errors.New("jsonrpc: subscription buffer overflow")

	// ErrStreamBacklog is the error of a message sent on SessionConn while
	// the session's outbox is full (StreamableHTTPOptions.OutboxSize,
	// OutboxBytes): the client does not read its GET stream. It is not sent.
	ErrStreamBacklog = errors.New("jsonrpc: the session's outbox is full: the client does not read its GET stream (StreamableHTTPOptions.OutboxSize)")

	// ErrProgressNotIncreasing is returned by ReportProgress for a value
	// not above the last one reported; nothing is sent.
	ErrProgressNotIncreasing = errors.New("jsonrpc: progress must increase with each report")

	// ErrRequestStateInvalid and ErrRequestStateExpired are the errors of
	// a requestState that cannot be trusted; the request gets -32602
	// (invalid params) wrapping one of them.
	ErrRequestStateInvalid = errors.New("jsonrpc: requestState is malformed, forged or for another request")
	ErrRequestStateExpired = errors.New("jsonrpc: requestState expired")

	// ErrTooManyInputRounds is the error of a call whose server still asks
	// for input after the rounds WithMaxInputRounds allows.
	ErrTooManyInputRounds = errors.New("jsonrpc: the server still asks for input after the rounds allowed (WithMaxInputRounds)")

	// ErrToolRejected is returned, before sending, by a 2026-07-28
	// tools/call of a tool whose inputSchema has an x-mcp-header annotation
	// the revision forbids (the client leaves such tools out of tools/list).
	ErrToolRejected = errors.New("jsonrpc: MCP tool rejected")
)

func init() {
	sse.ErrEventTooLarge = ErrEventTooLarge
	framing.ErrInterrupted = ErrRecvInterrupted
	resultstream.ErrInvalidResponse = ErrInvalidResponse
	pubsub.ErrClosed, pubsub.ErrOverflow = ErrSubscriptionClosed, ErrSubscriptionOverflow
	sse.ErrBacklog, sse.ErrEnded = ErrStreamBacklog, ErrClosed
	convention.ErrNotIncreasing = ErrProgressNotIncreasing
	mcp.ErrStateInvalid, mcp.ErrStateExpired = ErrRequestStateInvalid, ErrRequestStateExpired
	mcp.ErrTooManyInputRounds, mcp.ErrToolRejected = ErrTooManyInputRounds, ErrToolRejected
	mcp.TaskError = func(e *mcp.Error) error { return (*Error)(e) }
}
