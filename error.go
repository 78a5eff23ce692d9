package jsonrpc

import (
	"encoding/json"
	"strconv"

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
	return &Error{Code: code, Message: wire.Sprintf(format, args...)}
}

// WithData returns a copy of e whose data member is v encoded as JSON. If v
// cannot be encoded, the copy has no data.
func (e *Error) WithData(v any) *Error {
	c := *e
	c.Data, _ = wire.Marshal(v)
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
	c, err := strconv.ParseInt(string(code), 10, 64)
	if err != nil {
		return nil, false
	}
	e.Code = c
	e.Message = string(wire.Unquote(msg[1 : len(msg)-1]))
	return &e, true
}
