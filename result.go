package jsonrpc

import (
	"cmp"
	"errors"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/params"
)

// WithStrictResults makes Call and Batch reject a result holding a member the
// destination type does not name. By default such members (of a result or
// an error's data) are ignored, as encoding/json and go-ethereum's client
// do, since servers add members all the time; the rest stays exact, and a
// server's params are always decoded strictly.
func WithStrictResults() DialOption { return func(c *dialConfig) { c.strictResults = true } }

// decodeResult decodes the result of a call to method into v (nil: discard
// it), ignoring members v does not name unless strict.
func decodeResult(method string, result []byte, v any, strict bool) error {
	if v == nil {
		return nil
	}
	switch r := v.(type) {
	case *iterResult:
		return r.Decode(result, strict) // CallIter's elements go to its loop
	case *mcpRound:
		return r.decode(result, strict)
	}
	if err := codec.UnmarshalResult(result, v, strict); err != nil {
		return &decodeError{what: "the result of " + method, err: err}
	}
	return nil
}

// DecodeData decodes the error's data member into v, ignoring members v does
// not name. It returns an error if the error has no data.
func (e *Error) DecodeData(v any) error {
	if len(e.Data) == 0 {
		return errors.New("jsonrpc: the error has no data")
	}
	if err := codec.UnmarshalResult(e.Data, v, false); err != nil {
		return &decodeError{what: "the data of error " + strconv.FormatInt(int64(e.Code), 10), err: err}
	}
	return nil
}

// decodeError is a value that did not decode into the caller's type. Its
// text says where and what, in the words of a -32602 (params.Describe); it wraps the codec's error (a
// *json.SemanticError or *jsontext.SyntacticError of go-json-experiment).
type decodeError struct {
	what string // "the result of method"
	err  error
}

func (e *decodeError) Unwrap() error { return e.err }

func (e *decodeError) Error() string {
	path, problem := params.Describe(e.err)
	return "jsonrpc: cannot decode " + e.what + ": at " + cmp.Or(string(path), "the top level") + ": " + problem
}
