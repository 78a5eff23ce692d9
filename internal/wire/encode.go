package wire

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// The wire encoders: requests, responses and error objects are appended as
// JSON by hand, next to the scanner (scan.go) that reads them, so that a
// message costs one append into a reused buffer. Params and results go
// through the JSON codec (json.go).

// AppendRequest appends a request (or, with a nil id, a notification).
// hint (may be nil) remembers the size of large params (see growFor).
func AppendRequest(b []byte, id []byte, method string, params any, hint *atomic.Int64) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = AppendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		start := len(b)
		var err error
		b, err = AppendJSON(b, params, hint)
		if err != nil {
			return b, fmt.Errorf("jsonrpc: cannot encode params of %s: %w", method, err)
		}
		if c := b[start]; c != '[' && c != '{' {
			if string(b[start:]) == "null" {
				b = b[:start-len(`,"params":`)] // nil pointer or nil slice: no params
			} else {
				return b, errors.New("jsonrpc: params of " + method + " must encode as a JSON array or object")
			}
		}
	}
	return append(b, '}'), nil
}

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that the output is always valid.
func AppendString(b []byte, s string) []byte {
	b, _ = appendQuote(b, s, false)
	return b
}
