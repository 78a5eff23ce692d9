package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Mcp-Param-* headers (MCP 2026-07-28, Streamable HTTP): a tool's
// inputSchema may mark a property with "x-mcp-header": NAME, and then a
// tools/call carries the argument's value in the header Mcp-Param-NAME
// too, for intermediaries to route on. A server checks each such header
// against the body, as it checks Mcp-Name: missing, repeated, with
// invalid characters or different, the request is refused (400, -32020).

// ParamHeader is one x-mcp-header annotation of a tool's inputSchema.
type ParamHeader struct {
	Name string   // the NAME of Mcp-Param-NAME
	Path []string // the chain of properties keys leading to the value
	Kind string   // "string", "integer" or "boolean"
}

// headerSchema is what ParamHeadersOf reads of a JSON Schema.
type headerSchema struct {
	Type       json.RawMessage         `json:"type"`
	Header     *string                 `json:"x-mcp-header"`
	Properties map[string]headerSchema `json:"properties"`
}

// ParamHeadersOf returns the x-mcp-header annotations of an inputSchema
// that the revision allows: on properties reached through properties keys
// only, of type string, integer or boolean, named by an HTTP token, unique
// without regard to case. Others are left out, and valid reports whether
// there were none (a client must reject a tool that has one; a server
// does not expect them).
func ParamHeadersOf(schema []byte) (out []ParamHeader, valid bool) {
	var root headerSchema
	if len(schema) == 0 || jsonv2.Unmarshal(schema, &root) != nil {
		return nil, true
	}
	out = allowedHeaders(&root)
	return out, len(out) == countHeaderAnnotations(schema)
}

// countHeaderAnnotations counts the x-mcp-header members anywhere in a
// JSON document.
func countHeaderAnnotations(doc []byte) (n int) {
	if !bytes.Contains(doc, []byte(`x-mcp-header`)) {
		return 0
	}
	d := jsontext.NewDecoder(bytes.NewReader(doc))
	for tok, err := d.ReadToken(); err == nil; tok, err = d.ReadToken() {
		if kind, i := d.StackIndex(d.StackDepth()); kind == '{' && i%2 == 1 && tok.String() == "x-mcp-header" {
			n++ // an object's member name, not a value
		}
	}
	return n
}

// allowedHeaders returns the annotations of root that the revision allows.
func allowedHeaders(root *headerSchema) []ParamHeader {
	var out []ParamHeader
	seen := map[string]bool{}
	var walk func(s *headerSchema, path []string)
	walk = func(s *headerSchema, path []string) {
		for key, p := range s.Properties {
			at := append(path[:len(path):len(path)], key)
			if p.Header != nil {
				var kind string
				_ = jsonv2.Unmarshal(p.Type, &kind)
				lower := strings.ToLower(*p.Header)
				if isToken(*p.Header) && !seen[lower] && (kind == "string" || kind == "integer" || kind == "boolean") {
					seen[lower] = true
					out = append(out, ParamHeader{Name: *p.Header, Path: at, Kind: kind})
				}
			}
			walk(&p, at)
		}
	}
	walk(root, nil)
	return out
}

// isToken reports whether s is an HTTP field-name token (RFC 9110, 1*tchar).
func isToken(s string) bool {
	return s != "" && strings.Trim(s, "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

// ValueAt returns the JSON value at path in arguments; ok is false when
// there is none (or it is null).
func ValueAt(arguments []byte, path []string) (json.RawMessage, bool) {
	v := json.RawMessage(arguments)
	for _, key := range path {
		var obj map[string]json.RawMessage
		if jsonv2.Unmarshal(v, &obj) != nil {
			return nil, false
		}
		if v = obj[key]; v == nil {
			return nil, false
		}
	}
	return v, string(v) != "null"
}

// HeaderText returns a primitive argument value as an Mcp-Param-* header
// carries it before encoding: a string as it is, an integer in decimal,
// a boolean as true or false; ok is false for any other value.
func HeaderText(v json.RawMessage, kind string) (string, bool) {
	switch kind {
	case "string":
		var s string
		return s, jsonv2.Unmarshal(v, &s) == nil
	case "boolean":
		return string(v), string(v) == "true" || string(v) == "false"
	case "integer":
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || f != float64(int64(f)) {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// sameValue compares a decoded header value with the body's: integers
// numerically (42.0 is 42), the rest as text.
func sameValue(header, body, kind string) bool {
	if kind != "integer" {
		return header == body
	}
	h, err1 := strconv.ParseFloat(header, 64)
	b, err2 := strconv.ParseFloat(body, 64)
	return err1 == nil && err2 == nil && h == b
}

// CheckParamHeaders checks the Mcp-Param-* headers a tool's annotations
// call for against the call's arguments: a value in the body needs its
// header, once, matching; no value (absent or null) needs no header, and
// a header there anyway does not match. Headers no annotation names are
// ignored.
func CheckParamHeaders(hd http.Header, annotations []ParamHeader, arguments []byte) *Error {
	for _, a := range annotations {
		name := ParamPrefix + a.Name
		v, present := ValueAt(arguments, a.Path)
		if !present {
			if len(hd.Values(name)) > 0 {
				return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header present but the body has no value at " + strings.Join(a.Path, ".")}
			}
			continue
		}
		want, ok := HeaderText(v, a.Kind)
		if !ok {
			return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: the body value of " + name + " is not of type " + a.Kind}
		}
		if e := HeaderMatches(hd, name, want, a.Kind); e != nil {
			return e
		}
	}
	return nil
}

// ParamSchemas caches the annotations of the tools' inputSchemas, by
// schema (a tool's schema that changes is looked up anew).
type ParamSchemas struct {
	mu    sync.Mutex
	cache map[string][]ParamHeader
}

// Of returns the annotations of schema, a tool's inputSchema.
func (ps *ParamSchemas) Of(schema []byte) []ParamHeader {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if a, ok := ps.cache[string(schema)]; ok {
		return a
	}
	if ps.cache == nil || len(ps.cache) >= 4096 {
		ps.cache = map[string][]ParamHeader{}
	}
	a, _ := ParamHeadersOf(schema)
	ps.cache[string(schema)] = a
	return a
}
