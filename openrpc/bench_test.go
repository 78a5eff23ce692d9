package openrpc_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
)

// BenchmarkValidation measures the cost of params validation: the same
// calls through a mux without and with openrpc.Validate (decoding and the
// handler included, transport excluded).
//
//	go test -run '^$' -bench Validation -count 6 ./openrpc
func BenchmarkValidation(b *testing.B) {
	calls := []struct{ name, method, params string }{
		{"subtract-by-name", "subtract", `{"minuend":42,"subtrahend":23}`},
		{"subtract-by-position", "subtract", `[42,23]`},
		{"sum-10", "sum", `[1,2,3,4,5,6,7,8,9,10]`},
		{"put-item", "put", `{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red","size":"M","tags":["a","b"],"attrs":{"x":1},"tree":{"value":1,"children":[{"value":2}]}}`},
	}
	build := func(validate bool) *jsonrpc.Mux {
		mux := jsonrpc.NewMux()
		if validate {
			mux.Use(openrpc.Validate(mux))
		}
		demo.RegisterMethods(mux)
		jsonrpc.Register(mux, "put", func(_ context.Context, it Item) (bool, error) { return true, nil })
		return mux
	}
	muxes := map[string]*jsonrpc.Mux{"plain": build(false), "validated": build(true)}
	for _, c := range calls {
		for _, mode := range []string{"plain", "validated"} {
			mux := muxes[mode]
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				req := &jsonrpc.Request{Method: c.method, Params: []byte(c.params)}
				ctx := context.Background()
				if _, err := mux.ServeRPC(ctx, req); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := mux.ServeRPC(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkValidator measures the validator alone.
func BenchmarkValidator(b *testing.B) {
	doc, err := openrpc.Document(richMux(), openrpc.Info{Title: "t", Version: "1"})
	if err != nil {
		b.Fatal(err)
	}
	v, err := openrpc.CompileMethod(doc.Method("put"), doc.Components.Schemas)
	if err != nil {
		b.Fatal(err)
	}
	params := []byte(`{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red","size":"M","tags":["a","b"],"attrs":{"x":1},"tree":{"value":1,"children":[{"value":2}]}}`)
	b.SetBytes(int64(len(params)))
	b.ReportAllocs()
	for b.Loop() {
		if p := v.Check(params); p != nil {
			b.Fatal(p)
		}
	}
}

// BenchmarkCheckSubtract measures the validator of a small method alone.
func BenchmarkCheckSubtract(b *testing.B) {
	doc, err := openrpc.Document(demo.Shared{}.NewMux(), demo.Info)
	if err != nil {
		b.Fatal(err)
	}
	v, err := openrpc.CompileMethod(doc.Method("subtract"), nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{`{"minuend":42,"subtrahend":23}`, `[42,23]`} {
		b.Run(p[:1], func(b *testing.B) {
			params := []byte(p)
			b.ReportAllocs()
			for b.Loop() {
				if p := v.Check(params); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}

// BenchmarkEngines compares the walker with the fallback (jsonschema-go's
// Resolved.Validate) on the same schema and value: the schema with
// "unevaluatedProperties": true (which allows everything, but is a keyword
// only the fallback checks) is validated by the fallback.
//
//	go test -run '^$' -bench Engines -count 6 ./openrpc | benchstat -col /engine -
func BenchmarkEngines(b *testing.B) {
	const schema = `{"type":"object","additionalProperties":false,"required":["id","name","count","color"],
		"properties":{"id":{"type":"string","pattern":"^[a-z]+$"},"created":{"type":"string","format":"date-time"},
		"name":{"type":"string"},"count":{"type":"integer","minimum":0,"maximum":255},"color":{"enum":["red","green","blue"]},
		"tags":{"type":"array","items":{"type":"string"},"maxItems":3},"attrs":{"type":"object","additionalProperties":{"type":"integer"}},
		"tree":{"$ref":"#/$defs/Tree"}},
		"$defs":{"Tree":{"type":"object","required":["value"],"properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/Tree"}]}}}}}`
	data := []byte(`{"id":"abc","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red","tags":["a","b"],"attrs":{"x":1},"tree":{"value":1,"children":[{"value":2}]}}`)
	for _, e := range []struct{ name, schema string }{
		{"walker", schema + "}"},
		{"jsonschema-go", schema + `,"unevaluatedProperties":true}`},
	} {
		var s openrpc.Schema
		if err := json.Unmarshal([]byte(e.schema), &s); err != nil {
			b.Fatal(err)
		}
		v, err := openrpc.Compile(&s, nil, "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run("engine="+e.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if p := v.Validate(data); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}
