// Package conformance checks any JSON-RPC 2.0 server against the
// specification (https://www.jsonrpc.org/specification), the way
// `jrpc conform` does, from a Go test or a program.
//
// The checks send raw bytes and read raw replies: nothing of this module's
// client judges them. Each check has a name ("id/int-2^64+1",
// "notification/no-params", "batch/empty", …), a Level taken from the
// specification's words (MUST, SHOULD, MAY) and the section it is written
// from. What needs no knowledge of the server's methods always runs: ids of
// every type echoed with the same type and value, notifications never
// answered (also in batches), -32700 for invalid JSON and -32600 for valid
// JSON that is not a Request (id null), batches, the shape of every
// response, and over HTTP the status and Content-Type rules (SHOULD and MAY:
// the specification has no HTTP binding). The specification's own examples
// run too; those that call its example methods (subtract, sum, get_data) only
// against a server that has them. Suite.Methods and Suite.Discover add
// result checks of the server's methods; Suite.Hostile adds bad input, after
// which the server must still answer.
//
// Levels follow one rule for each family of checks, from the
// specification's words: a valid JSON text that is not a valid Request
// object (a wrong jsonrpc, method, params or id) MUST get -32600 (§4,
// §5.1), whatever else is wrong with it; every call of a batch MUST get a
// Response (§5 holds inside a batch), while the Array's shape (one Array,
// one Response for each Request) is §6's SHOULD; on a line-framed stream
// nothing on a line may be dropped silently (the "framing/" checks: text
// after a message, two messages on a line, a line that is not JSON then a
// valid one). docs/conform.md has the whole table. A failed check's
// Result.Cause names its reason in words it shares with the other checks
// that fail for the same one, so that a report can group them.
//
// A notification is known to be unanswered without long waits: over HTTP
// the response has no body; on a stream nothing may come within
// Suite.Quiet, and the reply to a request sent behind the notification must
// then be the next message.
//
// One connection serves the run. When the server drops it (or a stdio
// server exits), the check it was answering fails, the check
// "connection/kept" (MUST) says which, and the next check dials again
// (restarting a CommandTarget). Bad input on a stream may close the
// connection without failing anything: a new one is dialled.
//
// In a Go test, one line:
//
//	conformance.Run(t, &conformance.HTTPTarget{URL: srv.URL})
//
// Each failed MUST check is a test error, each failed SHOULD or MAY check
// is logged. Suite.Check returns the Report instead (the CLI prints it and
// writes it as JSON or JUnit XML). Targets: HTTPTarget, WebSocketTarget,
// StreamTarget (TCP, TLS, unix sockets, pipes), CommandTarget (a stdio
// server) and URL; another transport implements Target and Conn.
package conformance
