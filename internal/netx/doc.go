// Package netx holds the plumbing of the jsonrpc package's servers that is
// pure net, HTTP and operating system, with nothing of JSON-RPC in it: the
// graceful stop of an HTTP listener that serves the connections the kernel
// had already completed (drain.go, with the Linux system calls in
// drain_linux.go), unix socket listeners that never destroy a file that is
// not their own (unix.go), the client's address behind trusted proxies
// (forwarded.go), and the Origin and Host rules of browser requests with
// CORS (origin.go).
package netx
