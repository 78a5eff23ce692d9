package openrpc

import (
	"reflect"

	"github.com/seedhq/jsonrpc/openrpc/schema"
)

// The JSON Schema generator and validator live in package schema; these
// names keep them where OpenRPC users look for them.

// Schema is a JSON Schema (draft 2020-12), as OpenRPC documents hold them.
type Schema = schema.Schema

// SchemaProvider is implemented by a type that gives its own schema (see
// schema.SchemaProvider).
type SchemaProvider = schema.SchemaProvider

// Enumerator is implemented by a type whose values are a fixed set (see
// schema.Enumerator).
type Enumerator = schema.Enumerator

// Generator builds JSON Schemas from Go types (see schema.Generator).
type Generator = schema.Generator

// Field is one JSON member of a struct type (see StructFields).
type Field = schema.Field

// Problem is one way in which a JSON value does not match its schema.
type Problem = schema.Problem

// Validator checks JSON values against a compiled schema (see Compile).
type Validator = schema.Validator

// ParamsValidator checks the params of one method (see CompileMethod).
type ParamsValidator = schema.ParamsValidator

// RefComponents and RefDefs are the two usual prefixes of a shared
// definition's "$ref": the components of an OpenRPC document, and the
// "$defs" of a standalone schema.
const (
	RefComponents = schema.RefComponents
	RefDefs       = schema.RefDefs
)

// MaxProblems bounds the problems one validation reports.
const MaxProblems = schema.MaxProblems

// NewGenerator returns a Generator whose shared definitions are referred
// to with refPrefix (RefComponents or RefDefs).
func NewGenerator(refPrefix string) *Generator { return schema.NewGenerator(refPrefix) }

// SchemaFor returns the schema of T, with its shared definitions under
// "$defs" (see schema.For).
func SchemaFor[T any]() (*Schema, error) { return schema.OfType(reflect.TypeFor[T]()) }

// SchemaOfType is SchemaFor for a reflect.Type.
func SchemaOfType(t reflect.Type) (*Schema, error) { return schema.OfType(t) }

// StructFields lists the JSON members of struct type t (see schema.StructFields).
func StructFields(t reflect.Type) []Field { return schema.StructFields(t) }

// Compile compiles s for validation; references are resolved in defs,
// whose references start with prefix (see schema.Compile).
func Compile(s *Schema, defs map[string]*Schema, prefix string) (*Validator, error) {
	return schema.Compile(s, defs, prefix)
}
