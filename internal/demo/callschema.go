package demo

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

// JSONSchema describes the two shapes a tools/call result takes: the
// tool's output (content, structuredContent, isError), or, under MCP
// 2026-07-28, the request for input the tool needs first (resultType
// "input_required"). CallResult encodes itself (MarshalJSON picks the
// shape), so without this its schema would be true and the clients
// generated from the demo's document would lose the type.
func (CallResult) JSONSchema() *openrpc.Schema {
	type output CallResult // the fields, without the methods
	out := inlineSchema(reflect.TypeFor[output](), "CallResult")
	out.Properties["resultType"].Enum = []any{"complete"}
	in := inlineSchema(reflect.TypeFor[jsonrpc.InputRequiredResult](), "InputRequiredResult")
	in.Properties["resultType"].Enum = []any{"input_required"}
	return &openrpc.Schema{OneOf: []*openrpc.Schema{out, in}}
}

// inlineSchema is the schema of t with the definitions it uses written in
// place of their references: the schema stands inside a method's result,
// where a "$defs" reference would resolve against the whole document. t
// must not be recursive (references are inlined 8 levels deep at most).
func inlineSchema(t reflect.Type, title string) *openrpc.Schema {
	s, err := openrpc.SchemaOfType(t)
	if err != nil {
		panic("demo: " + err.Error()) // the demo's own types: a bug
	}
	defs := s.Defs
	s.Defs = nil
	var v any
	var out openrpc.Schema
	convert(s, &v)
	convert(inlineRefs(v, defs, 8), &out)
	out.Title = title
	return &out
}

// convert decodes the JSON of from into to; a failure is a bug.
func convert(from, to any) {
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, to)
	}
	if err != nil {
		panic("demo: " + err.Error())
	}
}

// inlineRefs replaces each {"$ref": "#/$defs/NAME"} in v by the definition.
func inlineRefs(v any, defs map[string]*openrpc.Schema, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && depth > 0 {
			if d := defs[strings.TrimPrefix(ref, "#/$defs/")]; d != nil {
				var dv any
				convert(d, &dv)
				return inlineRefs(dv, defs, depth-1)
			}
		}
		for k, e := range x {
			x[k] = inlineRefs(e, defs, depth)
		}
	case []any:
		for i, e := range x {
			x[i] = inlineRefs(e, defs, depth)
		}
	}
	return v
}
