package streamable

import (
	"bytes"
	"net/http"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// StatusByError is the ResponseWriter of an answer of MCP's stateless
// revision: a JSON answer that is a single error response gets the HTTP
// status its error asks (mcp.HTTPStatus: 404 for an unknown method, 400
// for the revision's own errors) in place of 200. Reply names the answer
// before it is written (and compressed).
type StatusByError struct {
	http.ResponseWriter
	status int
}

func (w *StatusByError) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Reply takes msg, the JSON answer about to be written.
func (w *StatusByError) Reply(msg []byte) {
	w.status = 0
	if !bytes.Contains(msg, errorMember) {
		return // a result: not scanned
	}
	parse(msg, func(m *wire.Message) {
		var e struct {
			Code int64 `json:"code"`
		}
		if !m.Batch && m.Elems[0].ErrObj.Present() && codec.UnmarshalResult(m.Elems[0].ErrObj.Of(msg), &e, false) == nil {
			w.status = mcp.HTTPStatus(e.Code)
		}
	})
}

func (w *StatusByError) WriteHeader(code int) {
	if code == http.StatusOK && w.status != 0 {
		code = w.status
	}
	w.ResponseWriter.WriteHeader(code)
}

// errorMember is in every error response.
var errorMember = []byte(`"error"`)
