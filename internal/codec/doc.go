// Package codec turns the Go values of params and results into JSON and
// back, with encoding/json/v2's semantics (names matched case-sensitively,
// duplicate names and invalid UTF-8 refused, unknown members refused when
// strict): Marshal, AppendJSON and AppendRequest out, Unmarshal and
// UnmarshalResult in (json.go). Plain Go types go through plans compiled
// once per type by reflection (codec.go), which give v2's results without
// its general machinery; the rest go through v2 itself.
//
// A value of wire.AliasMin bytes or more in memory wire.Stable vouches for
// (a large message's read buffer) is decoded in place: its strings without
// escapes, and a json.RawMessage, share that memory rather than copy it.
//
// It decodes only text internal/wire's scanner has accepted (valid JSON,
// valid UTF-8, no duplicate names) and quotes strings with wire's encoder;
// it knows nothing of messages, transports or the server.
package codec
