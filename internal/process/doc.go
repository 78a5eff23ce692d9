// Package process runs a command whose standard input and output carry
// JSON-RPC (a DialCommand connection in the jsonrpc package), with nothing
// of JSON-RPC in it but a look at the first output: Start returns the
// running command as an io.ReadWriteCloser (process.go) that reaps it as
// soon as it exits, reports a failed exit in place of a plain end of
// input, and on Close ends its input, waits a grace period and kills it if
// it has not exited. The first bytes the command writes are judged against
// the framing its connection reads (sniff.go): the other framing fails the
// connection at once, other text (a banner) is logged.
package process
