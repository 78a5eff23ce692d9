package mcp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Error is a JSON-RPC error object a rule answers a request with. Its
// fields are those of the root package's Error (a pointer converts).
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"` // raw JSON, nil when absent
}

func (e *Error) Error() string { return e.Message }

// JSON-RPC error codes the rules answer with: the spec's, and those of
// MCP's stateless revision (its -32020 to -32099 range).
const (
	CodeInvalidParams              = -32602
	CodeMethodNotFound             = -32601
	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// Revisions: the first of the stateless era, the last of the session era.
const (
	Version2026 = "2026-07-28"
	Version2025 = "2025-11-25"
)

// Keys of MCP's per-request _meta.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
)

// IsStatelessVersion reports whether an MCP revision is of the stateless
// era: revisions are dates, and the era begins with Version2026.
func IsStatelessVersion(v string) bool {
	return len(v) == len(Version2026) && v[0] >= '0' && v[0] <= '9' && v >= Version2026
}

// Params is what the transport reads of a request's params: the _meta
// and the fields mirrored in HTTP headers. Meta, Arguments and the strings
// (without escapes) alias the params; absent, they are nil and "" (null too).
type Params struct {
	Name, URI, TaskID string // TaskID: tasks/get, tasks/update, tasks/cancel (the Tasks extension)
	Meta              []byte // the _meta object
	Arguments         []byte
	InputResponses    map[string]json.RawMessage
	RequestState      string
}

// ParseParams reads params, valid JSON (scanned), without decoding what
// it does not look at; ok is false when they are not an object or a
// member read has the wrong type (a string, an object, or null).
func ParseParams(params []byte) (p Params, ok bool) {
	params = bytes.TrimLeft(params, " \t\r\n")
	if len(params) == 0 {
		return p, true
	}
	ok = params[0] == '{'
	wire.Members(params, func(name, v []byte) {
		switch string(name) {
		case "name":
			p.Name = jsonString(ofKind(v, '"', &ok))
		case "uri":
			p.URI = jsonString(ofKind(v, '"', &ok))
		case "taskId":
			p.TaskID = jsonString(ofKind(v, '"', &ok))
		case "requestState":
			p.RequestState = jsonString(ofKind(v, '"', &ok))
		case "_meta":
			p.Meta = ofKind(v, '{', &ok)
		case "arguments":
			p.Arguments = v
		case "inputResponses":
			if raw := ofKind(v, '{', &ok); raw != nil {
				var answers map[string]json.RawMessage
				ok = ok && jsonv2.Unmarshal(raw, &answers) == nil
				p.InputResponses = answers
			}
		}
	})
	return p, ok
}

// ofKind returns v when it begins with first ('"' a string, '{' an
// object), else nil; a value of another type than null clears ok.
func ofKind(v []byte, first byte, ok *bool) []byte {
	if len(v) > 0 && v[0] == first {
		return v
	}
	*ok = *ok && string(v) == "null"
	return nil
}

// Meta is the _meta of a request of a stateless revision, with what of
// the request a requestState is bound to (the root's MCPMeta is made of it).
type Meta struct {
	ProtocolVersion    string
	ClientInfo         json.RawMessage
	ClientCapabilities json.RawMessage
	LogLevel           string
	Raw                json.RawMessage // the whole _meta object
	InputResponses     map[string]json.RawMessage
	RequestState       string
	Method             string // the request's method
	Target             string // params.name or params.uri
	Arguments          []byte // params.arguments, compacted
}

// RequestMeta returns the request's MCP _meta; present is false when _meta does
// not name a protocol version (a session-era request). It holds copies (m
// outlives the params) or, with alias, the params' own memory where it is
// compact already (the params then never change).
func (p *Params) RequestMeta(method string, alias bool) (m Meta, present bool) {
	wire.Members(p.Meta, func(name, _ []byte) { present = present || string(name) == MetaProtocolVersion })
	if !present {
		return m, false
	}
	m.Raw, m.Arguments = p.Meta[:len(p.Meta):len(p.Meta)], p.Arguments[:len(p.Arguments):len(p.Arguments)]
	if !alias || bytes.ContainsAny(p.Meta, " \t\r\n") || bytes.ContainsAny(p.Arguments, " \t\r\n") {
		buf := appendCompact(make([]byte, 0, len(p.Meta)+len(p.Arguments)), p.Meta) // one copy for both
		m.Raw = buf[:len(buf):len(buf)]
		if buf = appendCompact(buf, p.Arguments); len(p.Arguments) > 0 {
			m.Arguments = buf[len(m.Raw):]
		}
	}
	wire.Members(m.Raw, func(name, v []byte) {
		switch string(name) {
		case MetaProtocolVersion:
			m.ProtocolVersion = jsonString(v)
		case MetaLogLevel:
			m.LogLevel = jsonString(v)
		case MetaClientInfo:
			m.ClientInfo = v
		case MetaClientCapabilities:
			m.ClientCapabilities = v
		}
	})
	m.InputResponses, m.RequestState, m.Method, m.Target = p.InputResponses, p.RequestState, method, p.Name+p.URI
	if !alias {
		m.RequestState, m.Target = strings.Clone(m.RequestState), strings.Clone(m.Target)
	}
	return m, true
}

// jsonString returns the string a JSON value decodes to ("" for a value
// that is no string), aliasing raw when it has no escapes. The value is
// valid JSON (params were scanned). MCP's revisions and log levels are interned.
func jsonString(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	return intern(wire.Unquote(raw[1:len(raw)-1]), knownStrings[:])
}

// intern returns b as a string: one of known when b is among them, else
// b's memory as a string (b never changes).
func intern(b []byte, known []string) string {
	for _, k := range known {
		if string(b) == k {
			return k
		}
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// knownStrings are the values of _meta's protocol version and log level
// that jsonString returns without allocating.
var knownStrings = [...]string{Version2026, Version2025, "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// Check validates a stateless request's _meta: a revision the server
// speaks (supported; else -32022 naming supported, then also) and the
// required fields (-32602).
func (m *Meta) Check(supported []string, also []string) *Error {
	if m.ProtocolVersion == "" {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaProtocolVersion + " must be a protocol version"}
	}
	if !slices.Contains(supported, m.ProtocolVersion) {
		return UnsupportedVersion(m.ProtocolVersion, supported, also)
	}
	if len(m.ClientCapabilities) == 0 || m.ClientCapabilities[0] != '{' {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaClientCapabilities + " is required (an object)"}
	}
	return nil
}

// HasCapability reports whether capabilities (a JSON object) declare
// capability name as an object.
func HasCapability(capabilities []byte, name string) (has bool) {
	wire.Members(capabilities, func(k, v []byte) { has = has || string(k) == name && len(v) > 0 && v[0] == '{' })
	return has
}

// UnsupportedVersion is MCP's UnsupportedProtocolVersionError: the
// supported revisions are the stateless ones, then the session era's.
func UnsupportedVersion(requested string, supported, also []string) *Error {
	all := append(slices.Clone(supported), also...)
	data, _ := codec.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{all, requested})
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
}

// appendCompact appends raw, valid JSON, without insignificant white space.
func appendCompact(b, raw []byte) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return append(b, raw...)
	}
	buf := bytes.NewBuffer(b)
	if json.Compact(buf, raw) != nil {
		return append(b, raw...)
	}
	return buf.Bytes()
}
