// Package wire is the JSON-RPC 2.0 wire format, with nothing of the
// transports or the server in it: the strict scanner that checks a message
// and finds its members in one pass (scan.go), the classification of each
// message object as a request, a response or an invalid request
// (envelope.go), the string encoder (encode.go), the reading of a
// response's id from the first bytes of a message too large to be read
// whole (head.go), the pool of message buffers (buf.go), and the record
// of memory that never changes, which decoded strings may share
// (stable.go: MarkStable, Stable). Go values
// become JSON and back in internal/codec, which builds on this package.
//
// The scanner is strict where JSON-RPC needs it: invalid UTF-8, duplicate
// object names, a byte-order mark and nesting deeper than the limit are
// errors. What it accepts is valid JSON, so the decoders trust it.
//
// It imports nothing of this module: the root package (the public types,
// the server and the transports), internal/codec and the internal framing
// build on it.
package wire
