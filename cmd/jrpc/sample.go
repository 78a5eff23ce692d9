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
	if s == nil || depth > 8 {
		return json.RawMessage("null")
	}
	if s.Ref != "" {
		name := s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
		if d := sp.defs[name]; d != nil {
			return sp.value(d, depth+1)
		}
		return json.RawMessage("null")
	}
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
	for _, alts := range [][]*openrpc.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, alt := range alts {
			if v := sp.value(alt, depth+1); string(v) != "null" || len(alts) == 1 {
				return v
			}
		}
	}
	typ := s.Type
	for _, t := range s.Types {
		if t != "null" {
			typ = t
			break
		}
	}
	if typ == "" {
		switch {
		case s.Properties != nil:
			typ = "object"
		case s.Items != nil || s.PrefixItems != nil:
			typ = "array"
		}
	}
	switch typ {
	case "string":
		return marshal(sampleString(s))
	case "integer", "number":
		return json.RawMessage(sampleNumber(s, typ == "integer"))
	case "boolean":
		return json.RawMessage("true")
	case "null":
		return json.RawMessage("null")
	case "array":
		b := []byte{'['}
		n := 0
		for _, p := range s.PrefixItems {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, sp.value(p, depth+1)...)
			n++
		}
		want := max(n, 1)
		if s.MinItems != nil {
			want = max(n, *s.MinItems)
		}
		if s.MaxItems != nil {
			want = min(want, *s.MaxItems)
		}
		for ; n < want && s.Items != nil; n++ {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, sp.value(s.Items, depth+1)...)
		}
		return append(b, ']')
	case "object":
		b := []byte{'{'}
		n := 0
		for _, name := range sortedKeys(s.Properties) { // PropertyOrder is not read from JSON
			if !sp.all && !slices.Contains(s.Required, name) {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, marshal(name)...)
			b = append(b, ':')
			b = append(b, sp.value(s.Properties[name], depth+1)...)
			n++
		}
		return append(b, '}')
	}
	return json.RawMessage("null")
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
	type param struct {
		name  string
		value json.RawMessage
	}
	var ps []param
	if len(m.Examples) > 0 {
		for _, p := range m.Examples[0].Params {
			ps = append(ps, param{p.Name, p.Value})
		}
	} else {
		sp := sampler{defs: defs}
		if m.ParamsSchema != nil {
			v := sp.sample(m.ParamsSchema)
			if k := jsonKind(v); k != "an object" && k != "an array" {
				return nil // any params at all: call it without
			}
			return []string{shellQuote(string(v))}
		}
		for _, p := range m.Params {
			if p.Required || m.Variadic {
				ps = append(ps, param{p.Name, sp.sample(p.Schema)})
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	if m.Variadic || m.ParamStructure == "by-position" {
		b := []byte{'['}
		for i, p := range ps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, compact(p.value)...)
		}
		return []string{shellQuote(string(append(b, ']')))}
	}
	var args []string
	for _, p := range ps {
		v := string(compact(p.value))
		// A string that is not JSON itself can go bare: name=text.
		var str string
		if json.Unmarshal(p.value, &str) == nil && str != "" && checkJSON([]byte(str), "") != nil && !strings.Contains(str, "=") {
			v = str
		}
		args = append(args, shellQuote(p.name+"="+v))
	}
	return args
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789=_-.,:/@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
