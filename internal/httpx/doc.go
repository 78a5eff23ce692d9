// Package httpx holds the HTTP helpers of the jsonrpc package's transports,
// with nothing of JSON-RPC in them:
//
//   - HTTP as a message transport, one message per POST: the server's
//     checks of a POST (method 405, Content-Type and Content-Encoding 415,
//     size 413 from Content-Length or as a chunked or compressed body passes
//     the limit, the body's read deadline 408; server.go) and the client's
//     reading of the reply (the size limit, an empty body where a reply was
//     due, the Content-Type, the start of a body sent with an error status,
//     draining what is left for keep-alive; client.go);
//   - gzip of bodies: pooled compressors and decompressors, Content-Encoding
//     and Accept-Encoding, reading under a limit on the decompressed size (a
//     zip bomb costs the reader the limit, not the bomb), a response body
//     compressed and flushed chunk by chunk (gzip.go, body.go);
//   - the Origin and Host rules of browser requests, one function for HTTP,
//     Streamable HTTP and WebSocket, with CORS (origin.go), and the client's
//     address behind trusted proxies (forwarded.go);
//   - an HTTP listener's http.Server and root routes (health, draining,
//     extra handlers, the bound on requests in flight; httpserver.go) and its
//     graceful stop, which serves the connections the kernel had already
//     completed (drain.go, with the Linux system calls in drain_linux.go).
//
// The jsonrpc package keeps the public types (HTTPClient, HTTPError) and
// answers what needs JSON-RPC (the 413's log line, the 429 body).
package httpx
