package httpx

import (
	"compress/gzip"
	"net/http"
)

// ChunkedBody is a response body written in chunks (a streamed result),
// gzipped when made with gzipped true. Each chunk is flushed to the client
// when written, so that a slow client holds the writer back, compressed or
// not.
type ChunkedBody struct {
	w  http.ResponseWriter
	zw *gzip.Writer // nil: not gzipped
}

// NewChunkedBody returns the body of w, gzipped if asked (the caller sets
// the headers that say so).
func NewChunkedBody(w http.ResponseWriter, gzipped bool) *ChunkedBody {
	b := &ChunkedBody{w: w}
	if gzipped {
		b.zw = GetWriter(w)
	}
	return b
}

// Write writes a chunk. A gzipped chunk is flushed (to the compressor's
// byte boundary, then out of net/http's buffers) so that the client gets
// each chunk when it is written.
func (b *ChunkedBody) Write(p []byte) error {
	if b.zw == nil {
		_, err := b.w.Write(p)
		return err
	}
	if _, err := b.zw.Write(p); err != nil {
		return err
	}
	if err := b.zw.Flush(); err != nil {
		return err
	}
	return http.NewResponseController(b.w).Flush()
}

// Close ends the gzip stream; the handler's return ends the body.
func (b *ChunkedBody) Close() error {
	if b.zw == nil {
		return nil
	}
	err := b.zw.Close()
	b.Abort(nil)
	return err
}

// Abort gives the compressor back (the body cut short, the caller aborts
// the response with http.ErrAbortHandler; or, from Close, ended).
func (b *ChunkedBody) Abort(error) {
	if b.zw != nil {
		PutWriter(b.zw)
		b.zw = nil
	}
}
