package params

import (
	"encoding/json"
	"reflect"
	"testing"
)

type point struct {
	X    int     `json:"x"`
	Y    int     `json:"y"`
	Name *string `json:"name"`
	Tag  string  `json:"tag,omitempty"`
}

type embedded struct {
	point
	Z float64 `json:"z"`
}

// Decode maps params onto each kind of type, and names where and what is
// wrong when they do not fit.
func TestDecode(t *testing.T) {
	cases := []struct {
		name    string
		typ     reflect.Type
		params  string // "" for none
		want    any    // the decoded value, when it fits
		path    string // the error's, when it does not
		problem string
	}{
		{"struct by name", reflect.TypeFor[point](), `{"y":2,"x":1}`, point{X: 1, Y: 2}, "", ""},
		{"struct by position", reflect.TypeFor[point](), `[1,2]`, point{X: 1, Y: 2}, "", ""},
		{"pointer to struct", reflect.TypeFor[*point](), `{"x":1,"y":2,"tag":"t"}`, &point{X: 1, Y: 2, Tag: "t"}, "", ""},
		{"embedded", reflect.TypeFor[embedded](), `[1,2,null,"",3.5]`, embedded{point{X: 1, Y: 2}, 3.5}, "", ""},
		{"missing member", reflect.TypeFor[point](), `{"x":1}`, nil, "/y", "missing required member"},
		{"missing position", reflect.TypeFor[point](), `[1]`, nil, "/1", `missing required param "y"`},
		{"too many", reflect.TypeFor[point](), `[1,2,null,"",5]`, nil, "", "too many params: expected at most 4, got 5"},
		{"unknown member", reflect.TypeFor[point](), `{"x":1,"y":2,"w":3}`, nil, "/w", "unknown member"},
		{"wrong kind", reflect.TypeFor[point](), `{"x":"one","y":2}`, nil, "/x", "expected integer, got string"},
		{"wrong kind by position", reflect.TypeFor[point](), `[1,true]`, nil, "/1", "expected integer, got boolean"},
		{"out of range", reflect.TypeFor[embedded](), `[1,2,null,"",1e400]`, nil, "/4", "value out of range"},
		{"required, none", reflect.TypeFor[point](), "", nil, "", "params are required"},
		{"slice", reflect.TypeFor[[]int](), `[1,2]`, []int{1, 2}, "", ""},
		{"slice, object", reflect.TypeFor[[]int](), `{"a":1}`, nil, "", "expected an array, got an object"},
		{"map", reflect.TypeFor[map[string]int](), `{"a":1}`, map[string]int{"a": 1}, "", ""},
		{"map, array", reflect.TypeFor[map[string]int](), `[1]`, nil, "", "expected an object, got an array"},
		{"raw", reflect.TypeFor[json.RawMessage](), `[1, 2]`, json.RawMessage(`[1, 2]`), "", ""},
		{"scalar", reflect.TypeFor[string](), `["s"]`, "s", "", ""},
		{"scalar, two", reflect.TypeFor[string](), `["s","t"]`, nil, "", "expected an array of exactly 1 element"},
		{"scalar, none", reflect.TypeFor[string](), "", nil, "", "expected an array of 1 element, got no params"},
		{"scalar, wrong kind", reflect.TypeFor[int](), `["s"]`, nil, "/0", "expected integer, got string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(c.typ)
			p := reflect.New(c.typ)
			var raw []byte
			if c.params != "" {
				raw = []byte(c.params)
			}
			err := d.Decode(raw, p.Interface())
			if c.want != nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if got := p.Elem().Interface(); !reflect.DeepEqual(got, c.want) {
					t.Fatalf("decoded %#v, want %#v", got, c.want)
				}
				return
			}
			if err == nil || err.Path != c.path || err.Problem != c.problem {
				t.Fatalf("Decode: %#v, want path %q problem %q", err, c.path, c.problem)
			}
		})
	}
}

// The analysis says how params may come and lists a struct's members.
func TestDecoderShape(t *testing.T) {
	d := NewDecoder(reflect.TypeFor[point]())
	var names []string
	var required []bool
	for _, f := range d.Fields() {
		names = append(names, f.Name)
		required = append(required, f.Required)
	}
	if !reflect.DeepEqual(names, []string{"x", "y", "name", "tag"}) || !reflect.DeepEqual(required, []bool{true, true, false, false}) {
		t.Fatalf("fields %v, required %v", names, required)
	}
	if !d.ByName() || !d.ByPosition() {
		t.Fatal("a struct takes params by name and by position")
	}
	if m := NewDecoder(reflect.TypeFor[map[string]int]()); !m.ByName() || m.ByPosition() {
		t.Fatal("a map takes params by name only")
	}
	if s := NewDecoder(reflect.TypeFor[[]int]()); s.ByName() || !s.ByPosition() {
		t.Fatal("a slice takes params by position only")
	}
}

// Decode never panics, and what it accepts by name is a JSON object.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"x":1,"y":2}`, `[1,2,"n","t"]`, `{"x":1e400}`, `[1,[2]]`, `{"name":null,"x":-0,"y":1}`} {
		f.Add([]byte(s))
	}
	d := NewDecoder(reflect.TypeFor[*point]())
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') || !json.Valid(raw) {
			return // the server passes only valid arrays and objects
		}
		var p *point
		if err := d.Decode(raw, &p); err == nil && p == nil {
			t.Fatalf("Decode(%s) succeeded without a value", raw)
		}
	})
}
