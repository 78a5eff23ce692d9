// Package schema generates JSON Schemas (draft 2020-12) from Go types,
// following the rules of the JSON codec jsonrpc uses, and validates JSON
// values against them: a walker compiled once per schema checks the raw
// JSON in one pass and reports each problem with a JSON pointer; schemas
// with keywords it does not check fall back to jsonschema-go's validator.
//
// Package openrpc builds its documents, its params validation and its
// discovery on it, and gives its names again for OpenRPC users.
package schema
