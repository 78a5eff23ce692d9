package jsonrpc

import (
	"encoding/json"
	"strconv"
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
func StringID(s string) ID { return ID{raw: string(appendString(nil, s))} }

// RawID returns the id whose JSON text is raw. It reports false unless raw is
// a JSON string, number or null.
func RawID(raw []byte) (ID, bool) {
	var s scanner
	s.reset(raw, 1)
	v, ok := s.value()
	if !ok || !s.end() || !isIDValue(raw[v.start]) {
		return ID{}, false
	}
	return ID{raw: string(raw[v.start:v.end])}, true
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
		return "s" + string(unquote([]byte(raw[1:len(raw)-1])))
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

func isIDValue(c byte) bool { return c == '"' || c == 'n' || c == '-' || (c >= '0' && c <= '9') }

// Request is a JSON-RPC request or notification as a handler sees it.
//
// Params holds the raw JSON of the params member (an array or an object), or
// nil when it was omitted. It may share memory with the read buffer: a
// handler must not retain it after returning (copy it to keep it).
type Request struct {
	ID     ID
	Method string
	Params json.RawMessage

	target Handler // the handler Server.Middleware leads to
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

// kind classifies one element of an incoming message.
type kind uint8

const (
	kindInvalid     kind = iota // not a valid request or response: answer with err
	kindRequest                 // a call or a notification
	kindResponse                // a response to one of our calls
	kindBadResponse             // looked like a response but was malformed
)

// envelope is one scanned message object: spans of its members, plus what was wrong with it.
type envelope struct {
	kind    kind
	id      span
	method  span
	params  span
	result  span
	errObj  span
	jsonrpc span

	methodEscaped bool
	paramsDup     bool // params holds a duplicate object name
	err           *Error
}

// parsedMessage is the result of scanning one message: a single envelope or a batch.
type parsedMessage struct {
	batch bool
	elems []envelope
	// limit, when positive, bounds the elements of a batch recorded in
	// elems: past limit+1 the rest are only scanned (and counted in n), so a
	// huge batch costs no memory per element before it is rejected.
	limit int
	n     int // elements of the batch
}

// parseMessage scans data strictly. A syntax error, bad UTF-8 or excessive
// nesting returns an error for the whole message; everything else is
// reported per element in the envelopes. A byte-order mark before the
// text is a syntax error like any other byte that cannot begin JSON (RFC
// 8259 §8.1 forbids sending one), named as such, on every transport alike.
func (s *scanner) parseMessage(data []byte, maxDepth int, m *parsedMessage) error {
	s.reset(data, maxDepth)
	if len(data) >= len(bom) && string(data[:len(bom)]) == bom {
		s.fail(errBOM)
		return s.err
	}
	m.batch, m.elems, m.n = false, m.elems[:0], 0
	switch s.peek() {
	case '[':
		m.batch = true
		ok := s.array(func() bool {
			m.n++
			if m.limit > 0 && len(m.elems) > m.limit {
				_, ok := s.value()
				return ok
			}
			if s.peek() == '{' {
				m.elems = append(m.elems, envelope{})
				return s.envelope(&m.elems[len(m.elems)-1])
			}
			_, ok := s.value()
			m.elems = append(m.elems, envelope{kind: kindInvalid, err: errNotObject})
			return ok
		})
		if !ok || !s.end() {
			return s.err
		}
		return s.depthErr()
	case '{':
		m.elems = append(m.elems, envelope{})
		if !s.envelope(&m.elems[0]) || !s.end() {
			return s.err
		}
		return s.depthErr()
	default:
		if _, ok := s.value(); !ok || !s.end() {
			return s.err
		}
		m.elems = append(m.elems, envelope{kind: kindInvalid, err: errNotObject})
		return s.depthErr()
	}
}

var (
	errNotObject  = &Error{Code: CodeInvalidRequest, Message: "invalid request: not a JSON object"}
	errEmptyBatch = &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}
)

// envSink records the members of an envelope while the scanner reads it.
type envSink struct {
	e       *envelope
	unknown span // the first unknown member name
	dup     bool // a duplicate name outside params
	idDup   bool // "id" given more than once: no id can be trusted
	last    int  // s.dups after the previous member
}

func (k *envSink) member(s *scanner, n name, v span, dupsBefore int) {
	if dupsBefore > k.last {
		k.dup = true // a repeated member name of the envelope itself
	}
	k.last = s.dups
	e := k.e
	var slot *span
	switch string(s.decodedName(n)) {
	case "jsonrpc":
		slot = &e.jsonrpc
	case "method":
		slot = &e.method
	case "params":
		e.params = v
		e.paramsDup = s.dups > dupsBefore
		return
	case "id":
		slot = &e.id
		k.idDup = k.idDup || e.id.present()
	case "result":
		slot = &e.result
	case "error":
		slot = &e.errObj
	default:
		if !k.unknown.present() {
			k.unknown = n.span
		}
	}
	if slot != nil {
		*slot = v
	}
	if s.dups > dupsBefore {
		k.dup = true
	}
}

// envelope scans the object at s.pos into e and classifies it.
func (s *scanner) envelope(e *envelope) bool {
	sink := envSink{e: e, last: s.dups}
	if !s.object(&sink) {
		return false
	}
	if sink.idDup {
		e.id = span{} // answered with id null, like any id that cannot be read
	}
	e.classify(s.data, sink.unknown, sink.dup)
	return true
}

func (e *envelope) classify(data []byte, unknown span, dup bool) {
	idOK := !e.id.present() || isIDValue(data[e.id.start])
	invalid := func(msg string) {
		e.kind = kindInvalid
		e.err = &Error{Code: CodeInvalidRequest, Message: "invalid request: " + msg}
		if !idOK {
			e.id = span{}
		}
	}
	isResponse := !e.method.present() && (e.result.present() || e.errObj.present())
	switch {
	case dup:
		invalid("duplicate member name")
	case !e.jsonrpc.present():
		invalid(`missing "jsonrpc":"2.0"`)
	case !isVersion2(e.jsonrpc.of(data)):
		invalid(`"jsonrpc" must be exactly "2.0"`)
	case unknown.present():
		invalid("unknown member " + strconv.Quote(string(unknown.of(data))))
	case !idOK:
		invalid("id must be a string, number or null")
	case isResponse:
		e.kind = kindResponse
		if !e.id.present() || (e.result.present() && e.errObj.present()) || e.params.present() {
			e.kind = kindBadResponse
		}
	case !e.method.present():
		invalid(`missing "method"`)
	case data[e.method.start] != '"':
		invalid(`"method" must be a string`)
	case e.result.present() || e.errObj.present():
		invalid(`a request must not have "result" or "error"`)
	case e.params.present() && data[e.params.start] != '[' && data[e.params.start] != '{':
		invalid(`"params" must be an array or an object`)
	default:
		e.kind = kindRequest
		e.methodEscaped = false
		for _, c := range data[e.method.start+1 : e.method.end-1] {
			if c == '\\' {
				e.methodEscaped = true
				break
			}
		}
	}
}

func isVersion2(v []byte) bool {
	return string(v) == `"2.0"` || (v[0] == '"' && string(unquote(v[1:len(v)-1])) == "2.0")
}

// methodName returns the decoded method name bytes.
func (e *envelope) methodName(data []byte) []byte {
	b := data[e.method.start+1 : e.method.end-1]
	if e.methodEscaped {
		return unquote(b)
	}
	return b
}

// idOf returns the envelope's id (absent when the message had none).
func (e *envelope) idOf(data []byte) ID {
	if !e.id.present() {
		return ID{}
	}
	return ID{raw: string(e.id.of(data))}
}
