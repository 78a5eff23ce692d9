package streamable

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// StatusByError is the ResponseWriter of an answer of MCP's stateless
// revision: a JSON answer that is a single error response gets the HTTP
// status its error asks (mcp.HTTPStatus: 404 for an unknown method, 400
// for the revision's own errors); 200 otherwise. A 200 written before the
// body is held until the body says which (the body may be gzipped).
type StatusByError struct {
	http.ResponseWriter
	wrote bool
}

func (w *StatusByError) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *StatusByError) WriteHeader(code int) {
	if code == http.StatusOK && !w.wrote {
		return // decided by the body (Write)
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusByError) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		if h := w.Header(); h.Get("Content-Type") == jsonContentType[0] {
			if status := errorStatus(b, h.Get("Content-Encoding") == "gzip"); status != 0 {
				w.ResponseWriter.WriteHeader(status)
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

// errorMember is in every error response.
var errorMember = []byte(`"error"`)

// errorStatus returns the HTTP status of a single error response (0 for
// anything else), msg gzipped or not.
func errorStatus(msg []byte, gzipped bool) int {
	if !gzipped && !bytes.Contains(msg, errorMember) {
		return 0 // a result: not scanned
	}
	if gzipped {
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return 0
		}
		if msg, err = io.ReadAll(io.LimitReader(zr, 1<<20)); err != nil {
			return 0
		}
	}
	var sc wire.Scanner
	var m wire.Message
	m.Limit = 1
	if sc.Parse(msg, MaxDepth, &m) != nil || m.Batch || len(m.Elems) != 1 || !m.Elems[0].ErrObj.Present() {
		return 0
	}
	var e struct {
		Code int64 `json:"code"`
	}
	if codec.UnmarshalResult(m.Elems[0].ErrObj.Of(msg), &e, false) != nil {
		return 0
	}
	return mcp.HTTPStatus(e.Code)
}
