package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
// unknown members are rejected). Plain types (bool, numbers, strings,
// structs of them whose json tags give only a name, "-", omitempty or
// omitzero, slices, string-keyed maps and pointers of those) are decoded
// and encoded by a codec compiled here, once per type, with v2's results;
// types with JSON or text methods, embedded fields, interfaces, arrays,
// []byte or other tag options go through v2 itself.
func Register[P, R any](mux *Mux, method string, fn func(ctx context.Context, params P) (R, error), doc ...MethodDoc) {
	if strings.HasPrefix(method, "rpc.") {
		panic("jsonrpc: method names starting with \"rpc.\" are reserved: " + method)
	}
	pd := newParamsDecoder(reflect.TypeFor[P]())
	wire.CodecFor(reflect.TypeFor[R]()) // plan the result's encoding now
	info := MethodInfo{
		Name:       method,
		Doc:        firstDoc(doc),
		ParamsType: reflect.TypeFor[P](),
		ResultType: resultTypeOf(reflect.TypeFor[R]()),
		Params:     pd.fields,
		ByPosition: pd.kind != paramsObjectOnly,
		ByName:     pd.kind == paramsStruct || pd.kind == paramsObjectOnly || pd.kind == paramsRaw,
	}
	// The decoded params live in recycled memory: fn gets a copy, so
	// nothing can keep a reference to it.
	pool := sync.Pool{New: func() any { return new(P) }}
	h := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		pp := pool.Get().(*P)
		defer func() {
			var zero P
			*pp = zero
			pool.Put(pp)
		}()
		if err := pd.decode(req.Params, pp); err != nil {
			return nil, err
		}
		return fn(ctx, *pp)
	})
	mux.add(info, h)
}

type paramsKind uint8

const (
	paramsStruct     paramsKind = iota // object by name or array by position
	paramsArray                        // slice or array: the params array
	paramsObjectOnly                   // map: the params object
	paramsRaw                          // json.RawMessage or any: as is
	paramsScalar                       // anything else: a one-element array
)

type paramsDecoder struct {
	kind     paramsKind
	ptr      bool // P is a pointer to the struct
	fields   []ParamInfo
	index    [][]int // struct field index paths, in positional order
	required int     // number of required fields
	minArgs  int     // fields up to the last required one (positional minimum)

	// object, when the struct has a compiled plan (see codec.go), decodes
	// a params object; requiredMask has bit i set for required field i.
	object       *wire.StructCodec
	requiredMask uint64
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func newParamsDecoder(t reflect.Type) *paramsDecoder {
	d := &paramsDecoder{}
	st := t
	if st.Kind() == reflect.Pointer && st.Elem().Kind() == reflect.Struct {
		st, d.ptr = st.Elem(), true
	}
	switch {
	case t == rawMessageType || t.Kind() == reflect.Interface:
		d.kind = paramsRaw
	case st.Kind() == reflect.Struct:
		d.kind = paramsStruct
		d.collect(st, nil)
		for i, f := range d.fields {
			if f.Required {
				d.required++
				d.minArgs = i + 1
			}
		}
		d.planObject(st)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		d.kind = paramsArray
	case t.Kind() == reflect.Map:
		d.kind = paramsObjectOnly
	default:
		d.kind = paramsScalar
	}
	return d
}

// planObject takes the compiled plan of struct type t, when it has one
// whose fields are d.fields.
func (d *paramsDecoder) planObject(t reflect.Type) {
	c := wire.CodecFor(t)
	if c == nil || c.Object == nil || len(c.Object.Fields) != len(d.fields) {
		return
	}
	for i, f := range d.fields {
		if c.Object.Fields[i].Name != f.Name {
			return
		}
		if f.Required {
			d.requiredMask |= 1 << i
		}
	}
	d.object = c.Object
}

// collect lists the JSON members of struct type t in declaration order,
// flattening embedded structs that have no name of their own.
func (d *paramsDecoder) collect(t reflect.Type, index []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		path := append(append([]int(nil), index...), i)
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				d.collect(ft, path)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := f.Type.Kind() == reflect.Pointer || strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		d.fields = append(d.fields, ParamInfo{Name: name, Type: f.Type, Required: !optional, Field: f})
		d.index = append(d.index, path)
	}
}

func invalidParams(path, problem string) *Error {
	msg := "invalid params: " + problem
	if path != "" {
		msg = "invalid params: " + path + ": " + problem
	}
	e := &Error{Code: CodeInvalidParams, Message: msg}
	data := wire.AppendString([]byte(`[{"path":`), path)
	data = append(data, `,"problem":`...)
	data = wire.AppendString(data, problem)
	e.Data = append(data, `}]`...)
	return e
}

// decode decodes params into *p (p is a *P).
func (d *paramsDecoder) decode(params []byte, p any) error {
	if params == nil {
		if d.required > 0 {
			return invalidParams("", "params are required")
		}
		if d.kind == paramsScalar {
			return invalidParams("", "expected an array of 1 element, got no params")
		}
		return nil
	}
	isArray := params[0] == '['
	switch d.kind {
	case paramsRaw:
		return wrapDecodeErr(wire.Unmarshal(params, p), "")
	case paramsArray:
		if !isArray {
			return invalidParams("", "expected an array, got an object")
		}
		return wrapDecodeErr(wire.Unmarshal(params, p), "")
	case paramsObjectOnly:
		if isArray {
			return invalidParams("", "expected an object, got an array")
		}
		return wrapDecodeErr(wire.Unmarshal(params, p), "")
	case paramsScalar:
		elems, ok := splitArray(params)
		if !ok || len(elems) != 1 {
			return invalidParams("", "expected an array of exactly 1 element")
		}
		return wrapDecodeErr(wire.Unmarshal(elems[0], p), "/0")
	}
	// A struct.
	v := reflect.ValueOf(p).Elem()
	if d.ptr {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	if !isArray {
		if d.object != nil {
			dec := wire.Decoder{Cursor: wire.Cursor{Data: params}}
			seen, ok := dec.Object(d.object, v.Addr().UnsafePointer())
			if ok && dec.Peek() == 0 && dec.Pos == len(params) {
				if seen&d.requiredMask == d.requiredMask {
					return nil
				}
				return d.checkRequired(params)
			}
			// v2 decides (and words the error).
		}
		if err := wrapDecodeErr(jsonv2.Unmarshal(params, v.Addr().Interface(), wire.UnmarshalOpts), ""); err != nil {
			return err
		}
		if d.required > 0 {
			return d.checkRequired(params)
		}
		return nil
	}
	elems, _ := splitArray(params)
	if len(elems) > len(d.fields) {
		return invalidParams("", "too many params: expected at most "+strconv.Itoa(len(d.fields))+", got "+strconv.Itoa(len(elems)))
	}
	if len(elems) < d.minArgs {
		return invalidParams("/"+strconv.Itoa(len(elems)), "missing required param "+strconv.Quote(d.fields[len(elems)].Name))
	}
	for i, e := range elems {
		fv := v.FieldByIndex(d.index[i])
		if err := wire.Unmarshal(e, fv.Addr().Interface()); err != nil {
			return wrapDecodeErr(err, "/"+strconv.Itoa(i))
		}
	}
	return nil
}

// checkRequired reports the first required field missing from the params object.
func (d *paramsDecoder) checkRequired(obj []byte) error {
	found := 0
	var seen [64]bool
	wire.Members(obj, func(name, _ []byte) {
		for i, f := range d.fields {
			if f.Required && i < len(seen) && !seen[i] && f.Name == string(name) {
				seen[i] = true
				found++
			}
		}
	})
	if found == d.required {
		return nil
	}
	for i, f := range d.fields {
		if f.Required && (i >= len(seen) || !seen[i]) {
			return invalidParams("/"+f.Name, "missing required member")
		}
	}
	return nil
}

// splitArray returns the elements of a valid JSON array.
func splitArray(arr []byte) ([][]byte, bool) {
	var s wire.Scanner
	s.Reset(arr, 1<<30)
	var elems [][]byte
	if s.Peek() != '[' {
		return nil, false
	}
	ok := s.Array(func() bool {
		v, ok := s.Value()
		elems = append(elems, v.Of(arr))
		return ok
	})
	return elems, ok
}

// wrapDecodeErr turns a JSON decoding error into -32602 naming where it happened.
func wrapDecodeErr(err error, prefix string) error {
	if err == nil {
		return nil
	}
	var se *jsonv2.SemanticError
	if errors.As(err, &se) {
		path := prefix + string(se.JSONPointer)
		switch {
		case errors.Is(se.Err, jsonv2.ErrUnknownName):
			return invalidParams(path, "unknown member")
		case se.GoType != nil && se.JSONKind != 0:
			return invalidParams(path, "expected "+jsonKindOf(se.GoType)+", got "+kindName(se.JSONKind))
		case se.Err != nil:
			return invalidParams(path, se.Err.Error())
		}
		return invalidParams(path, err.Error())
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return invalidParams(prefix+string(syn.JSONPointer), syn.Err.Error())
	}
	return invalidParams(prefix, err.Error())
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "invalid"
}

func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonKindOf(t.Elem())
	}
	return t.String()
}
