package httpx

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// ReadReply reads the body of a 2xx response to a POST into into,
// decompressed, under limit (past it tooLarge's error, returned as is, for
// the declared size, or 0 when not known: chunked or compressed). It returns nil when the body is empty (or 204) and no reply is
// due, and an error when one was due, or when the body is not JSON (IsJSON,
// lenient).
func ReadReply(resp *http.Response, into []byte, limit int64, wantReply bool, tooLarge func(size int64) error) ([]byte, error) {
	var body []byte
	if resp.StatusCode != http.StatusNoContent && resp.ContentLength != 0 {
		if resp.ContentLength > limit {
			return nil, tooLarge(resp.ContentLength)
		}
		gzipped, err := ContentEncoding(resp.Header)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: the server's reply: %w", err)
		}
		if body, err = ReadEncoded(into, resp.Body, gzipped, resp.ContentLength, limit); err != nil {
			return nil, fmt.Errorf("jsonrpc: reading the response: %w", err)
		}
		if int64(len(body)) > limit {
			return nil, tooLarge(0)
		}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if wantReply {
			return nil, errors.New("jsonrpc: the server sent no response (HTTP " + strconv.Itoa(resp.StatusCode) + " with an empty body) where one was due")
		}
		return nil, nil
	}
	if ct := resp.Header.Get("Content-Type"); !IsJSON(ct, false) {
		return nil, errors.New("jsonrpc: the server answered with Content-Type " + strconv.Quote(ct) + ", not application/json: " + Excerpt(string(body)))
	}
	return body, nil
}

// maxErrorBody bounds what ErrorBody reads.
const maxErrorBody = 4 << 10

// ErrorBody reads the start (at most 4 KiB, decompressed) of the body of
// a response sent with an error status.
func ErrorBody(resp *http.Response) []byte {
	gzipped, _ := ContentEncoding(resp.Header)
	b, _ := ReadEncoded(nil, resp.Body, gzipped, -1, maxErrorBody)
	return b[:min(len(b), maxErrorBody)]
}

// maxDrain bounds what DrainClose reads of a body left unread.
const maxDrain = 64 << 10

// DrainClose drains a little of what is left of a body, so the connection
// can be reused, and closes it.
func DrainClose(body io.ReadCloser) {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	b := (*buf)[:cap(*buf)]
	for n := 0; n < maxDrain; {
		k, err := body.Read(b)
		n += k
		if err != nil {
			break
		}
	}
	body.Close()
}

// NewTransport returns a transport like http.DefaultTransport that keeps
// more idle connections per host, so concurrent callers reuse them.
func NewTransport(tlsConfig *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig.Clone()
	}
	return t
}

// Excerpt is the start of a body for an error message: trimmed, at most
// 200 bytes.
func Excerpt(body string) string {
	body = strings.TrimSpace(body)
	if len(body) <= 200 {
		return body
	}
	return body[:200] + "…"
}
