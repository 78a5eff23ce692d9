// Package wire is the JSON-RPC 2.0 wire format, with nothing of the
// transports or the server in it: the strict scanner that checks a message
// and finds its members in one pass (scan.go), the classification of each
// message object as a request, a response or an invalid request
// (envelope.go), the hand-written encoders of requests (encode.go), and the
// JSON codec of params and results (json.go) with its compiled plans for
// plain Go types (codec.go), and the reading of a response's id from the
// first bytes of a message too large to be read whole (head.go).
//
// The scanner is strict where JSON-RPC needs it: invalid UTF-8, duplicate
// object names, a byte-order mark and nesting deeper than the limit are
// errors. What it accepts is valid JSON, so the decoders trust it.
//
// It imports nothing of this module: the root package (the public types,
// the server and the transports) and the internal framing build on it.
package wire
