package httpx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Level trades ratio for speed as servers compressing on the fly do:
// level 1 compresses JSON to about the size level 6 does, several times faster.
const Level = gzip.BestSpeed

// Encoding is the header value of a gzip body, and of an Accept-Encoding
// that admits only gzip. Shared: nothing may modify it.
var Encoding = []string{"gzip"}

var (
	writers = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, Level)
		return w
	}}
	readers sync.Pool // *gzip.Reader
)

// GetWriter returns a pooled compressor writing to w; PutWriter gives it back.
func GetWriter(w io.Writer) *gzip.Writer {
	zw := writers.Get().(*gzip.Writer)
	zw.Reset(w)
	return zw
}

// PutWriter gives back a compressor from GetWriter, keeping no reference
// to what it wrote to.
func PutWriter(zw *gzip.Writer) {
	zw.Reset(io.Discard)
	writers.Put(zw)
}

// NewReader returns a pooled decompressor reading the gzip stream r;
// PutReader gives it back.
func NewReader(r io.Reader) (*gzip.Reader, error) {
	zr, _ := readers.Get().(*gzip.Reader)
	if zr == nil {
		return gzip.NewReader(r)
	}
	if err := zr.Reset(r); err != nil {
		readers.Put(zr)
		return nil, err
	}
	return zr, nil
}

// PutReader gives back a decompressor from NewReader.
func PutReader(zr *gzip.Reader) { readers.Put(zr) }

// Append appends the gzip stream of msg to dst.
func Append(dst, msg []byte) []byte {
	buf := bytes.NewBuffer(dst)
	zw := GetWriter(buf)
	zw.Write(msg) // a bytes.Buffer does not fail
	zw.Close()
	PutWriter(zw)
	return buf.Bytes()
}

// ReadEncoded appends the content of body to buf, decompressing it if
// gzipped (errors then start "gzip: "), reading at most limit+1 bytes of
// content (declared is the body's length, if known, or -1). A result longer
// than limit means the content is over it: the caller reports the size.
func ReadEncoded(buf []byte, body io.Reader, gzipped bool, declared, limit int64) ([]byte, error) {
	if !gzipped {
		return ReadBody(buf, body, declared, limit)
	}
	zr, err := NewReader(body)
	if err == nil {
		defer PutReader(zr)
		buf, err = ReadBody(buf, zr, -1, limit)
	}
	if err != nil {
		return buf, fmt.Errorf("gzip: %w", err)
	}
	return buf, nil
}

// ReadBody appends r to buf, to its end or until more than limit bytes
// are read (a result longer than limit: the caller reports the size). A
// declared length sizes the buffer once; otherwise it grows as the body
// arrives.
func ReadBody(buf []byte, r io.Reader, declared, limit int64) ([]byte, error) {
	if declared > 0 {
		buf = slices.Grow(buf, int(min(declared, limit))+1) // +1: room to see EOF without growing
	}
	for {
		if int64(len(buf)) > limit {
			return buf, nil // the caller reports the size
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+int(min(limit+1-int64(len(buf)), math.MaxInt32)))])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// ContentEncoding reports how a body is encoded: gzip (true), identity
// (false), or something else (an error saying so).
func ContentEncoding(h http.Header) (gzipped bool, err error) {
	ce := h["Content-Encoding"]
	switch {
	case len(ce) == 0:
		return false, nil
	case len(ce) == 1 && (strings.EqualFold(ce[0], "gzip") || strings.EqualFold(ce[0], "x-gzip")):
		return true, nil
	case len(ce) == 1 && (strings.EqualFold(ce[0], "identity") || ce[0] == ""):
		return false, nil
	}
	return false, errors.New("unsupported Content-Encoding " + strconv.Quote(strings.Join(ce, ", ")) + ": want gzip or none")
}

// Accepts reports whether an Accept-Encoding header admits gzip: it
// names gzip, x-gzip or * with a quality above zero.
func Accepts(h http.Header) bool {
	for _, v := range h["Accept-Encoding"] {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && !strings.EqualFold(coding, "x-gzip") && coding != "*" {
				continue
			}
			for p := range strings.SplitSeq(params, ";") {
				if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); strings.EqualFold(k, "q") {
					q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
					return !(err == nil && q <= 0) // q=0: not acceptable
				}
			}
			return true
		}
	}
	return false
}
