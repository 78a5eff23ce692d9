package jsonrpc

import (
	"encoding/json"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// ID is a request id, kept as the exact JSON text the peer sent (a string,
// a number of any size or precision, or null) so that it is echoed
// byte-for-byte. The zero ID is "absent": a request without an id is a
// notification.
type ID struct{ raw string }

// NullID is the id JSON null, used in responses to messages whose id could not be read.
var NullID = ID{raw: "null"}

// Int64ID returns the numeric id n.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{raw: string(wire.AppendString(nil, s))} }

// RawID returns the id whose JSON text is raw. It reports false unless raw is
// a JSON string, number or null.
func RawID(raw []byte) (ID, bool) {
	var s wire.Scanner
	s.Reset(raw, 1)
	v, ok := s.Value()
	if !ok || !s.End() || !wire.IsIDValue(raw[v.Start]) {
		return ID{}, false
	}
	return ID{raw: string(raw[v.Start:v.End])}, true
}

// IsZero reports whether the id is absent (the message is a notification).
func (id ID) IsZero() bool { return id.raw == "" }

// IsNull reports whether the id is JSON null.
func (id ID) IsNull() bool { return id.raw == "null" }

// String returns the JSON text of the id ("" when absent).
func (id ID) String() string { return id.raw }

// MarshalJSON returns the id's JSON text (null when absent).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// UnmarshalJSON keeps the exact text of a string, number or null.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, ok := RawID(b)
	if !ok {
		return &Error{Code: CodeInvalidRequest, Message: "id must be a string, number or null"}
	}
	*id = v
	return nil
}

// key returns a canonical form used to match responses to calls: string ids
// compare by their decoded text, integers by value, other numbers by text.
func (id ID) key() string {
	raw := id.raw
	if raw == "" || raw == "null" {
		return raw
	}
	if raw[0] == '"' {
		return "s" + string(wire.Unquote([]byte(raw[1:len(raw)-1])))
	}
	if canonicalInt(raw) {
		return raw
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return raw
}

// canonicalInt reports whether s is an integer in its shortest decimal form.
func canonicalInt(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
		if s == "0" {
			return false // -0 is 0
		}
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Request is a JSON-RPC request or notification as a handler sees it.
//
// Params holds the raw JSON of the params member (an array or an object), or
// nil when it was omitted. It may share memory with the read buffer: a
// handler must not retain it (or the *Request, which may be reused) after
// returning, or for a [Stream] after the stream ends (copy what it keeps),
// unless its message on a stream was 64 KiB or more: such a message's buffer
// is never reused, and the strings decoded from it share its memory.
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage

	target Handler      // the handler Server.Middleware leads to
	stream **streamSlot // where a returned Stream goes, when the transport writes it in pieces (nil: encoded whole)
}

// IsNotification reports whether the request carries no id (no response is sent).
func (r *Request) IsNotification() bool { return r.ID.IsZero() }

// Response is a JSON-RPC response: exactly one of Result and Error is set.
// A Result of JSON null is kept as the bytes "null".
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *Error
}

var errEmptyBatch = &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}

// idOf returns the envelope's id (absent when the message had none).
func idOf(e *wire.Envelope, data []byte) ID {
	if !e.ID.Present() {
		return ID{}
	}
	return ID{raw: string(e.ID.Of(data))}
}

func appendError(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, e.Message)
	if len(e.Data) > 0 && wire.Valid(e.Data) {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// appendResponse appends a response with the given id (null when absent) and
// either the raw result or the error.
func appendResponse(b []byte, id ID, result []byte, e *Error) []byte {
	if e != nil {
		return append(appendError(appendHead(b, id, `,"error":`), e), '}')
	}
	return append(append(appendHead(b, id, `,"result":`), result...), '}')
}

// appendHead appends a response's start, up to member (its result or error).
func appendHead(b []byte, id ID, member string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id.raw == "" {
		b = append(b, "null"...)
	}
	return append(append(b, id.raw...), member...)
}
