package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// node is a JSON value that keeps the order of object members (the
// generated code follows the document's order, so the output is
// deterministic and reads like the document).
type node struct {
	kind  byte // '{', '[', '"', '0' (number), 't', 'f', 'n'
	keys  []string
	vals  map[string]*node
	elems []*node
	text  string // a string's value, a number's literal
}

func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the document")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n := &node{kind: '{', vals: map[string]*node{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				name := k.(string)
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := n.vals[name]; dup {
					return nil, fmt.Errorf("duplicate member %q", name)
				}
				n.keys = append(n.keys, name)
				n.vals[name] = v
			}
			_, err = dec.Token()
			return n, err
		}
		n := &node{kind: '['}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err = dec.Token()
		return n, err
	case string:
		return &node{kind: '"', text: t}, nil
	case json.Number:
		return &node{kind: '0', text: string(t)}, nil
	case bool:
		if t {
			return &node{kind: 't'}, nil
		}
		return &node{kind: 'f'}, nil
	}
	return &node{kind: 'n'}, nil
}

// get returns the member name of an object (nil if absent or not an object).
func (n *node) get(name string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	return n.vals[name]
}

// str returns the string member name, or "".
func (n *node) str(name string) string {
	if v := n.get(name); v != nil && v.kind == '"' {
		return v.text
	}
	return ""
}

// bool returns the boolean member name.
func (n *node) bool(name string) bool {
	v := n.get(name)
	return v != nil && v.kind == 't'
}

// list returns the elements of the array member name.
func (n *node) list(name string) []*node {
	if v := n.get(name); v != nil && v.kind == '[' {
		return v.elems
	}
	return nil
}

// strings returns the string elements of the array member name.
func (n *node) strings(name string) []string {
	var out []string
	for _, e := range n.list(name) {
		if e.kind == '"' {
			out = append(out, e.text)
		}
	}
	return out
}

// pointer resolves a local JSON pointer reference ("#/a/b").
func (n *node) pointer(ref string) *node {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	frag := ref[1:]
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if frag == "" {
		return n
	}
	if !strings.HasPrefix(frag, "/") {
		return nil
	}
	cur := n
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch {
		case cur == nil:
			return nil
		case cur.kind == '{':
			cur = cur.vals[tok]
		case cur.kind == '[':
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.elems) {
				return nil
			}
			cur = cur.elems[i]
		default:
			return nil
		}
	}
	return cur
}

// json writes n as compact JSON (members in document order).
func (n *node) json(b *strings.Builder) {
	switch n.kind {
	case '{':
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeQuoted(b, k)
			b.WriteByte(':')
			n.vals[k].json(b)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.json(b)
		}
		b.WriteByte(']')
	case '"':
		writeQuoted(b, n.text)
	case '0':
		b.WriteString(n.text)
	case 't':
		b.WriteString("true")
	case 'f':
		b.WriteString("false")
	default:
		b.WriteString("null")
	}
}

func (n *node) String() string {
	var b strings.Builder
	n.json(&b)
	return b.String()
}

func writeQuoted(b *strings.Builder, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}

// annotations are schema keywords that change no type: two schemas that
// differ only in them share one generated type.
var annotations = map[string]bool{
	"description": true, "examples": true, "example": true, "$comment": true,
	"summary": true, "default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// Keywords whose value is a schema, a map of schemas or a list of schemas.
var (
	schemaKeywords    = map[string]bool{"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true, "contains": true, "propertyNames": true, "additionalItems": true, "unevaluatedProperties": true, "unevaluatedItems": true}
	schemaMapKeywords = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaListKeyword = map[string]bool{"oneOf": true, "anyOf": true, "allOf": true, "prefixItems": true}
)

// shapeKey is the canonical text of a schema without its annotations
// (members sorted): the identity of an inline type.
func shapeKey(s *node) string {
	var b strings.Builder
	writeShape(&b, s)
	return b.String()
}

func writeShape(b *strings.Builder, s *node) {
	if s.kind != '{' {
		s.json(b)
		return
	}
	keys := slices.Clone(s.keys)
	slices.Sort(keys)
	b.WriteByte('{')
	first := true
	for _, k := range keys {
		if annotations[k] {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeQuoted(b, k)
		b.WriteByte(':')
		v := s.vals[k]
		switch {
		case schemaKeywords[k]:
			writeShape(b, v)
		case schemaMapKeywords[k] && v.kind == '{':
			names := slices.Clone(v.keys)
			slices.Sort(names)
			b.WriteByte('{')
			for i, name := range names {
				if i > 0 {
					b.WriteByte(',')
				}
				writeQuoted(b, name)
				b.WriteByte(':')
				writeShape(b, v.vals[name])
			}
			b.WriteByte('}')
		case schemaListKeyword[k] && v.kind == '[':
			b.WriteByte('[')
			for i, e := range v.elems {
				if i > 0 {
					b.WriteByte(',')
				}
				writeShape(b, e)
			}
			b.WriteByte(']')
		default:
			v.json(b)
		}
	}
	b.WriteByte('}')
}
