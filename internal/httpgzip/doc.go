// Package httpgzip is the gzip compression of HTTP bodies, with nothing of
// JSON-RPC in it: pooled compressors and decompressors, the negotiation
// (Content-Encoding of a body, Accept-Encoding of a client), the reading of
// a body under a limit on its decompressed size (a zip bomb costs the
// reader the limit, not the bomb), and a response body compressed and
// flushed chunk by chunk.
//
// It imports nothing of this module; the root package's HTTP transports
// (compress.go, http.go, stream.go, calliter.go) build on it.
package httpgzip
