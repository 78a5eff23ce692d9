package codec

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// The compiled codec (codec.go) against encoding/json/v2 as the oracle:
// for every input the scanner accepts, the same accept/reject decision
// and the same Go value, into a fresh and into a filled destination; for
// every value, byte-identical output. Run longer with
//
//	go test -run='^$' -fuzz=FuzzCodec -fuzztime=60s .

type codecString string

type codecInner struct {
	X int8     `json:"x"`
	Y *string  `json:"y,omitempty"`
	Z []uint16 `json:"z"`
}

type codecAll struct {
	B     bool                  `json:"b"`
	I     int                   `json:"i"`
	I8    int8                  // no tag: the Go name
	I16   int16                 `json:"i16,omitzero"`
	I32   int32                 `json:",omitempty"`
	I64   int64                 `json:"i64"`
	U     uint                  `json:"u"`
	U8    uint8                 `json:"u8"`
	U16   uint16                `json:"u16"`
	U32   uint32                `json:"u32"`
	U64   uint64                `json:"u64"`
	F32   float32               `json:"f32"`
	F64   float64               `json:"f64,omitzero"`
	S     string                `json:"s"`
	SO    string                `json:"so,omitempty"`
	P     *int                  `json:"p"`
	PP    **string              `json:"pp,omitempty"`
	Sl    []string              `json:"sl"`
	SlO   []int                 `json:"slo,omitempty"`
	M     map[string]int        `json:"m"`
	MS    map[string]codecInner `json:"ms,omitempty"`
	In    codecInner            `json:"in"`
	InP   *codecInner           `json:"inp"`
	Ins   []codecInner          `json:"ins,omitzero"`
	Named codecString           `json:"named"`
	Odd   string                `json:"odd <&> é"`
	Skip  int                   `json:"-"`
	unexp int
}

type codecList struct {
	V    float64    `json:"v"`
	Next *codecList `json:"next"`
}

// codecTarget is one type under test: new returns a fresh pointer to it.
type codecTarget struct {
	Name string
	new  func() any
	fill string // JSON that fills a destination before the input is merged in
}

var codecTargets = []codecTarget{
	{"all", func() any { return new(codecAll) }, `{"i":7,"s":"old","sl":["a","b","c"],"m":{"k":1},"in":{"x":1,"z":[1,2,3]},"inp":{"x":2},"ins":[{"x":3,"z":[9]},{"y":"q"}]}`},
	{"list", func() any { return new(codecList) }, `{"v":1,"next":{"v":2}}`},
	{"map", func() any { return new(map[string][]*codecInner) }, `{"a":[{"x":1}],"b":null}`},
	{"slice", func() any { return new([]map[string]string) }, `[{"a":"b"},{}]`},
	{"string", func() any { return new(string) }, `"old"`},
	{"int64", func() any { return new(int64) }, `5`},
	{"uint8", func() any { return new(uint8) }, `5`},
	{"float32", func() any { return new(float32) }, `5`},
	{"ptr", func() any { return new(*int32) }, `5`},
	{"bool", func() any { return new(bool) }, `true`},
}

var v2Marshal = jsonv2.Deterministic(true)

func FuzzCodec(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[]`, `""`, `0`, `-0`, `1.5`, `1e400`, `-1e-400`, `true`, `[1,2]`,
		`{"b":true,"i":-9223372036854775808,"I8":-128,"i16":32767,"I32":1,"i64":9223372036854775807}`,
		`{"i":9223372036854775808}`, `{"I8":128}`, `{"u8":256}`, `{"u":-1}`, `{"u64":18446744073709551615}`, `{"u64":18446744073709551616}`,
		`{"i":1.0}`, `{"i":1e2}`, `{"i":"1"}`, `{"f32":3.4028235e38}`, `{"f32":3.5e38}`, `{"f64":1e-7,"f32":1e21}`,
		`{"s":"a\"b\\c\/d\b\f\n\r\t\u0000\u001f\u00e9\ud83d\ude00<>&\u2028"}`, `{"s":"é\u2029 plain"}`, `{"s":"\"\"\\\"x\u0022\"y\\"}`, `"\"a\"b\\"`,
		`{"B":true}`, `{"i8":1}`, `{"unknown":1}`, `{"unexp":1}`, `{"Skip":1}`, `{"-":1}`,
		`{"odd <&> é":"x"}`, `{"odd \u003c&> \u00e9":"x"}`, `{"\u0073":"escaped name"}`,
		`{"p":null,"pp":"x","sl":null,"slo":[],"m":{"a":1,"b":2},"ms":{"k":{"x":1,"y":"","z":[]}}}`,
		`{"in":null,"inp":null,"ins":[null,{"x":-1}],"named":"n"}`, `{"in":{"z":[65535,65536]}}`,
		`{"v":1,"next":{"v":2,"next":{"v":3,"next":null}}}`, `{"a":[{"x":1},null],"b":[]}`, `[{"a":"b","c":"d"},null,{}]`,
		` { "i" : 1 , "s" : "x" } `, `{"i":1,}`, `{"i":1,"i":2}`, "{\"s\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !wire.Valid(data) {
			return // the codec only ever sees what the scanner accepts
		}
		for _, tg := range codecTargets {
			checkDecode(t, tg, data, false)
			checkDecode(t, tg, data, true)
		}
		checkQuote(t, string(data))
		if len(data) >= 8 {
			checkFloat(t, math.Float64frombits(uint64(data[0])|uint64(data[1])<<8|uint64(data[2])<<16|uint64(data[3])<<24|
				uint64(data[4])<<32|uint64(data[5])<<40|uint64(data[6])<<48|uint64(data[7])<<56))
		}
	})
}

// checkDecode decodes data into tg's type with the plan alone and with v2;
// filled starts both from tg.fill.
func checkDecode(t *testing.T, tg codecTarget, data []byte, filled bool) {
	t.Helper()
	want, got, viaUnmarshal := tg.new(), tg.new(), tg.new()
	if filled {
		for _, v := range []any{want, got, viaUnmarshal} {
			if err := jsonv2.Unmarshal([]byte(tg.fill), v); err != nil {
				t.Fatalf("%s: fill: %v", tg.Name, err)
			}
		}
	}
	wantErr := jsonv2.Unmarshal(data, want, UnmarshalOpts)
	c := CodecFor(reflect.TypeOf(got).Elem())
	if c == nil {
		t.Fatalf("%s: no plan", tg.Name)
	}
	ok := decodeInto(data, c, pointerIn(&got))
	if ok && wantErr != nil {
		t.Fatalf("%s (filled %v): the plan accepts %q, v2 refuses: %v", tg.Name, filled, data, wantErr)
	}
	if ok && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s (filled %v): %q decodes as\n%#v\nv2:\n%#v", tg.Name, filled, data, got, want)
	}
	// The whole path (plan, else v2) agrees with v2.
	err := Unmarshal(data, viaUnmarshal)
	if (err == nil) != (wantErr == nil) || (err == nil && !reflect.DeepEqual(viaUnmarshal, want)) {
		t.Fatalf("%s (filled %v): unmarshal(%q) = %v, %#v; v2: %v, %#v", tg.Name, filled, data, err, viaUnmarshal, wantErr, want)
	}
	if wantErr == nil {
		checkEncode(t, tg.Name, reflect.ValueOf(want).Elem().Interface())
	}
}

// checkEncode encodes v with the plan and with v2 (sorted map keys).
func checkEncode(t *testing.T, name string, v any) {
	t.Helper()
	want, wantErr := jsonv2.Marshal(v, v2Marshal)
	c := CodecFor(reflect.TypeOf(v))
	got, ok := appendEncoded([]byte("prefix"), v, c)
	if !ok {
		return // v2 encodes it (past maxEncodeDepth), or refuses
	}
	if wantErr != nil {
		t.Fatalf("%s: the plan encodes %#v as %s; v2 refuses: %v", name, v, got, wantErr)
	}
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%s: %#v encodes as\n%s\nv2:\n%s", name, v, got[len("prefix"):], want)
	}
}

// checkQuote compares the string encoder with v2's, and checks the
// always-valid variant used for our own strings.
func checkQuote(t *testing.T, s string) {
	t.Helper()
	want, wantErr := jsonv2.Marshal(s)
	got, ok := wire.AppendQuote(nil, s, true)
	if ok != (wantErr == nil) || (ok && !bytes.Equal(got, want)) {
		t.Fatalf("wire.AppendQuote(%q) = %s, %v; v2: %s, %v", s, got, ok, want, wantErr)
	}
	ours := wire.AppendString(nil, s)
	var back string
	if !wire.Valid(ours) || jsonv2.Unmarshal(ours, &back) != nil {
		t.Fatalf("appendString(%q) = %s: not a valid JSON string", s, ours)
	}
	if utf8.ValidString(s) && back != s {
		t.Fatalf("appendString(%q) = %s reads back as %q", s, ours, back)
	}
	if !utf8.ValidString(s) && back != strings.ToValidUTF8(s, "\ufffd") && !utf8.ValidString(back) {
		t.Fatalf("appendString(%q) = %s reads back as invalid %q", s, ours, back)
	}
}

func checkFloat(t *testing.T, f float64) {
	t.Helper()
	checkEncode(t, "float64", f)
	checkEncode(t, "float32", float32(f))
}

// TestCodecPlans lists which types take the compiled path and which go to v2.
func TestCodecPlans(t *testing.T) {
	type embedded struct{ codecInner }
	type caseIgnore struct {
		A int `json:"a,case:ignore"`
	}
	type stringOpt struct {
		A int `json:"a,string"`
	}
	type quotedName struct {
		A int `json:"'a'"`
	}
	type withIface struct{ A any }
	type withTime struct{ T time.Time }
	type withDuration struct{ D time.Duration }
	type withRaw struct{ R json.RawMessage }
	type withBytes struct{ B []byte }
	type withArray struct{ A [2]int }
	type onlyUnexported struct{ a int }
	_ = onlyUnexported{a: 1}
	_ = codecAll{unexp: 1} // ignored by v2 and the plan alike
	dupNames := reflect.New(reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
	})).Elem().Interface()
	for _, v := range []any{codecAll{}, codecList{}, map[string]codecString{}, []*float32{}, struct{}{}} {
		if CodecFor(reflect.TypeOf(v)) == nil {
			t.Errorf("%T: no plan", v)
		}
	}
	for _, v := range []any{
		embedded{}, caseIgnore{}, stringOpt{}, quotedName{}, withIface{}, withTime{}, withDuration{},
		withRaw{}, withBytes{}, withArray{}, dupNames, onlyUnexported{},
		map[int]string{}, time.Time{}, &errorObject{}, json.Number(""), []byte{}, new(any),
	} {
		if CodecFor(reflect.TypeOf(v)) != nil {
			t.Errorf("%T: has a plan; v2 must handle it", v)
		}
	}
}

// TestCodecDirectIface checks directIface against how interfaces really
// hold values: appendEncoded must find the value for both layouts.
func TestCodecDirectIface(t *testing.T) {
	n := 42
	type onePtr struct{ P *int }
	type oneMap struct{ M map[string]int }
	for _, v := range []any{&n, onePtr{&n}, [1]*int{&n}, oneMap{map[string]int{"a": 1}}, map[string]int{"a": 1}, codecInner{X: 1}, 1.5, "s", true} {
		c := CodecFor(reflect.TypeOf(v))
		if c == nil {
			if _, ok := v.([1]*int); ok {
				continue // arrays have no plan; the layout rule is still checked below
			}
			t.Fatalf("%T: no plan", v)
		}
		got, ok := appendEncoded(nil, v, c)
		want, _ := jsonv2.Marshal(v)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%T: appendEncoded gives %s, want %s", v, got, want)
		}
	}
	if !directIface(reflect.TypeFor[[1]*int]()) || directIface(reflect.TypeFor[[2]*int]()) || directIface(reflect.TypeFor[struct{ A, B *int }]()) {
		t.Error("directIface: wrong rule for arrays or structs")
	}
}

// TestCodecErrorsAreV2s: a refusal is worded by v2 (the -32602 message).
func TestCodecErrorsAreV2s(t *testing.T) {
	for _, in := range []string{`{"i":"x"}`, `{"I8":300}`, `{"nope":1}`, `{"u":-1}`, `{"i":1.5}`} {
		var a, b codecAll
		err, want := Unmarshal([]byte(in), &a), jsonv2.Unmarshal([]byte(in), &b, UnmarshalOpts)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%s: error %v, v2: %v", in, err, want)
		}
	}
}

// TestCodecDeep: nesting past maxEncodeDepth goes to v2, which encodes it.
func TestCodecDeep(t *testing.T) {
	n := maxEncodeDepth + 10
	data := []byte(strings.Repeat(`{"next":`, n) + "null" + strings.Repeat("}", n))
	var l codecList
	if err := Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(&l)
	if err != nil || !bytes.Equal(out, bytes.ReplaceAll(data, []byte(`{"next"`), []byte(`{"v":0,"next"`))) {
		t.Fatalf("deep list: %v, %.80s", err, out)
	}
}

// BenchmarkCodec compares the compiled codec with v2 on the bench's echo
// params, on a 1 MiB string and on a string of 256k escapes (\" and \n:
// its time must grow linearly with the size).
func BenchmarkCodec(b *testing.B) {
	type params struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	small := params{A: 1, B: "hello"}
	big := params{A: 1, B: strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 1<<20/36)}
	for _, tc := range []struct {
		Name string
		v    params
	}{{"small", small}, {"1MiB", big}, {"escaped", params{B: strings.Repeat("\"é\n", 1<<18)}}} {
		data, _ := jsonv2.Marshal(tc.v)
		for _, impl := range []string{"plan", "v2"} {
			b.Run("decode/"+tc.Name+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for range b.N {
					var p params
					var err error
					if impl == "plan" {
						err = Unmarshal(data, &p)
					} else {
						err = jsonv2.Unmarshal(data, &p, UnmarshalOpts)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("encode/"+tc.Name+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				buf := make([]byte, 0, 2*len(data))
				for range b.N {
					var err error
					if impl == "plan" {
						buf, err = AppendJSON(buf[:0], tc.v, nil)
					} else {
						buf, err = jsonv2.Marshal(tc.v, marshalOpts)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// errorObject has a method of the JSON interfaces, so it has no plan.
type errorObject struct{ Code int }

func (e *errorObject) MarshalJSON() ([]byte, error) { return []byte(`{"code":1}`), nil }

// A long string (plainUpTo's path) encodes as v2 encodes it, whichever
// byte that needs a look comes at whichever offset.
func TestQuoteLongStringAtEveryOffset(t *testing.T) {
	for p := 0; p < 200; p++ {
		for _, special := range []string{`"`, `\`, "\n", "\x7f", "\x1f", "\u00e9", "\u2028", "\xff", "<&>"} {
			checkQuote(t, strings.Repeat("a", p)+special+strings.Repeat("b", 100))
		}
		checkQuote(t, strings.Repeat("c", p+64))
	}
}
