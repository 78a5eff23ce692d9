package openrpc_test

import (
	"encoding/json"
	"math/big"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/openrpc"
)

func schemaJSON(t *testing.T, s *openrpc.Schema) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type embedded struct {
	Inner string `json:"inner"`
}

type Shadow struct {
	embedded
	*Base
	Inner  int    `json:"inner,omitempty"` // shallower: wins over embedded.Inner
	Tagged string `json:"tagged"`
}

type Named struct {
	Embedded embedded `json:"emb"`
}

type intKeys map[int]string

// TestSchemaOf pins the schema of each supported Go type shape.
func TestSchemaOf(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"bool", reflect.TypeFor[bool](), `{"type":"boolean"}`},
		{"int", reflect.TypeFor[int](), `{"type":"integer"}`},
		{"int8", reflect.TypeFor[int8](), `{"type":"integer","minimum":-128,"maximum":127}`},
		{"uint16", reflect.TypeFor[uint16](), `{"type":"integer","minimum":0,"maximum":65535}`},
		{"uint64", reflect.TypeFor[uint64](), `{"type":"integer","minimum":0}`},
		{"float32", reflect.TypeFor[float32](), `{"type":"number"}`},
		{"string", reflect.TypeFor[string](), `{"type":"string"}`},
		{"pointer", reflect.TypeFor[*string](), `{"type":["null","string"]}`},
		{"slice", reflect.TypeFor[[]int](), `{"type":"array","items":{"type":"integer"}}`},
		{"array", reflect.TypeFor[[3]bool](), `{"type":"array","items":{"type":"boolean"},"minItems":3,"maxItems":3}`},
		{"bytes", reflect.TypeFor[[]byte](), `{"type":"string","contentEncoding":"base64"}`},
		{"map", reflect.TypeFor[map[string]float64](), `{"type":"object","additionalProperties":{"type":"number"}}`},
		{"map with int keys", reflect.TypeFor[intKeys](), `{"type":"object","additionalProperties":{"type":"string"}}`},
		{"time", reflect.TypeFor[time.Time](), `{"type":"string","format":"date-time"}`},
		{"raw message", reflect.TypeFor[json.RawMessage](), `true`},
		{"any", reflect.TypeFor[any](), `true`},
		{"slice of any", reflect.TypeFor[[]any](), `{"type":"array","items":true}`},
		{"text marshaler", reflect.TypeFor[net.IP](), `{"type":"string"}`},
		{"json marshaler", reflect.TypeFor[*big.Int](), `true`},
		{"enum method", reflect.TypeFor[Color](), `{"type":"string","enum":["red","green","blue"]}`},
		{"nullable enum", reflect.TypeFor[*Color](), `{"type":["null","string"],"enum":["red","green","blue",null]}`},
		{"schema method", reflect.TypeFor[Celsius](), `{"type":"number","description":"degrees Celsius","minimum":-273.15}`},
		{"named struct", reflect.TypeFor[Tree](), `{"$ref":"#/components/schemas/Tree"}`},
		{"nullable named struct", reflect.TypeFor[*Tree](), `{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/Tree"}]}`},
		{"anonymous struct", reflect.TypeFor[struct {
			A int `json:"a"`
			B int `json:"-"`
			c int
		}](), `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := openrpc.NewGenerator(openrpc.RefComponents)
			if got := schemaJSON(t, g.SchemaOf(c.typ)); got != c.want {
				t.Errorf("SchemaOf(%v)\n got %s\nwant %s", c.typ, got, c.want)
			}
			if err := g.Err(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSchemaEmbeddedAndShadowing(t *testing.T) {
	g := openrpc.NewGenerator(openrpc.RefDefs)
	g.SchemaOf(reflect.TypeFor[Shadow]())
	got := schemaJSON(t, g.Defs()["Shadow"])
	// Base's fields are flattened in declaration order; embedded.Inner is
	// hidden by the shallower Inner; Base is a pointer yet its fields keep
	// their own required rule (as encoding/json/v2 decodes them).
	want := `{"type":"object","properties":{"id":{"type":"string","description":"The id, unique.","pattern":"^[a-z]+$"},"created":{"type":"string","format":"date-time"},"inner":{"type":"integer"},"tagged":{"type":"string"}},"required":["id","created","tagged"],"additionalProperties":false}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	fields := openrpc.StructFields(reflect.TypeFor[Shadow]())
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "id,created,inner,tagged" {
		t.Errorf("StructFields: %v", names)
	}
}

func TestSchemaRecursiveStandalone(t *testing.T) {
	s, err := openrpc.SchemaFor[Tree]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Tree"}]}},"parent":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Tree"}]}},"$defs":{"Tree":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Tree"}]}},"parent":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Tree"}]}},"required":["value"],"additionalProperties":false}},"required":["value"],"additionalProperties":false}`
	if got := schemaJSON(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSchemaNameClash(t *testing.T) {
	type Tree struct{ X int } // same name as the package-level Tree
	g := openrpc.NewGenerator(openrpc.RefComponents)
	a := g.SchemaOf(reflect.TypeFor[Named]())
	b := g.SchemaOf(reflect.TypeFor[Tree]())
	c := g.SchemaOf(reflect.TypeFor[struct {
		T Tree `json:"t"`
	}]())
	if a.Ref != "#/components/schemas/Named" || b.Ref == "" || b.Ref == "#/components/schemas/Tree" && len(g.Defs()) < 3 {
		t.Errorf("refs %q %q", a.Ref, b.Ref)
	}
	if got := schemaJSON(t, c); !strings.Contains(got, b.Ref) {
		t.Errorf("the same type got another name: %s vs %s", got, b.Ref)
	}
	// A second, different Tree gets a qualified name.
	d := g.SchemaOf(reflect.TypeFor[Item]())
	if d.Ref != "#/components/schemas/Item" {
		t.Fatal(d.Ref)
	}
	item := schemaJSON(t, g.Defs()["Item"])
	if !strings.Contains(item, `"#/components/schemas/openrpc_test_Tree"`) {
		t.Errorf("Item's Tree should be qualified after the clash: %s", item)
	}
}

func TestSchemaTagSettings(t *testing.T) {
	type P struct {
		A string   `json:"a" jsonschema:"A plain description, with a comma"`
		B string   `json:"b" jsonschema:"description=Three, two, one.,minLength=1,maxLength=3,format=email,title=Bee"`
		C int      `json:"c" jsonschema:"enum=1|2|3,deprecated"`
		D []string `json:"d" jsonschema:"minItems=1"`
		E float64  `json:"e" jsonschema:"minimum=0.5,maximum=1e3"`
		F bool     `json:"f" jsonschema:"enum=true"`
	}
	s, err := openrpc.SchemaFor[P]()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"a":{"type":"string","description":"A plain description, with a comma"},"b":{"type":"string","title":"Bee","description":"Three, two, one.","minLength":1,"maxLength":3,"format":"email"},"c":{"type":"integer","deprecated":true,"enum":[1,2,3]},"d":{"type":"array","items":{"type":"string"},"minItems":1},"e":{"type":"number","minimum":0.5,"maximum":1000},"f":{"type":"boolean","enum":[true]}},"required":["a","b","c","d","e","f"],"additionalProperties":false}`
	if got := schemaJSON(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	v, err := openrpc.Compile(s, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got := v.Validate([]byte(`{"a":"","b":"four","c":4,"d":[],"e":0.25,"f":false}`))
	want2 := probs(`/b|must be at most 3 characters long;/c|must be one of 1, 2, 3;/d|expected at least 1 items, got 0;/e|must be >= 0.5;/f|must be true`)
	if !reflect.DeepEqual(got, want2) {
		t.Errorf("Validate\n got %q\nwant %q", got, want2)
	}
}

func TestSchemaUnsupported(t *testing.T) {
	type P struct {
		F  func()         `json:"f"`
		C  chan int       `json:"c"`
		D  time.Duration  `json:"d"`
		M  map[[2]int]int `json:"m"`
		Z  complex128     `json:"z"`
		OK int            `json:"ok"`
	}
	g := openrpc.NewGenerator(openrpc.RefDefs)
	g.SchemaOf(reflect.TypeFor[P]())
	err := g.Err()
	if err == nil {
		t.Fatal("no error for unsupported types")
	}
	for _, want := range []string{"func()", "chan int", "time.Duration", "map key type [2]int", "complex128"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	// The rest of the schema is still there.
	if got := schemaJSON(t, g.Defs()["P"].Properties["ok"]); got != `{"type":"integer"}` {
		t.Errorf("ok: %s", got)
	}
}
