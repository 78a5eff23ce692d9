package main

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/seedhq/jsonrpc/openrpc"
)

// sampler builds values that fit JSON schemas: for describe's example
// command lines and mock's generated results. Each value is the schema's
// own const, first enum value, default or first example when it has one,
// else the simplest value of its type within its bounds.
type sampler struct {
	defs map[string]*openrpc.Schema // the document's components/schemas
	all  bool                       // objects get every property, not only the required ones
}

// sample returns a JSON value that fits s.
func (sp sampler) sample(s *openrpc.Schema) json.RawMessage {
	return sp.value(s, 0)
}

func marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

func (sp sampler) value(s *openrpc.Schema, depth int) json.RawMessage {
	switch {
	case s == nil || depth > 8:
		return json.RawMessage("null")
	case s.Ref != "":
		return sp.value(sp.defs[s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]], depth+1)
	}
	if v := given(s); v != nil {
		return v
	}
	if v, ok := sp.alternative(s, depth); ok {
		return v
	}
	return sp.ofType(s, depth)
}

// ofType is the simplest value of the schema's type within its bounds.
func (sp sampler) ofType(s *openrpc.Schema, depth int) json.RawMessage {
	switch typ := schemaType(s); typ {
	case "string":
		return marshal(sampleString(s))
	case "integer", "number":
		return json.RawMessage(sampleNumber(s, typ == "integer"))
	case "boolean":
		return json.RawMessage("true")
	case "array":
		return sp.array(s, depth)
	case "object":
		return sp.object(s, depth)
	}
	return json.RawMessage("null")
}

// given is the value the schema gives itself: its const, first enum
// value, default or first example; nil when it gives none.
func given(s *openrpc.Schema) json.RawMessage {
	switch {
	case s.Const != nil:
		return marshal(*s.Const)
	case len(s.Enum) > 0:
		return marshal(s.Enum[0])
	case len(s.Default) > 0:
		return s.Default
	case len(s.Examples) > 0:
		return marshal(s.Examples[0])
	}
	return nil
}

// alternative is the first of oneOf, anyOf or allOf's schemas with a
// value other than null (or the only one).
func (sp sampler) alternative(s *openrpc.Schema, depth int) (json.RawMessage, bool) {
	for _, alts := range [][]*openrpc.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, alt := range alts {
			if v := sp.value(alt, depth+1); string(v) != "null" || len(alts) == 1 {
				return v, true
			}
		}
	}
	return nil, false
}

// schemaType is the schema's type (the first but null of a list), or the
// one its keywords imply.
func schemaType(s *openrpc.Schema) string {
	for _, t := range s.Types {
		if t != "null" {
			return t
		}
	}
	switch {
	case s.Type != "":
		return s.Type
	case s.Properties != nil:
		return "object"
	case s.Items != nil || s.PrefixItems != nil:
		return "array"
	}
	return ""
}

// array is the prefix items' values, then the items' up to minItems (at
// least one, at most maxItems).
func (sp sampler) array(s *openrpc.Schema, depth int) json.RawMessage {
	var vals []json.RawMessage
	for _, p := range s.PrefixItems {
		vals = append(vals, sp.value(p, depth+1))
	}
	n := len(vals)
	want := max(n, 1)
	if s.MinItems != nil {
		want = max(n, *s.MinItems)
	}
	if s.MaxItems != nil {
		want = min(want, *s.MaxItems)
	}
	for ; n < want && s.Items != nil; n++ {
		vals = append(vals, sp.value(s.Items, depth+1))
	}
	return joinJSON('[', vals, ']')
}

// object has the required properties (every one with all), in name order
// (PropertyOrder is not read from JSON).
func (sp sampler) object(s *openrpc.Schema, depth int) json.RawMessage {
	var members []json.RawMessage
	for _, name := range sortedKeys(s.Properties) {
		if sp.all || slices.Contains(s.Required, name) {
			m := append(marshal(name), ':')
			members = append(members, append(m, sp.value(s.Properties[name], depth+1)...))
		}
	}
	return joinJSON('{', members, '}')
}

// joinJSON joins values with commas between open and close.
func joinJSON(open byte, vals []json.RawMessage, close byte) json.RawMessage {
	b := []byte{open}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v...)
	}
	return append(b, close)
}

func sampleString(s *openrpc.Schema) string {
	var v string
	switch s.Format {
	case "date-time":
		v = "2026-01-02T15:04:05Z"
	case "date":
		v = "2026-01-02"
	case "time":
		v = "15:04:05Z"
	case "email":
		v = "ada@example.com"
	case "uri", "url":
		v = "https://example.com/"
	case "uuid":
		v = "00000000-0000-4000-8000-000000000000"
	case "ipv4":
		v = "192.0.2.1"
	case "ipv6":
		v = "2001:db8::1"
	default:
		v = "text"
	}
	if s.MinLength != nil && len(v) < *s.MinLength {
		v += strings.Repeat("x", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = v[:*s.MaxLength]
	}
	return v
}

func sampleNumber(s *openrpc.Schema, integer bool) string {
	v := 1.0
	switch {
	case s.Minimum != nil:
		v = *s.Minimum
	case s.ExclusiveMinimum != nil:
		v = *s.ExclusiveMinimum + 1
	}
	if s.Maximum != nil && v > *s.Maximum {
		v = *s.Maximum
	}
	if s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum {
		v = *s.ExclusiveMaximum - 1
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		m := *s.MultipleOf
		v = float64(int64(v/m+0.999999)) * m
	}
	if integer {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// exampleArgs returns the PARAMS arguments of a command line that calls m:
// from its first example, else built from its schemas. Named params become
// key=value pairs, positional ones one JSON array.
func exampleArgs(m *openrpc.Method, defs map[string]*openrpc.Schema) []string {
	if len(m.Examples) == 0 && m.ParamsSchema != nil {
		v := sampler{defs: defs}.sample(m.ParamsSchema)
		if k := jsonKind(v); k != "an object" && k != "an array" {
			return nil // any params at all: call it without
		}
		return []string{shellQuote(string(v))}
	}
	ps := exampleParams(m, defs)
	switch {
	case len(ps) == 0:
		return nil
	case m.Variadic || m.ParamStructure == "by-position":
		vals := make([]json.RawMessage, len(ps))
		for i, p := range ps {
			vals[i] = compact(p.value)
		}
		return []string{shellQuote(string(joinJSON('[', vals, ']')))}
	}
	var args []string
	for _, p := range ps {
		args = append(args, shellQuote(p.name+"="+pairValue(p.value)))
	}
	return args
}

// exampleParam is one param of an example command line.
type exampleParam struct {
	name  string
	value json.RawMessage
}

// exampleParams are the params of the method's first example, or else
// sampled values of its required params (all of a variadic's).
func exampleParams(m *openrpc.Method, defs map[string]*openrpc.Schema) []exampleParam {
	var ps []exampleParam
	if len(m.Examples) > 0 {
		for _, p := range m.Examples[0].Params {
			ps = append(ps, exampleParam{p.Name, p.Value})
		}
		return ps
	}
	sp := sampler{defs: defs}
	for _, p := range m.Params {
		if p.Required || m.Variadic {
			ps = append(ps, exampleParam{p.Name, sp.sample(p.Schema)})
		}
	}
	return ps
}

// pairValue is a value as name=value shows it: a string that is not JSON
// itself (nor holds "=") bare, anything else as compact JSON.
func pairValue(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil && str != "" && checkJSON([]byte(str), "") != nil && !strings.Contains(str, "=") {
		return str
	}
	return string(compact(raw))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=_-.,:/@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
