// Package netx holds the byte streams under the jsonrpc package's stream
// connections, pure net and operating system with nothing of JSON-RPC in
// it but a look at a command's first output:
//
//   - sockets: unix socket listeners that never destroy a file that is not
//     their own (unix.go), the accept loop of stream listeners with its
//     bound on open connections (accept.go), a listener's TLS
//     configuration and handshake (tls.go), and unix URLs and stream
//     dialling (url.go);
//   - commands (DialCommand): StartCommand returns the running command as
//     an io.ReadWriteCloser (process.go) that reaps it as soon as it exits,
//     reports a failed exit in place of a plain end of input, and on Close
//     ends its input, waits a grace period and kills it if it has not
//     exited. The first bytes the command writes are judged against the
//     framing its connection reads (sniff.go): the other framing fails the
//     connection at once, other text (a banner) is logged.
//
// The HTTP helpers are internal/httpx's.
package netx
