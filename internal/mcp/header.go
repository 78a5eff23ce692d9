package mcp

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// The HTTP headers of Streamable HTTP that carry MCP's values.
const (
	SessionHeader = "Mcp-Session-Id"
	VersionHeader = "Mcp-Protocol-Version"
	MethodHeader  = "Mcp-Method"
	NameHeader    = "Mcp-Name"
	ParamPrefix   = "Mcp-Param-" // followed by the NAME of an x-mcp-header annotation
)

// HeaderMatches checks that header name is present, made of visible ASCII
// (after decoding MCP's base64 sentinel, =?base64?…?=), and equal to want:
// as a number when kind is "integer" (42.0 is 42), else as text.
func HeaderMatches(hd http.Header, name, want, kind string) *Error {
	vals := hd.Values(name)
	if len(vals) != 1 {
		what := "missing"
		if len(vals) > 1 {
			what = "repeated"
		}
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header " + what}
	}
	got, ok := DecodeHeaderValue(vals[0])
	if !ok {
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header has invalid characters or encoding"}
	}
	if !sameValue(got, want, kind) {
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header value " + strconv.Quote(got) + " does not match body value " + strconv.Quote(want)}
	}
	return nil
}

// DecodeHeaderValue decodes an Mcp-Name (or Mcp-Param-*) value: plain
// visible ASCII, space and tab, or =?base64?…?= holding UTF-8.
func DecodeHeaderValue(v string) (string, bool) {
	if !visibleASCII(v, ' ', true) {
		return "", false
	}
	if b64, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b64, ok = strings.CutSuffix(b64, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(b64)
			return string(b), err == nil
		}
	}
	return v, true
}

// EncodeHeaderValue returns s as an MCP request header value (Mcp-Name,
// Mcp-Param-*): as it is when it is plain visible ASCII without leading or
// trailing white space, else base64 in MCP's sentinel, =?base64?…?=.
func EncodeHeaderValue(s string) string {
	if s == strings.TrimSpace(s) && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) && visibleASCII(s, ' ', false) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// IsHeaderValue reports whether v can be sent as it is in a header that
// names a revision (MCP-Protocol-Version): visible ASCII, no space.
func IsHeaderValue(v string) bool { return visibleASCII(v, '!', false) }

// visibleASCII reports whether every byte of s is from lo to '~', or a
// tab where tab allows one.
func visibleASCII(s string, lo byte, tab bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < lo || c > '~') && !(tab && c == '\t') {
			return false
		}
	}
	return true
}
