package jsonrpc

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/params"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Register adds a typed method to mux. The params are decoded into P before
// fn runs and fn's result is encoded as the response's result.
//
// How params map onto P, analysed once here:
//   - a struct (or pointer to struct) takes a JSON object by field name
//     (json tags honoured, unknown names rejected) or a JSON array by field
//     order; a field is required unless it is a pointer or tagged omitempty
//     or omitzero;
//   - a slice or array type takes the params array itself;
//   - a map type takes the params object itself;
//   - json.RawMessage and any take the params as they are;
//   - any other type (a number, a string...) takes a one-element array.
//
// Params that do not fit give -32602 with a message naming the field and the
// problem. Omitted params decode as the zero P unless P has required fields.
//
// Params and results follow encoding/json/v2's rules (names match exactly,
// unknown members are rejected); plain types take a codec compiled here
// once per type, with v2's results.
func Register[P, R any](mux *Mux, method string, fn func(ctx context.Context, params P) (R, error), doc ...MethodDoc) {
	if strings.HasPrefix(method, "rpc.") {
		panic("jsonrpc: method names starting with \"rpc.\" are reserved: " + method)
	}
	pd := params.NewDecoder(reflect.TypeFor[P]())
	codec.CodecFor(reflect.TypeFor[R]()) // plan the result's encoding now
	var fields []ParamInfo
	for _, f := range pd.Fields() { // struct params' members, in positional order
		fields = append(fields, ParamInfo(f))
	}
	info := MethodInfo{
		Name:       method,
		Doc:        firstDoc(doc),
		ParamsType: reflect.TypeFor[P](),
		ResultType: resultTypeOf(reflect.TypeFor[R]()),
		Params:     fields,
		ByPosition: pd.ByPosition(),
		ByName:     pd.ByName(),
	}
	// The decoded params live in recycled memory: fn gets a copy.
	pool := sync.Pool{New: func() any { return new(P) }}
	var zero P
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		pp := pool.Get().(*P)
		defer func() { *pp = zero; pool.Put(pp) }()
		if err := decodeParams(pd, req.Params, pp); err != nil {
			return nil, err
		}
		return fn(ctx, *pp)
	})
	mux.add(info, h)
}

// invalidParams is the -32602 error about params that do not fit: path is
// a JSON pointer into them ("" for the whole), problem says what is wrong.
func invalidParams(path, problem string) *Error {
	e := &Error{Code: CodeInvalidParams, Message: (&params.Error{Path: path, Problem: problem}).Error()}
	data := wire.AppendString([]byte(`[{"path":`), path)
	data = append(data, `,"problem":`...)
	data = wire.AppendString(data, problem)
	e.Data = append(data, `}]`...)
	return e
}

// decodeParams decodes raw into *p (p is a *P) with d; its errors are
// -32602 *Errors.
func decodeParams(d *params.Decoder, raw []byte, p any) error {
	if err := d.Decode(raw, p); err != nil {
		return invalidParams(err.Path, err.Problem)
	}
	return nil
}
