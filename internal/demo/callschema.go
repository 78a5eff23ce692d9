package demo

import (
	"bytes"
	"encoding/json"
	"reflect"

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
// where a "$defs" reference would resolve against the whole document. It
// panics (a bug in the demo's types) when t is recursive, or a reference
// has members besides "$ref".
func inlineSchema(t reflect.Type, title string) *openrpc.Schema {
	s, err := openrpc.SchemaOfType(t)
	if err != nil {
		panic("demo: " + err.Error())
	}
	defs := s.Defs
	s.Defs, s.Title = nil, title
	b, err := json.Marshal(s)
	for depth := 0; bytes.Contains(b, []byte(openrpc.RefDefs)) && depth < 8; depth++ {
		for name, d := range defs {
			db, _ := json.Marshal(d)
			b = bytes.ReplaceAll(b, []byte(`{"$ref":"`+openrpc.RefDefs+name+`"}`), db)
		}
	}
	var out openrpc.Schema
	if err != nil || json.Unmarshal(b, &out) != nil || bytes.Contains(b, []byte(openrpc.RefDefs)) {
		panic("demo: the schema of " + title + " cannot be inlined")
	}
	return &out
}
