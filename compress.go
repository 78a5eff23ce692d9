package jsonrpc

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Compression of HTTP bodies (gzip, negotiated with Accept-Encoding and
// Content-Encoding) and of WebSocket messages (permessage-deflate, through
// coder/websocket). See docs/performance.md for what it costs.
//
// A server decompresses a gzip request body on its own (any client may
// send one) and compresses a reply of at least Server.HTTPCompressMinSize
// bytes for a client that accepts gzip; a client always accepts gzip
// replies and, with WithCompression, compresses its requests. The message
// size limits count decompressed bytes: a body that inflates past them is
// refused like any message that is too large (a zip bomb costs the
// reader the limit, not the bomb).

// DefaultHTTPCompressMinSize is the default of Server.HTTPCompressMinSize
// and the size from which a client with WithCompression compresses its
// requests. Smaller bodies gain too little for the work.
const DefaultHTTPCompressMinSize = 1 << 10

// gzipLevel trades ratio for speed as servers compressing on the fly do:
// level 1 compresses JSON to about the size level 6 does, several times faster.
const gzipLevel = gzip.BestSpeed

var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzipLevel)
		return w
	}}
	gzipReaders sync.Pool // *gzip.Reader
)

// appendGzip appends the gzip stream of msg to dst.
func appendGzip(dst, msg []byte) []byte {
	buf := bytes.NewBuffer(dst)
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(buf)
	zw.Write(msg) // a bytes.Buffer does not fail
	zw.Close()
	gzipWriters.Put(zw)
	return buf.Bytes()
}

// readEncoded appends the content of body to buf, decompressing it if
// gzipped, reading at most limit+1 bytes of content (declared is the
// body's length, if known).
func readEncoded(buf []byte, body io.Reader, gzipped bool, declared, limit int64) ([]byte, error) {
	if gzipped {
		return readGzip(buf, body, limit)
	}
	return readBody(buf, body, declared, limit)
}

// readGzip appends the decompressed content of the gzip stream r to buf,
// reading no more than limit+1 decompressed bytes: a result longer than
// limit means the content is over it (the caller reports the size).
func readGzip(buf []byte, r io.Reader, limit int64) ([]byte, error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(r)
	} else {
		err = zr.Reset(r)
	}
	if err != nil {
		return buf, fmt.Errorf("gzip: %w", err)
	}
	defer gzipReaders.Put(zr)
	buf, err = readBody(buf, zr, -1, limit)
	if err != nil {
		return buf, fmt.Errorf("gzip: %w", err)
	}
	return buf, nil
}

// errUnsupportedEncoding is a Content-Encoding other than gzip or identity.
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// contentEncoding reports how a body is encoded: gzip (true), identity
// (false), or something else (an error).
func contentEncoding(h http.Header) (gzipped bool, err error) {
	ce := h["Content-Encoding"]
	switch {
	case len(ce) == 0:
		return false, nil
	case len(ce) == 1 && (strings.EqualFold(ce[0], "gzip") || strings.EqualFold(ce[0], "x-gzip")):
		return true, nil
	case len(ce) == 1 && (strings.EqualFold(ce[0], "identity") || ce[0] == ""):
		return false, nil
	}
	return false, fmt.Errorf("%w %s: want gzip or none", errUnsupportedEncoding, strconv.Quote(strings.Join(ce, ", ")))
}

// acceptsGzip reports whether an Accept-Encoding header admits gzip: it
// names gzip, x-gzip or * with a quality above zero.
func acceptsGzip(h http.Header) bool {
	for _, v := range h["Accept-Encoding"] {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && !strings.EqualFold(coding, "x-gzip") && coding != "*" {
				continue
			}
			return !zeroQuality(params)
		}
	}
	return false
}

// zeroQuality reports whether the parameters of an Accept-Encoding
// element say q=0 (not acceptable).
func zeroQuality(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q <= 0
		}
	}
	return false
}

// httpCompressMinSize is the size from which HTTP replies are compressed:
// -1 when never.
func (s *Server) httpCompressMinSize() int {
	switch {
	case s.HTTPCompressMinSize < 0:
		return -1
	case s.HTTPCompressMinSize == 0:
		return DefaultHTTPCompressMinSize
	}
	return s.HTTPCompressMinSize
}

// writeJSON writes reply as the 200 JSON body of a response to a request
// whose header is req (plain HTTP, and Streamable HTTP's JSON answers):
// gzipped when it is large enough and the request accepts gzip.
func (s *Server) writeJSON(w http.ResponseWriter, req http.Header, reply []byte) error {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	if m := s.httpCompressMinSize(); m >= 0 && len(reply) >= m {
		zbuf := wire.GetBuf()
		defer wire.PutBuf(zbuf)
		reply = s.compressReply(h, req, reply, zbuf)
	}
	if len(reply) > 2048 {
		// Smaller replies get their length from net/http, which buffers
		// them; a larger one would otherwise go chunked.
		h.Set("Content-Length", strconv.Itoa(len(reply)))
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(reply)
	return err
}

// compressReply returns the body to send for a reply large enough to
// compress: gzipped into *into when the request (its header req) accepts
// gzip. It sets the headers that say which.
func (s *Server) compressReply(h, req http.Header, reply []byte, into *[]byte) []byte {
	h.Add("Vary", "Accept-Encoding")
	if !acceptsGzip(req) {
		return reply
	}
	*into = appendGzip((*into)[:0], reply)
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.Itoa(len(*into)))
	return *into
}

// gzipEncoding is the header value of a gzip body, and of an
// Accept-Encoding that admits only gzip.
var gzipEncoding = []string{"gzip"}

// WithCompression compresses what the client sends where the transport
// allows it. HTTP: request bodies of DefaultHTTPCompressMinSize bytes or
// more go gzip-compressed (Content-Encoding: gzip), which the server must
// accept (ours does; go-ethereum's and most others do not: leave it off
// for them). WebSocket: the handshake offers permessage-deflate (no context
// takeover), used both ways if the server accepts it (ours does with
// WebSocketOptions.Compression); messages under 512 bytes go uncompressed.
// Without it, HTTP requests go uncompressed and WebSocket messages are never
// compressed. Gzip replies are accepted either way.
func WithCompression() DialOption { return func(c *dialConfig) { c.compress = true } }
