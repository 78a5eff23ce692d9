package jsonrpc

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
)

// The wire encoders: requests, responses and error objects are appended as
// JSON by hand, next to the scanner (scan.go) that reads them, so that a
// message costs one append into a reused buffer. Params and results go
// through the JSON codec (json.go).

// appendRequest appends a request (or, with a nil id, a notification).
// hint (may be nil) remembers the size of large params (see growFor).
func appendRequest(b []byte, id []byte, method string, params any, hint *atomic.Int64) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = growFor(b, hint)
		start := len(b)
		var err error
		b, err = appendJSON(b, params)
		noteSize(hint, len(b)-start)
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

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD so
// that the output is always valid.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendError appends the JSON error object e.
func appendError(b []byte, e *Error) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	if len(e.Data) > 0 && validJSON(e.Data) {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}

// appendResponse appends a response with the given id (null when absent) and
// either the raw result or the error.
func appendResponse(b []byte, id ID, result []byte, e *Error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id.raw == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, id.raw...)
	}
	if e != nil {
		b = append(b, `,"error":`...)
		b = appendError(b, e)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, result...)
	}
	return append(b, '}')
}
