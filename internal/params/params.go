package params

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Field is one member of struct params, in positional order. The jsonrpc
// package gives it as a ParamInfo.
type Field struct {
	Name     string
	Type     reflect.Type
	Required bool
	Field    reflect.StructField
}

// Error is params that do not fit: where (a JSON pointer into the params,
// "" for the whole) and what is wrong. The jsonrpc package answers it
// with -32602.
type Error struct {
	Path, Problem string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "invalid params: " + e.Problem
	}
	return "invalid params: " + e.Path + ": " + e.Problem
}

type paramsKind uint8

const (
	paramsStruct     paramsKind = iota // object by name or array by position
	paramsArray                        // slice or array: the params array
	paramsObjectOnly                   // map: the params object
	paramsRaw                          // json.RawMessage or any: as is
	paramsScalar                       // anything else: a one-element array
)

// Decoder decodes the params of a request into one Go type, analysed once
// by NewDecoder.
type Decoder struct {
	kind    paramsKind
	ptr     bool // P is a pointer to the struct
	fields  []Field
	index   [][]int // struct field index paths, in positional order
	minArgs int     // fields up to the last required one (positional minimum; 0: none required)

	// object, when the struct has a compiled plan (internal/codec), decodes
	// a params object; requiredMask has bit i set for required field i.
	object       *codec.StructCodec
	requiredMask uint64
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// NewDecoder analyses how params map onto t (see the package
// documentation).
func NewDecoder(t reflect.Type) *Decoder {
	d := &Decoder{}
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
func (d *Decoder) planObject(t reflect.Type) {
	c := codec.CodecFor(t)
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
func (d *Decoder) collect(t reflect.Type, index []int) {
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
		d.fields = append(d.fields, Field{Name: name, Type: f.Type, Required: !optional, Field: f})
		d.index = append(d.index, path)
	}
}

func invalidParams(path, problem string) *Error { return &Error{Path: path, Problem: problem} }

// Decode decodes params (nil when the request has none) into *p, p being
// a pointer to the type of NewDecoder. Params that do not fit give an
// *Error.
func (d *Decoder) Decode(params []byte, p any) *Error {
	if params == nil {
		if d.minArgs > 0 {
			return invalidParams("", "params are required")
		}
		if d.kind == paramsScalar {
			return invalidParams("", "expected an array of 1 element, got no params")
		}
		return nil
	}
	if d.kind != paramsStruct {
		return d.decodeWhole(params, p)
	}
	v := reflect.ValueOf(p).Elem()
	if d.ptr {
		v.Set(reflect.New(v.Type().Elem()))
		v = v.Elem()
	}
	if params[0] == '[' {
		return d.decodePositions(params, v)
	}
	return d.decodeMembers(params, v)
}

// decodeWhole decodes params into a type other than a struct.
func (d *Decoder) decodeWhole(params []byte, p any) *Error {
	isArray := params[0] == '['
	switch d.kind {
	case paramsArray:
		if !isArray {
			return invalidParams("", "expected an array, got an object")
		}
	case paramsObjectOnly:
		if isArray {
			return invalidParams("", "expected an object, got an array")
		}
	case paramsScalar:
		elems, ok := splitArray(params)
		if !ok || len(elems) != 1 {
			return invalidParams("", "expected an array of exactly 1 element")
		}
		return wrapDecodeErr(codec.Unmarshal(elems[0], p), "/0")
	}
	return wrapDecodeErr(codec.Unmarshal(params, p), "")
}

// decodeMembers decodes a params object into the struct v.
func (d *Decoder) decodeMembers(params []byte, v reflect.Value) *Error {
	if d.object != nil {
		dec := codec.NewDecoder(params)
		seen, ok := dec.Object(d.object, v.Addr().UnsafePointer())
		if ok && dec.Peek() == 0 && dec.Pos == len(params) {
			if seen&d.requiredMask == d.requiredMask {
				return nil
			}
			return d.checkRequired(params)
		}
		// v2 decides (and words the error).
	}
	if err := wrapDecodeErr(jsonv2.Unmarshal(params, v.Addr().Interface(), codec.UnmarshalOpts), ""); err != nil {
		return err
	}
	if d.minArgs > 0 {
		return d.checkRequired(params)
	}
	return nil
}

// decodePositions decodes a params array into the struct v, by field order.
func (d *Decoder) decodePositions(params []byte, v reflect.Value) *Error {
	elems, _ := splitArray(params)
	if len(elems) > len(d.fields) {
		return invalidParams("", "too many params: expected at most "+strconv.Itoa(len(d.fields))+", got "+strconv.Itoa(len(elems)))
	}
	if len(elems) < d.minArgs {
		return invalidParams("/"+strconv.Itoa(len(elems)), "missing required param "+strconv.Quote(d.fields[len(elems)].Name))
	}
	for i, e := range elems {
		fv := v.FieldByIndex(d.index[i])
		if err := codec.Unmarshal(e, fv.Addr().Interface()); err != nil {
			return wrapDecodeErr(err, "/"+strconv.Itoa(i))
		}
	}
	return nil
}

// checkRequired reports the first required field missing from the params object.
func (d *Decoder) checkRequired(obj []byte) *Error {
	var seen [64]bool
	wire.Members(obj, func(name, _ []byte) {
		for i, f := range d.fields {
			if i < len(seen) && f.Name == string(name) {
				seen[i] = true
			}
		}
	})
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
func wrapDecodeErr(err error, prefix string) *Error {
	if err == nil {
		return nil
	}
	path, problem := Describe(err)
	return invalidParams(prefix+string(path), problem)
}

// Describe words a JSON decoding error (the codec's or v2's) by where it
// happened, a JSON pointer, and what is wrong: the words of a -32602 and
// of a result or an error's data that does not decode.
func Describe(err error) (jsontext.Pointer, string) {
	var se *jsonv2.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case !errors.As(err, &se):
		if errors.As(err, &syn) {
			return syn.JSONPointer, syn.Err.Error()
		}
		return "", err.Error()
	case errors.Is(se.Err, jsonv2.ErrUnknownName):
		return se.JSONPointer, "unknown member"
	case se.GoType != nil && se.JSONKind != 0 && !errors.Is(se.Err, strconv.ErrRange): // else "expected number, got number"
		return se.JSONPointer, "expected " + GoKind(se.GoType) + ", got " + KindName(se.JSONKind)
	case se.Err != nil:
		return se.JSONPointer, se.Err.Error()
	}
	return se.JSONPointer, err.Error()
}

// KindName names a JSON kind as the errors do ("null", "boolean", "string",
// "number", "object", "array").
func KindName(k jsontext.Kind) string {
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

// GoKind names the JSON value a Go type takes ("integer", "object"...).
func GoKind(t reflect.Type) string {
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
		return GoKind(t.Elem())
	}
	return t.String()
}

// Fields lists the members of struct params, in positional order (nil
// for other types).
func (d *Decoder) Fields() []Field { return d.fields }

// ByPosition reports whether the params may be an array.
func (d *Decoder) ByPosition() bool { return d.kind != paramsObjectOnly }

// ByName reports whether the params may be an object.
func (d *Decoder) ByName() bool {
	return d.kind == paramsStruct || d.kind == paramsObjectOnly || d.kind == paramsRaw
}
