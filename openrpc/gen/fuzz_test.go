package gen_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/seedhq/jsonrpc/openrpc/gen"
)

// Named types the fuzzer's Go types draw on: recursion, an enum, a
// pointer chain, a type named like a builtin.
type (
	fuzzTree struct {
		Value    string      `json:"value"`
		Children []*fuzzTree `json:"children,omitempty"`
		Parent   *fuzzTree   `json:"parent"`
	}
	fuzzColor string
	fuzzList  struct {
		Next *fuzzList `json:"next"`
		N    int       `json:"n"`
	}
	uint struct {
		Error string `json:"error"`
		Type  int    `json:"type"`
	}
)

func (fuzzColor) JSONSchemaEnum() []any { return []any{"red", "green", "blue"} }

var fuzzLeaves = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int32](), reflect.TypeFor[uint8](),
	reflect.TypeFor[uint64](), reflect.TypeFor[float64](), reflect.TypeFor[string](), reflect.TypeFor[time.Time](),
	reflect.TypeFor[json.RawMessage](), reflect.TypeFor[any](), reflect.TypeFor[fuzzTree](), reflect.TypeFor[fuzzColor](),
	reflect.TypeFor[fuzzList](), reflect.TypeFor[uint](), reflect.TypeFor[[]byte](),
}

var fuzzNames = []string{"type", "Hydrated transactions", "_meta", "error", "json", "ctx", "link href", "Block", "x", "x_", "0day", "arguments", "p", "params"}

// fuzzType builds a Go type from the bytes of data (consumed as it goes).
func fuzzType(data *[]byte, depth int) reflect.Type {
	next := func() int {
		if len(*data) == 0 {
			return 0
		}
		b := (*data)[0]
		*data = (*data)[1:]
		return int(b)
	}
	k := next()
	if depth > 3 {
		k %= 2
	}
	switch k % 7 {
	case 2:
		return reflect.PointerTo(fuzzType(data, depth+1))
	case 3:
		return reflect.SliceOf(fuzzType(data, depth+1))
	case 4:
		return reflect.MapOf(reflect.TypeFor[string](), fuzzType(data, depth+1))
	case 5:
		n := next()%4 + 1
		var fields []reflect.StructField
		seen := map[string]bool{}
		for i := 0; i < n; i++ {
			name := fuzzNames[next()%len(fuzzNames)]
			if seen[name] {
				continue
			}
			seen[name] = true
			tag := name
			if next()%2 == 1 {
				tag += ",omitempty"
			}
			fields = append(fields, reflect.StructField{Name: "F" + string(rune('A'+i)), Type: fuzzType(data, depth+1), Tag: reflect.StructTag(`json:"` + tag + `"`)})
		}
		return reflect.StructOf(fields)
	}
	return fuzzLeaves[next()%len(fuzzLeaves)]
}

// fuzzDocument is the OpenRPC document of methods whose params and result
// are Go types, made by this repository's schema generator (as
// openrpc.Document does for registered methods).
func fuzzDocument(data []byte) []byte {
	g := openrpc.NewGenerator(openrpc.RefComponents)
	doc := &openrpc.Doc{OpenRPC: openrpc.Version, Info: openrpc.Info{Title: "fuzz", Version: "1"}}
	for i := 0; len(data) > 0 && i < 4; i++ {
		name := fuzzNames[int(data[0])%len(fuzzNames)] + "_" + string(rune('a'+i))
		structure := []string{"by-position", "by-name", "either"}[int(data[0])%3]
		data = data[1:]
		m := &openrpc.Method{Name: name, ParamStructure: structure, Params: []*openrpc.ContentDescriptor{}}
		pt := fuzzType(&data, 0)
		if pt.Kind() == reflect.Struct {
			for j := 0; j < pt.NumField(); j++ {
				f := pt.Field(j)
				tag := f.Tag.Get("json")
				m.Params = append(m.Params, &openrpc.ContentDescriptor{Name: strings.TrimSuffix(tag, ",omitempty"),
					Schema: g.FieldSchema(f), Required: !strings.HasSuffix(tag, ",omitempty") && f.Type.Kind() != reflect.Pointer})
			}
		} else {
			m.Params = append(m.Params, &openrpc.ContentDescriptor{Name: "value", Schema: g.SchemaOf(pt), Required: true})
		}
		if len(data) > 0 && data[0]%5 != 0 {
			m.Result = &openrpc.ContentDescriptor{Name: "result", Schema: g.SchemaOf(fuzzType(&data, 0))}
		}
		doc.Methods = append(doc.Methods, m)
	}
	doc.Components = &openrpc.Components{Schemas: g.Defs()}
	out, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return out
}

// FuzzGoFromOwnDocuments: any document this repository's schema
// generator produces from Go types gives Go that type-checks (against
// stand-ins of the few APIs generated code uses; TestCorpusGo checks the
// real ones with go vet), twice the same.
func FuzzGoFromOwnDocuments(f *testing.F) {
	for _, seed := range []string{"", "\x05\x04\x05\x03\x0a", "\x02\x03\x05\x03\x01\x02\x03\x04\x05", "\x00\x05\x04\x00\x01\x01\x02\x05\x01\x0b\x01\x0d",
		"\x01\x05\x03\x02\x00\x03\x04\x0a\x06\x02\x0c\x03\x05\x02\x01\x04\x05\x04\x05\x05\x05\x05\x05", "\x03\x06\x0a\x04\x0b\x02\x0e\x02\x0c"} {
		f.Add([]byte(seed))
	}
	checker := newStubChecker(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc := fuzzDocument(data)
		src, err := gen.Go(doc, gen.Options{})
		if err != nil {
			t.Fatalf("%v\ndocument: %s", err, doc)
		}
		again, _ := gen.Go(doc, gen.Options{})
		if string(src) != string(again) {
			t.Fatal("two generations differ")
		}
		if err := checker.check(src); err != nil {
			t.Fatalf("%v\ndocument: %s\n%s", err, doc, src)
		}
		if _, err := gen.TypeScript(doc, gen.Options{}); err != nil {
			t.Fatal(err)
		}
	})
}

// stubChecker type-checks generated files against small stand-ins of the
// packages they import (fast: no source of the real ones is loaded).
type stubChecker struct {
	fset *token.FileSet
	pkgs map[string]*types.Package
}

var stubs = map[string]string{
	"context":                            `package context; type Context interface{ Done() <-chan struct{} }`,
	"errors":                             `package errors; func New(string) error`,
	"fmt":                                `package fmt; func Errorf(string, ...any) error`,
	"encoding/json":                      `package json; type RawMessage []byte; func (m RawMessage) MarshalJSON() ([]byte, error); func (m *RawMessage) UnmarshalJSON([]byte) error`,
	"github.com/go-json-experiment/json": `package json; type Options interface{ opt() }; func Unmarshal([]byte, any, ...Options) error; func RejectUnknownMembers(bool) Options`,
	"github.com/seedhq/jsonrpc": `package jsonrpc
import "context"
type Client interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}
type Mux struct{}
type Conn struct{}
func Register[P, R any](mux *Mux, method string, fn func(ctx context.Context, params P) (R, error)) {}`,
}

func newStubChecker(t testing.TB) *stubChecker {
	c := &stubChecker{fset: token.NewFileSet(), pkgs: map[string]*types.Package{}}
	for _, path := range []string{"context", "errors", "fmt", "encoding/json", "github.com/go-json-experiment/json", "github.com/seedhq/jsonrpc"} {
		f, err := parser.ParseFile(c.fset, path+".go", stubs[path], 0)
		if err != nil {
			t.Fatal(err)
		}
		conf := types.Config{Importer: c, IgnoreFuncBodies: true}
		pkg, err := conf.Check(path, c.fset, []*ast.File{f}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.pkgs[path] = pkg
	}
	return c
}

func (c *stubChecker) Import(path string) (*types.Package, error) {
	if p, ok := c.pkgs[path]; ok {
		return p, nil
	}
	return nil, &types.Error{Msg: "no stand-in for " + path}
}

func (c *stubChecker) check(src []byte) error {
	f, err := parser.ParseFile(c.fset, "gen.go", src, 0)
	if err != nil {
		return err
	}
	conf := types.Config{Importer: c}
	_, err = conf.Check("gen", c.fset, []*ast.File{f}, nil)
	return err
}

// TestStubCheckerCatches: the fuzz test's checker refuses code that does
// not type-check against the stand-ins (so its passes mean something).
func TestStubCheckerCatches(t *testing.T) {
	c := newStubChecker(t)
	src, err := gen.Go(fuzzDocument([]byte("\x05\x04\x05\x03\x0a")), gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.check(src); err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(src), "c.c.Call(", "c.c.Cal(", 1)
	broken = strings.Replace(broken, "jsonrpc.Register(mux,", "jsonrpc.Register(nil, mux,", 1)
	if err := c.check([]byte(broken)); err == nil {
		t.Fatal("a call of a missing method type-checked")
	}
}
