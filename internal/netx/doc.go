// Package netx holds the stream sockets' plumbing of the jsonrpc package's
// servers and clients, pure net and operating system with nothing of
// JSON-RPC in it: unix socket listeners that never destroy a file that is
// not their own (unix.go), the accept loop of stream listeners with its
// bound on open connections (accept.go), a listener's TLS configuration and
// handshake (tls.go), and unix URLs and stream dialling (url.go). The HTTP
// helpers are internal/httpx's.
package netx
