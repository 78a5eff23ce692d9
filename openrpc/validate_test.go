package openrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

func probs(s string) []openrpc.Problem {
	var ps []openrpc.Problem
	for _, part := range strings.Split(s, ";") {
		if part == "" {
			continue
		}
		path, problem, _ := strings.Cut(part, "|")
		ps = append(ps, openrpc.Problem{Path: path, Problem: problem})
	}
	return ps
}

// TestValidateFeatures checks, for each supported JSON Schema feature, that
// a violation is reported with its exact JSON pointer and problem, and that
// a fitting value passes. The schemas come from Go types (richMux's put:
// every field kind) via the same path the middleware uses.
func TestValidateFeatures(t *testing.T) {
	doc, err := openrpc.Document(richMux(), openrpc.Info{Title: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	const base = `"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red"`
	cases := []struct {
		name, method, params, want string
	}{
		{"valid by name", "put", `{` + base + `}`, ""},
		{"valid with every optional", "put", `{` + base + `,"size":"M","level":3,"tags":["a"],"attrs":{"x":1},"note":null,"extra":[1,{}],"any":"x","temp":-5,"tree":{"value":1,"children":[{"value":2},null]},"pair":[1,2],"blob":"AQI=","quoted":"12","nested":{"X":true},"labels":{"a":"blue","b":null}}`, ""},
		{"type", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":5,"count":1,"color":"red"}`, "/name|expected string, got number"},
		{"required", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","count":1,"color":"red"}`, "/name|missing required member"},
		{"additionalProperties false", "put", `{` + base + `,"nmae":"x"}`, "/nmae|unknown member"},
		{"enum by method", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"pink"}`, `/color|must be one of "red", "green", "blue"`},
		{"enum by tag", "put", `{` + base + `,"size":"XL"}`, `/size|must be one of "S", "M", "L"`},
		{"integer", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1.5,"color":"red"}`, "/count|expected integer, got number"},
		{"integer as whole float", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":2.0,"color":"red"}`, ""},
		{"maximum of uint8", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":256,"color":"red"}`, "/count|must be <= 255"},
		{"minimum of uint8", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":-1,"color":"red"}`, "/count|must be >= 0"},
		{"minimum by tag", "put", `{` + base + `,"level":0}`, "/level|must be >= 1"},
		{"pattern", "put", `{"id":"ABC","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red"}`, "/id|must match the pattern ^[a-z]+$"},
		{"date-time", "put", `{"id":"abc","created":"yesterday","name":"n","count":1,"color":"red"}`, "/created|expected an RFC 3339 date-time"},
		{"maxItems by tag", "put", `{` + base + `,"tags":["a","b","c","d"]}`, "/tags|expected at most 3 items, got 4"},
		{"items", "put", `{` + base + `,"tags":["a",2]}`, "/tags/1|expected string, got number"},
		{"map values", "put", `{` + base + `,"attrs":{"x":"1"}}`, "/attrs/x|expected integer, got string"},
		{"fixed array", "put", `{` + base + `,"pair":[1]}`, "/pair|expected at least 2 items, got 1"},
		{"not nullable", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":null,"count":1,"color":"red"}`, "/name|expected string, got null"},
		{"custom schema", "put", `{` + base + `,"temp":-300}`, "/temp|must be >= -273.15"},
		{"recursive ref", "put", `{` + base + `,"tree":{"value":1,"children":[{"value":"x"}]}}`, "/tree/children/0/value|expected integer, got string"},
		{"recursive ref required", "grow", `{"value":1,"parent":{"children":[]}}`, "/parent/value|missing required member"},
		{"nullable ref wrong type", "put", `{` + base + `,"tree":5}`, "/tree|expected null or object, got number"},
		{"nested anonymous struct", "put", `{` + base + `,"nested":{"X":1}}`, "/nested/X|expected boolean, got number"},
		{"base64 string", "put", `{` + base + `,"blob":[1,2]}`, "/blob|expected string, got array"},
		{",string option", "put", `{` + base + `,"quoted":12}`, "/quoted|expected string, got number"},
		{"nullable enum", "put", `{` + base + `,"labels":{"a":"pink"}}`, `/labels/a|must be one of "red", "green", "blue", null`},
		{"escaped names in pointer", "put", `{` + base + `,"attrs":{"a/b~c":true}}`, "/attrs/a~1b~0c|expected integer, got boolean"},
		{"escaped member name matches", "put", `{"\u0069d":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red"}`, ""},
		{"several problems", "put", `{"id":1,"created":"2026-01-02T03:04:05Z","count":"x","color":"red","zz":0}`, "/id|expected string, got number;/count|expected integer, got string;/zz|unknown member;/name|missing required member"},

		{"positional valid", "subtract2", `[1,2]`, ""},
		{"positional type", "subtract2", `[1,"2"]`, "/1|expected number, got string"},
		{"positional too many", "subtract2", `[1,2,3]`, "|too many params: expected at most 2, got 3"},
		{"positional missing", "subtract2", `[1]`, `/1|missing required param "subtrahend"`},
		{"positional optional omitted", "put", `["abc","2026-01-02T03:04:05Z","n",1,"red"]`, ""},
		{"positional enum", "put", `["abc","2026-01-02T03:04:05Z","n",1,"red","XXL"]`, `/5|must be one of "S", "M", "L"`},
		{"params required", "subtract2", ``, "|params are required"},
		{"scalar by position", "old", `["w"]`, ""},
		{"scalar wrong type", "old", `[1]`, "/0|expected string, got number"},
		{"scalar not by name", "old", `{"word":"w"}`, "|expected an array, got an object"},
		{"variadic", "sum2", `[1,2,"3"]`, "/2|expected number, got string"},
		{"variadic not by name", "sum2", `{"a":1}`, "|expected an array, got an object"},
		{"map params", "counts", `{"a":1,"b":"2"}`, "/b|expected integer, got string"},
		{"map not by position", "counts", `[1]`, "|expected object, got array"},
		{"any params", "plain", `{"anything":[1,2]}`, ""},
		{"fixed array params", "pair", `[1,2.5]`, "/1|expected integer, got number"},
		{"nullable enum param", "paint", `{"color":"red","shade":null}`, ""},
	}
	mux := richMux()
	jsonrpc.Register(mux, "subtract2", func(_ context.Context, p struct {
		Minuend    float64 `json:"minuend"`
		Subtrahend float64 `json:"subtrahend"`
	}) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	jsonrpc.Register(mux, "sum2", func(_ context.Context, xs []float64) (float64, error) { return 0, nil })
	doc, err = openrpc.Document(mux, openrpc.Info{Title: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var params []byte
			if c.params != "" {
				params = []byte(c.params)
			}
			got, err := doc.CheckParams(c.method, params)
			if err != nil {
				t.Fatal(err)
			}
			if want := probs(c.want); !reflect.DeepEqual(got, want) {
				t.Errorf("CheckParams(%s, %s)\n got %q\nwant %q", c.method, c.params, got, want)
			}
		})
	}
}

// TestValidateMiddleware checks the error a client receives: -32602 with
// data listing each problem, and that the handler does not run.
func TestValidateMiddleware(t *testing.T) {
	mux := jsonrpc.NewMux()
	mux.Use(openrpc.Validate(mux))
	ran := 0
	jsonrpc.Register(mux, "subtract", func(_ context.Context, p struct {
		Minuend    float64 `json:"minuend"`
		Subtrahend float64 `json:"subtrahend"`
	}) (float64, error) {
		ran++
		return p.Minuend - p.Subtrahend, nil
	})
	c := pipeConn(t, &jsonrpc.Server{Handler: mux})
	ctx := context.Background()
	// Raw JSON, not a Go map: problems are listed in the order of the members.
	err := c.Call(ctx, "subtract", json.RawMessage(`{"minuend":"x","subtrahend":true}`), nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("got %v, want -32602", err)
	}
	if want := `[{"path":"/minuend","problem":"expected number, got string"},{"path":"/subtrahend","problem":"expected number, got boolean"}]`; string(e.Data) != want {
		t.Errorf("data %s\nwant %s", e.Data, want)
	}
	if want := "invalid params: /minuend: expected number, got string (and 1 more)"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
	if ran != 0 {
		t.Error("the handler ran despite invalid params")
	}
	var got float64
	if err := c.Call(ctx, "subtract", []float64{5, 3}, &got); err != nil || got != 2 {
		t.Errorf("valid call: %v, %v", got, err)
	}
}

// TestValidatePerMethod checks the opt-in per method and that a mux can be
// wrapped whole (methods registered before the middleware are covered).
func TestValidatePerMethod(t *testing.T) {
	mux := jsonrpc.NewMux()
	type P struct {
		N int `json:"n" jsonschema:"minimum=10"`
	}
	f := func(_ context.Context, p P) (int, error) { return p.N, nil }
	jsonrpc.Register(mux, "checked", f)
	jsonrpc.Register(mux, "unchecked", f)
	srv := &jsonrpc.Server{Handler: jsonrpc.Chain(mux, openrpc.Validate(mux, "checked"))}
	c := pipeConn(t, srv)
	ctx := context.Background()
	err := c.Call(ctx, "checked", P{N: 1}, nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || string(e.Data) != `[{"path":"/n","problem":"must be >= 10"}]` {
		t.Errorf("checked: %v", err)
	}
	var n int
	if err := c.Call(ctx, "unchecked", P{N: 1}, &n); err != nil || n != 1 {
		t.Errorf("unchecked: %v %v", n, err)
	}
	// Unknown methods still get -32601 from the mux.
	if err := c.Call(ctx, "nope", nil, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("unknown method: %v", err)
	}
}

func TestValidatorStandalone(t *testing.T) {
	s, err := openrpc.SchemaFor[Tree]()
	if err != nil {
		t.Fatal(err)
	}
	v, err := openrpc.Compile(s, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"value":1,"children":[{"value":2,"children":[{"value":"deep"}]}]}`: "/children/0/children/0/value|expected integer, got string",
		`{"value":1}`:             "",
		`[]`:                      "|expected object, got array",
		`{"value":1,"parent":{}}`: "/parent/value|missing required member",
		`{"value":1`:              "|invalid JSON",
	} {
		if got := v.Validate([]byte(in)); !reflect.DeepEqual(got, probs(want)) {
			t.Errorf("Validate(%s) = %q, want %q", in, got, probs(want))
		}
	}
}

// TestCompileFallback checks that a schema with a keyword the walker does
// not check (unevaluatedProperties) is validated by the fallback, with the
// same Problem shape, and that a schema neither can compile fails.
func TestCompileFallback(t *testing.T) {
	var s openrpc.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"integer"}},"unevaluatedProperties":false}`), &s); err != nil {
		t.Fatal(err)
	}
	v, err := openrpc.Compile(&s, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Validate([]byte(`{"a":1}`)); got != nil {
		t.Errorf("valid: %q", got)
	}
	got := v.Validate([]byte(`{"a":1,"b":2}`))
	if len(got) != 1 || got[0].Path != "" || !strings.Contains(got[0].Problem, "unevaluatedProperties") {
		t.Errorf("invalid: %q, want one problem naming unevaluatedProperties", got)
	}
	if _, err := openrpc.Compile(&openrpc.Schema{Ref: "#/$defs/Missing"}, nil, ""); err == nil {
		t.Error("an unresolved $ref compiled")
	}
}

func TestMaxProblems(t *testing.T) {
	v, err := openrpc.Compile(&openrpc.Schema{Type: "array", Items: &openrpc.Schema{Type: "string"}}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got := v.Validate([]byte("[" + strings.Repeat("1,", 100) + "1]"))
	if len(got) != openrpc.MaxProblems {
		t.Errorf("%d problems, want %d", len(got), openrpc.MaxProblems)
	}
}

// TestValidateRegressions pins the wrong answers of the first validator:
// each accepted a value its schema forbids.
func TestValidateRegressions(t *testing.T) {
	cases := []struct{ name, schema, data string }{
		{"anyOf ignored when oneOf present", `{"anyOf":[{"type":"string"}],"oneOf":[{"type":"integer"},{"type":"boolean"}]}`, `1`},
		{"const 0 accepting {}", `{"const":0}`, `{}`},
		{"const 0 accepting []", `{"const":0}`, `[]`},
		{"enum on objects", `{"enum":[{"a":1}]}`, `{"a":2}`},
		{"enum on arrays", `{"enum":[[1,2]]}`, `[2,1]`},
		{"const on objects", `{"const":{"a":[1]}}`, `{"a":[1],"b":0}`},
		{"multipleOf overflowing to Inf", `{"type":"integer","multipleOf":0.123456789}`, `1e308`},
		{"uniqueItems 1.0 and 1", `{"uniqueItems":true}`, `[1.0,1]`},
		{"uniqueItems objects in any order", `{"uniqueItems":true}`, `[{"a":1,"b":2},{"b":2,"a":1.0}]`},
		{"maximum 2^53 and 2^53+1", `{"maximum":9007199254740992}`, `9007199254740993`},
		{"exclusiveMaximum at a decimal", `{"exclusiveMaximum":0.1}`, `0.1000000000000000001`},
		{"minimum of a tiny negative", `{"minimum":0}`, `-1e-400`},
		{"integer that rounds to one", `{"type":"integer"}`, `1.0000000000000001`},
		{"enum number 2^53+1", `{"enum":[9007199254740992]}`, `9007199254740993`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s openrpc.Schema
			if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
				t.Fatal(err)
			}
			v, err := openrpc.Compile(&s, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Validate([]byte(c.data)); len(got) == 0 {
				t.Errorf("%s accepted %s", c.schema, c.data)
			}
		})
	}
	// And what must pass.
	for schema, data := range map[string]string{
		`{"const":1}`:                               `1.0`,
		`{"enum":[{"a":1,"b":[true]}]}`:             `{"b":[true],"a":1e0}`,
		`{"maximum":9007199254740992}`:              `9007199254740992.0`,
		`{"multipleOf":0.01}`:                       `19.99`,
		`{"type":"integer","multipleOf":3}`:         `3e400`,
		`{"uniqueItems":true}`:                      `[1,"1",[1],{"1":1},true,null]`,
		`{"minimum":-9007199254740993}`:             `-9007199254740992`,
		`{"type":"integer","exclusiveMinimum":0}`:   `1e-0`,
		`{"required":["a"],"dependentRequired":{}}`: `{"a":null}`,
	} {
		var s openrpc.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatal(err)
		}
		v, err := openrpc.Compile(&s, nil, "")
		if err != nil {
			t.Fatal(schema, err)
		}
		if got := v.Validate([]byte(data)); got != nil {
			t.Errorf("%s rejected %s: %q", schema, data, got)
		}
	}
}
