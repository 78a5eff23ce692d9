package resultstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/params"
)

// ErrInvalidResponse matches the error of a response that breaks the
// protocol; the root package sets it to its own (jsonrpc.ErrInvalidResponse)
// in init.
var ErrInvalidResponse = errors.New("jsonrpc: invalid response")

// ErrStopped: the loop over the elements broke off.
var ErrStopped = errors.New("jsonrpc: stopped by the caller")

// ErrCalledTwice: a call whose elements had begun to reach the loop was
// made again (an interceptor retried it); the loop cannot take them twice.
var ErrCalledTwice = errors.New("jsonrpc: a CallIter call was made again after its elements had begun (an interceptor retried it)")

// Result is the result a client's Call decodes an array into, element by
// element: whoever decodes it (as the response arrives, or once it has the
// whole) hands its elements to Each, which yields them to the loop.
type Result struct {
	Method  string
	Each    func(elem []byte) (bool, error) // decodes an element and yields it
	Strict  bool                            // strict decoding, of the client that decodes (set by Read)
	Stopped bool                            // the loop broke off
	begun   bool                            // an element went to the loop
}

// element hands one element to the loop.
func (r *Result) element(elem []byte) (bool, error) {
	r.begun = true
	more, err := r.Each(elem)
	if err == nil && !more {
		r.Stopped = true
		err = ErrStopped
	}
	return more, err
}

// Read reads the result, a JSON array, from dec and hands its elements to
// the loop; strict is the decoding client's. next, if not nil, is called
// before each element is handed out.
func (r *Result) Read(dec *jsontext.Decoder, strict bool, next func()) error {
	if r.begun {
		return ErrCalledTwice
	}
	r.Strict = strict
	each := r.element
	if next != nil {
		each = func(elem []byte) (bool, error) {
			next()
			return r.element(elem)
		}
	}
	return EachElement(dec, r.Method, each)
}

// Decode hands the elements of a whole result to the loop.
func (r *Result) Decode(result []byte, strict bool) error {
	return r.Read(jsontext.NewDecoder(bytes.NewReader(result)), strict, nil)
}

// UnmarshalJSON lets a client of another package (which decodes results
// with encoding/json or go-json-experiment) fill a Result too.
func (r *Result) UnmarshalJSON(result []byte) error { return r.Decode(result, false) }

// EachElement reads a JSON array from dec and hands each element to each
// (ErrStopped when each says no more); method names the call in errors.
func EachElement(dec *jsontext.Decoder, method string, each func([]byte) (bool, error)) error {
	if k := dec.PeekKind(); k != '[' {
		if _, err := dec.ReadToken(); err != nil {
			return Invalid(err)
		}
		return fmt.Errorf("%w: the result of %s is %s, not an array", ErrInvalidResponse, method, params.KindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return Invalid(err)
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return Invalid(err)
		}
		more, err := each(v)
		if err != nil {
			return err
		}
		if !more {
			return ErrStopped
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return Invalid(err)
	}
	return nil
}

// Invalid is the error of a streamed response broken by err.
func Invalid(err error) error {
	return fmt.Errorf("%w from the server: %w", ErrInvalidResponse, err)
}

// ReadResponse reads a response object from dec, to the end of the input:
// its result is read by readResult as it arrives. id is the request's id
// as it was sent; errorObject turns an error member into the call's error
// (nil: not a valid error object), which ReadResponse returns.
func ReadResponse(dec *jsontext.Decoder, id string, readResult func(*jsontext.Decoder) error, errorObject func([]byte) error) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return Invalid(errors.New("the response is not a JSON object"))
	}
	var sawResult bool
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return Invalid(err)
		}
		name := tok.String() // before the next read voids tok
		if name == "result" {
			if err := readResult(dec); err != nil {
				return err
			}
			sawResult = true
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return Invalid(err)
		}
		if err := checkMember(name, v, id, errorObject); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return Invalid(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return Invalid(errors.New("more data after the response"))
	}
	if !sawResult {
		return Invalid(errors.New("the response has neither result nor error"))
	}
	return nil
}

// checkMember checks a member of a streamed response other than its
// result; an error member is returned as the call's error.
func checkMember(name string, v jsontext.Value, id string, errorObject func([]byte) error) error {
	switch name {
	case "jsonrpc":
		if string(v) != `"2.0"` {
			return Invalid(errors.New(`"jsonrpc" is not "2.0"`))
		}
	case "id":
		if string(v) != id && string(v) != "null" {
			return Invalid(errors.New("id " + string(v) + " does not match the request's id " + id))
		}
	case "error":
		if err := errorObject(v); err != nil {
			return err
		}
		return Invalid(errors.New("the error member is not a valid error object"))
	default:
		return Invalid(errors.New("unknown member " + strconv.Quote(name)))
	}
	return nil
}

// LimitReader bounds the bytes read between two elements of a streamed
// result (Reset), so that one element cannot exceed the size limit even
// though the whole may. Over it, reads fail with Err.
type LimitReader struct {
	R     io.Reader
	Limit int64
	Err   error // what a read over the limit returns
	n     int64 // read since the last reset
}

// Reset starts counting again (the next element).
func (l *LimitReader) Reset() { l.n = 0 }

func (l *LimitReader) Read(p []byte) (int, error) {
	if l.n > l.Limit {
		return 0, l.Err
	}
	n, err := l.R.Read(p)
	l.n += int64(n)
	return n, err
}
