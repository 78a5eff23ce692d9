// Package params maps a request's params onto a Go type, analysed once
// (NewDecoder, when a typed method is registered) and applied to every
// request (Decoder.Decode), with nothing of a server in it:
//   - a struct (or pointer to struct) takes a JSON object by field name
//     (json tags honoured, unknown names rejected) or a JSON array by field
//     order; a field is required unless it is a pointer or tagged omitempty
//     or omitzero;
//   - a slice or array type takes the params array itself;
//   - a map type takes the params object itself;
//   - json.RawMessage and any take the params as they are;
//   - any other type (a number, a string...) takes a one-element array.
//
// Params that do not fit give an *Error naming where (a JSON pointer) and
// what is wrong, which the jsonrpc package answers with -32602. Structs
// with a compiled plan (internal/wire) are decoded by it; the rest, and
// the wording of errors, follow encoding/json/v2.
package params
