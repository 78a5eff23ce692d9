package jsonrpc

import (
	"net/http"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Compression: gzip HTTP bodies and permessage-deflate WebSocket messages
// (see Server.HTTPCompressMinSize, WithCompression, docs/performance.md).
// Size limits count decompressed bytes, so a zip bomb costs the limit.

// DefaultHTTPCompressMinSize is the default of Server.HTTPCompressMinSize
// and the size from which a client with WithCompression compresses its
// requests. Smaller bodies gain too little for the work.
const DefaultHTTPCompressMinSize = 1 << 10

// httpCompressMinSize is the size from which HTTP replies are compressed:
// -1 when never.
func (s *Server) httpCompressMinSize() int {
	if s.HTTPCompressMinSize < 0 {
		return -1
	}
	return orDefault(s.HTTPCompressMinSize, DefaultHTTPCompressMinSize)
}

// writeJSON writes reply as the 200 JSON body of a response to a request
// whose header is req (plain HTTP, and Streamable HTTP's JSON answers):
// gzipped when it is large enough and the request accepts gzip.
func (s *Server) writeJSON(w http.ResponseWriter, req http.Header, reply []byte) error {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	gzipped := false
	if m := s.httpCompressMinSize(); m >= 0 && len(reply) >= m {
		h.Add("Vary", "Accept-Encoding")
		if gzipped = httpx.Accepts(req); gzipped {
			zbuf := wire.GetBuf()
			defer wire.PutBuf(zbuf)
			*zbuf = httpx.Append((*zbuf)[:0], reply)
			reply = *zbuf
			h.Set("Content-Encoding", "gzip")
		}
	}
	if gzipped || len(reply) > 2048 {
		// Smaller replies get their length from net/http, which buffers
		// them; a larger one would otherwise go chunked.
		h.Set("Content-Length", strconv.Itoa(len(reply)))
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(reply)
	return err
}

// WithCompression compresses what the client sends where the transport
// allows it. HTTP: request bodies of DefaultHTTPCompressMinSize bytes or
// more go gzip-compressed (Content-Encoding: gzip), which the server must
// accept (ours does; go-ethereum's and most others do not: leave it off
// for them). WebSocket: the handshake offers permessage-deflate (no context
// takeover), used both ways if the server accepts it (ours does with
// WebSocketOptions.Compression); messages under 512 bytes go uncompressed.
// Gzip replies are accepted with or without it.
func WithCompression() DialOption { return func(c *dialConfig) { c.compress = true } }
