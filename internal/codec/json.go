package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/seedhq/jsonrpc/internal/wire"
)

var (
	marshalOpts   = jsonv2.Deterministic(false)
	UnmarshalOpts = jsonv2.RejectUnknownMembers(true)
)

// Marshal encodes v as JSON. A json.RawMessage is validated and used as is.
func Marshal(v any) ([]byte, error) {
	return AppendJSON(nil, v, nil)
}

// AppendJSON appends the JSON encoding of v to b. hint (may be nil)
// remembers the size of the large values of its kind, for the next to be
// encoded into room made at once; raw messages append in one pass.
func AppendJSON(b []byte, v any, hint *atomic.Int64) ([]byte, error) {
	raw, isRaw := v.(json.RawMessage)
	if p, ok := v.(*json.RawMessage); ok && p != nil { // raw params not boxed (an MCP client's)
		raw, isRaw = *p, true
	}
	switch {
	case v == nil || isRaw && raw == nil:
		return append(b, "null"...), nil
	case isRaw && !wire.Valid(raw):
		return b, fmt.Errorf("json.RawMessage is not a single valid JSON value")
	case isRaw && bytes.ContainsAny(raw, "\r\n"):
		// Newlines would cut the message in two on newline-framed streams.
		w := bytes.NewBuffer(b)
		if err := json.Compact(w, raw); err != nil {
			return b, err
		}
		return w.Bytes(), nil
	case isRaw:
		return append(b, raw...), nil
	}
	if c := CodecFor(reflect.TypeOf(v)); c != nil {
		if out, ok := appendEncoded(grow(b, hint), v, c); ok {
			remember(hint, len(out)-len(b))
			return out, nil
		}
		// v2 decides (and words the error).
	}
	return appendV2(b, v, hint)
}

// grow makes room in b for a value of the size hint remembers, in one
// allocation rather than a doubling per append.
func grow(b []byte, hint *atomic.Int64) []byte {
	if hint != nil {
		if n := int(hint.Load()); n > cap(b)-len(b) {
			// A quarter more: a bytes.Buffer grows when less is left free.
			b = slices.Grow(b, n+(len(b)+n)/4+64)
		}
	}
	return b
}

// remember records in hint the size n of a value just encoded, when large.
func remember(hint *atomic.Int64, n int) {
	if hint == nil {
		return
	}
	if n < largeValue {
		n = 0 // remembered: large sizes only
	}
	if int64(n) != hint.Load() {
		hint.Store(int64(n))
	}
}

// writerPool holds the bytes.Buffer that wraps the destination slice while
// a value is marshalled, so that appending costs no allocation of its own.
var writerPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Unmarshal decodes JSON into v strictly (unknown members are rejected).
// data must be a value the scanner accepted (valid JSON, valid UTF-8, no
// duplicate names): every params and result is.
func Unmarshal(data []byte, v any) error { return UnmarshalResult(data, v, true) }

// UnmarshalResult is Unmarshal that, unless strict, ignores the members
// of objects that v's types do not name (results, events, error data).
func UnmarshalResult(data []byte, v any, strict bool) error {
	if raw, ok := v.(*json.RawMessage); ok {
		if wire.Stable(data) {
			*raw = data[:len(data):len(data)] // never changes: shared, not copied
			return nil
		}
		*raw = append((*raw)[:0], data...)
		return nil
	}
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		if c := CodecFor(t.Elem()); c != nil {
			if p := pointerIn(&v); p != nil && decodeInto(data, c, p) {
				return nil // the compiled codec took it all (no unknown member)
			}
		}
	}
	return jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(strict))
}

// appendV2 appends v as v2 encodes it. A large value goes into a buffer
// sized for it up front (hint: the size of the last large value of its
// kind), where the encoder appends in place rather than grow its buffer a
// dozen times and copy the value at the end (for a 1 MiB string, four
// times the memory and two extra copies).
func appendV2(b []byte, v any, hint *atomic.Int64) ([]byte, error) {
	b = grow(b, hint)
	w := writerPool.Get().(*bytes.Buffer)
	*w = *bytes.NewBuffer(b)
	err := jsonv2.MarshalWrite(w, v, marshalOpts)
	out := w.Bytes()
	*w = bytes.Buffer{}
	writerPool.Put(w)
	remember(hint, len(out)-len(b))
	if err != nil {
		return b, err
	}
	return out, nil
}

// largeValue is the size from which a value's size is remembered.
const largeValue = 16 << 10

// AppendRequest appends a request (or, with a nil id, a notification).
// hint (may be nil) remembers the size of large params (see appendV2).
func AppendRequest(b []byte, id []byte, method string, params any, hint *atomic.Int64) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = wire.AppendString(b, method)
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
