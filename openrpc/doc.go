// Package openrpc adds discovery and params validation to a jsonrpc.Mux,
// both generated from the Go types of the methods registered with
// jsonrpc.Register: no schema is written by hand.
//
// # Discovery
//
// One line serves rpc.discover, which returns an OpenRPC 1.3.2 document
// (https://spec.open-rpc.org) listing every method of the mux:
//
//	openrpc.Register(mux, openrpc.Info{Title: "calc", Version: "1.0.0"})
//
// Each method has its summary, description, tags, errors, examples and
// deprecation from the jsonrpc.MethodDoc given at registration; its params
// as content descriptors (a struct's fields, in positional order, with
// their required flags), its paramStructure (by-name, by-position or
// either, as jsonrpc.Register accepts them) and its result. Named struct
// types are shared in components/schemas and referenced with "$ref", which
// also describes recursive types. Document builds the same document without
// serving it. Params that content descriptors cannot describe use two
// extensions: "x-variadic" (a Go slice: any number of positional params of
// one schema) and "x-params-schema" (a Go map, json.RawMessage or any: the
// schema of the whole params value). The subscribe method of a
// jsonrpc.Subscriptions carries "x-subscription" (Subscription): the
// unsubscribe and notification methods and each kind's params and event
// schemas, which OpenRPC itself cannot express (open-rpc/spec#381).
//
// # Schemas
//
// Generator maps Go types to JSON Schemas following the JSON codec's rules
// (see its documentation for the table); a field's jsonschema tag adds a
// description or constraints:
//
//	type Params struct {
//		Name  string   `json:"name" jsonschema:"The user's name."`
//		Size  string   `json:"size,omitempty" jsonschema:"enum=S|M|L"`
//		Level int      `json:"level,omitzero" jsonschema:"description=Level, from 1 to 5.,minimum=1,maximum=5"`
//		Tags  []string `json:"tags,omitempty" jsonschema:"maxItems=8"`
//	}
//
// A type can give its enum values (Enumerator) or its whole schema
// (SchemaProvider). SchemaFor returns a standalone schema with "$defs", as
// an MCP tool's inputSchema needs.
//
// # Validation
//
// Validate is a middleware that checks params against the method's schema
// before the handler runs, and answers -32602 listing every problem with
// its JSON pointer:
//
//	{"code":-32602,"message":"invalid params: /minuend: expected number, got string",
//	 "data":[{"path":"/minuend","problem":"expected number, got string"}]}
//
// Params by position are checked by index against the params in order. The
// validator of a method is compiled once, on first use, and walks the raw
// params bytes without decoding them or allocating. Compile and
// Doc.CheckParams give the same checks for any schema or any document (a
// client can check params before it sends them).
//
// The validator never accepts what a schema forbids: it answers every test
// of the official JSON Schema Test Suite (draft 2020-12) right, except those
// that need remote schemas, which it does not load. Numbers are compared as
// the decimals they are written as (a maximum of 2^53 refuses 2^53+1; 1.0
// equals 1 in enum, const and uniqueItems); objects and arrays in enum and
// const are compared by value. Every assertion and applicator keyword is
// checked by the walker except unevaluatedProperties, unevaluatedItems and
// dynamic or non-local references: a schema that uses those is validated
// by github.com/google/jsonschema-go instead (about 15 times slower, and it
// allocates), with the same problem shape.
//
// # Reading documents
//
// ParseDocument decodes a document fetched from rpc.discover; Method.Signature
// renders a method on one line (subtract(minuend number, subtrahend number)
// number) and Doc.Describe in full.
//
// # Not supported
//
// Descriptions from doc comments (Go keeps no comments at run time: use the
// jsonschema tag); time.Duration (it has no default JSON representation);
// func, chan and complex types (their fields get the true schema and
// Generator.Err reports them); types with custom JSON methods without a
// JSONSchema method (the true schema, since their encoding is unknown);
// map keys other than strings, integers and text marshalers; generic type
// names are kept but sanitised for components. Formats other than
// date-time are not asserted (in draft 2020-12 they are annotations);
// remote references are not loaded (Compile fails).
package openrpc
