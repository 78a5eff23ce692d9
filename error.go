package jsonrpc

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
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
	return &Error{Code: code, Message: sprintf(format, args...)}
}

// WithData returns a copy of e whose data member is v encoded as JSON. If v
// cannot be encoded, the copy has no data.
func (e *Error) WithData(v any) *Error {
	c := *e
	c.Data, _ = marshal(v)
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

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that the output is always valid.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendError appends the JSON error object e.
func appendError(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	if len(e.Data) > 0 && validJSON(e.Data) {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// appendResponse appends a response with the given id (null when absent) and
// either the raw result or the error.
func appendResponse(b []byte, id ID, result []byte, e *Error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id.raw == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, id.raw...)
	}
	if e != nil {
		b = append(b, `,"error":`...)
		b = appendError(b, e)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, result...)
	}
	return append(b, '}')
}

// parseErrorObject decodes a response's error member strictly: an object
// with an integer code, a string message and optional data.
func parseErrorObject(data []byte) (*Error, bool) {
	if !validJSON(data) || data[0] != '{' {
		return nil, false
	}
	var e Error
	var code, msg []byte
	members(data, func(name, v []byte) {
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
	e.Message = string(unquote(msg[1 : len(msg)-1]))
	return &e, true
}
