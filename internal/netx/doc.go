// Package netx holds the plumbing of the jsonrpc package's servers that is
// pure net, HTTP and operating system, with nothing of JSON-RPC in it: the
// graceful stop of an HTTP listener that serves the connections the kernel
// had already completed (drain.go, with the Linux system calls in
// drain_linux.go), unix socket listeners that never destroy a file that is
// not their own (unix.go), the client's address behind trusted proxies
// (forwarded.go), the Origin and Host rules of browser requests with
// CORS (origin.go), the accept loop of stream listeners with its bound on
// open connections (accept.go), a listener's TLS configuration and
// handshake (tls.go), an HTTP listener's http.Server and root routes
// (health, draining, extra handlers, the bound on requests in flight:
// httpserver.go), and unix URLs and stream dialling (url.go).
package netx
