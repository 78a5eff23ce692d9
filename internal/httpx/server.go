package httpx

import (
	"errors"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// Errors of ReadPOST.
var (
	// ErrAnswered: the request was refused and its answer written.
	ErrAnswered = errors.New("httpx: request refused and answered")
	// ErrTooLarge: the body is over the limit, answered 413 with
	// Connection: close (the rest of the body is not read); the caller logs it.
	ErrTooLarge = errors.New("httpx: request body over the limit")
)

// OnlyPOST answers a request whose method is not POST with 405 Method Not
// Allowed and "Allow: POST"; it reports whether r is a POST.
func OnlyPOST(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", http.MethodPost)
	http.Error(w, "jsonrpc: method "+r.Method+" not allowed: send JSON-RPC messages with POST", http.StatusMethodNotAllowed)
	return false
}

// ReadPOST appends a POST's JSON body to buf, decompressed, under the
// limits every HTTP transport shares: the Content-Type must be JSON
// (IsJSON, strict) and the Content-Encoding gzip or none (415), the body
// at most limit bytes (413, ErrTooLarge, decided from Content-Length or as a
// chunked or compressed body passes it), and it must arrive within
// timeout (408; 0: no deadline, nor where the ResponseWriter cannot set
// one). The deadline is cleared once the body is read, so that it does not
// cut the handler's context. On an error it has written the answer.
func ReadPOST(w http.ResponseWriter, r *http.Request, buf []byte, limit int64, timeout time.Duration) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !IsJSON(ct, true) {
		http.Error(w, "jsonrpc: unsupported Content-Type "+strconv.Quote(ct)+": want application/json", http.StatusUnsupportedMediaType)
		return buf, ErrAnswered
	}
	gzipped, err := ContentEncoding(r.Header)
	if err != nil {
		w.Header().Set("Accept-Encoding", "gzip")
		http.Error(w, "jsonrpc: "+err.Error(), http.StatusUnsupportedMediaType)
		return buf, ErrAnswered
	}
	if r.ContentLength > limit {
		return buf, refuseBody(w, &http.MaxBytesError{Limit: limit}, 0)
	}
	body := r.Body // with a declared length, net/http stops at it
	if r.ContentLength < 0 {
		body = http.MaxBytesReader(w, r.Body, limit)
	}
	if timeout > 0 && !SetReadDeadline(w, time.Now().Add(timeout)) {
		timeout = 0 // the ResponseWriter cannot set deadlines
	}
	buf, err = ReadEncoded(buf, body, gzipped, r.ContentLength, limit)
	if err == nil && int64(len(buf)) > limit {
		err = &http.MaxBytesError{Limit: limit} // decompressed past the limit
	}
	if timeout > 0 && err == nil {
		SetReadDeadline(w, time.Time{}) // no deadline while the handler runs (a past one would cancel its context)
	}
	if err != nil {
		return buf, refuseBody(w, err, timeout)
	}
	return buf, nil
}

// refuseBody answers a body that could not be read.
func refuseBody(w http.ResponseWriter, err error, timeout time.Duration) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		w.Header().Set("Connection", "close")
		http.Error(w, "jsonrpc: "+framing.TooLargeMessage(mbe.Limit), http.StatusRequestEntityTooLarge)
		return ErrTooLarge
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		http.Error(w, "jsonrpc: the request body did not arrive within "+timeout.String()+" (Server.HTTPBodyTimeout)", http.StatusRequestTimeout)
	default:
		// The client went away or sent a broken body: nothing to answer.
		http.Error(w, "jsonrpc: cannot read the request body: "+err.Error(), http.StatusBadRequest)
	}
	return ErrAnswered
}

// SetReadDeadline sets the read deadline of the connection under w, if it
// has one; it reports whether it could.
// Like http.ResponseController, it looks through writers that wrap
// another (Unwrap), but costs no allocation when none can.
func SetReadDeadline(w http.ResponseWriter, t time.Time) bool {
	for {
		switch x := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return x.SetReadDeadline(t) == nil
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return false
		}
	}
}

// IsJSON reports whether a Content-Type names JSON: application/json
// (case-insensitive), with a utf-8 charset if any. A client (strict false)
// also accepts the +json structured suffix and application/json-rpc.
func IsJSON(ct string, strict bool) bool {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return false
	}
	if mt == "application/json" {
		return true
	}
	return !strict && (strings.HasSuffix(mt, "+json") || mt == "application/json-rpc")
}
