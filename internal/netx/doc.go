// Package netx holds the byte streams under the jsonrpc package's stream
// connections, with nothing of JSON-RPC in them but a look at a command's
// first output: unix socket listeners that never destroy a file not their
// own, the accept loop with its bound on open connections, a listener's
// TLS configuration, stream URLs and dialling; and commands (DialCommand)
// run as an io.ReadWriteCloser that reaps the process as soon as it exits,
// reports a failed exit in place of a plain end of input, kills it a grace
// period after Close, and judges its first output against the framing its
// connection reads (the other framing fails at once, other text is
// logged). The HTTP helpers are internal/httpx's.
package netx
