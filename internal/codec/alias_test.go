package codec

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Decoding in place (Decoder.Alias, over memory wire.Stable vouches for)
// against copying: for every input the scanner accepts, the same decision
// and the same Go values, into a fresh and into a filled destination. Run
// longer with
//
//	go test -run='^$' -fuzz=FuzzAlias -fuzztime=20s -fuzzminimizetime=100x .
//
// (with the default minimising time, the fuzzer spends most of a short run
// minimising its first finds: 45k runs in 20 s against 577k).
func FuzzAlias(f *testing.F) {
	for _, s := range []string{
		`{}`, `""`, `"plain"`, `"a\"b"`, `{"s":"x","sl":["a","b\n"],"m":{"k":1},"named":"n","odd <&> é":"é"}`,
		`{"a":[{"x":1,"y":"why"}],"b":null}`, `[{"a":"b","c":"d\u0000"},null,{}]`, `{"s":"` + strings.Repeat("z", 3000) + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !wire.Valid(data) {
			return
		}
		for _, tg := range append(codecTargets, codecTarget{"raw", func() any { return new(json.RawMessage) }, `[1]`}) {
			checkAlias(t, tg, data, false)
			checkAlias(t, tg, data, true)
		}
	})
}

// stableCopy returns data in a buffer of its own marked stable, padded with
// spaces to the size from which values are decoded in place.
func stableCopy(data []byte) []byte {
	b := make([]byte, max(len(data), wire.AliasMin))
	n := copy(b, data)
	for i := n; i < len(b); i++ {
		b[i] = ' '
	}
	wire.MarkStable(b)
	return b
}

func checkAlias(t *testing.T, tg codecTarget, data []byte, filled bool) {
	t.Helper()
	copied, aliased := tg.new(), tg.new()
	if filled {
		for _, v := range []any{copied, aliased} {
			if err := Unmarshal([]byte(tg.fill), v); err != nil {
				t.Fatalf("%s: fill: %v", tg.Name, err)
			}
		}
	}
	// The plan alone, with and without Alias.
	if c := CodecFor(reflect.TypeOf(copied).Elem()); c != nil {
		d1, d2 := Decoder{Cursor: wire.Cursor{Data: data}}, Decoder{Cursor: wire.Cursor{Data: data}, Alias: true}
		ok1, ok2 := d1.Value(c, pointerIn(&copied)), d2.Value(c, pointerIn(&aliased))
		if ok1 != ok2 || (ok1 && !reflect.DeepEqual(copied, aliased)) {
			t.Fatalf("%s (filled %v): %q: copying %v %#v, aliasing %v %#v", tg.Name, filled, data, ok1, copied, ok2, aliased)
		}
	}
	// The whole path, from ordinary and from stable memory.
	copied, aliased = tg.new(), tg.new()
	stable := stableCopy(data)
	if !wire.Stable(stable) {
		t.Fatal("a buffer just marked stable is not")
	}
	err1, err2 := Unmarshal(data, copied), Unmarshal(stable, aliased)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%s: %q: copying %v, aliasing %v", tg.Name, data, err1, err2)
	}
	if raw, ok := aliased.(*json.RawMessage); ok && err2 == nil {
		// What the caller gets is the value itself, spaces and all.
		if !bytes.Equal(bytes.TrimSpace(*raw), bytes.TrimSpace(*copied.(*json.RawMessage))) {
			t.Fatalf("raw: %q against %q", *raw, *copied.(*json.RawMessage))
		}
		return
	}
	if err1 == nil && !reflect.DeepEqual(copied, aliased) {
		t.Fatalf("%s: %q: copying %#v, aliasing %#v", tg.Name, data, copied, aliased)
	}
}

// A string decoded from stable memory is that memory; from any other, a copy.
func TestAliasSharesOnlyStableMemory(t *testing.T) {
	type params struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	msg := []byte(`{"a":1,"b":"` + strings.Repeat("q", 4<<10) + `"}`)
	within := func(s string, b []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return p >= start && p < start+uintptr(len(b))
	}
	var p params
	if err := Unmarshal(msg, &p); err != nil || within(p.B, msg) {
		t.Fatalf("ordinary memory: err %v, aliased %v", err, within(p.B, msg))
	}
	stable := stableCopy(msg)
	var q params
	if err := Unmarshal(stable, &q); err != nil || !within(q.B, stable) || q != p {
		t.Fatalf("stable memory: err %v, aliased %v, equal %v", err, within(q.B, stable), q == p)
	}
	var raw json.RawMessage
	if err := Unmarshal(stable[:len(msg)], &raw); err != nil || unsafe.SliceData(raw) != unsafe.SliceData(stable) || cap(raw) != len(msg) {
		t.Fatalf("raw from stable memory: err %v, shared %v, cap %d", err, unsafe.SliceData(raw) == unsafe.SliceData(stable), cap(raw))
	}
	// Short values are copied, even from stable memory.
	var s string
	short := stableCopy([]byte(`"abc"`))[:5]
	if err := Unmarshal(short, &s); err != nil || within(s, short) {
		t.Fatalf("short value: err %v, aliased %v", err, within(s, short))
	}
}
