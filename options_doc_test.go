package jsonrpc_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocListsEveryOption fails when an exported option (a function that
// returns one of the option types), a Server field or a field of an options
// struct is missing from doc.go, so the package documentation keeps listing
// every setting with its default.
func TestDocListsEveryOption(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	optionTypes := map[string]bool{"DialOption": true, "ListenOption": true}
	structs := map[string]bool{"Server": true, "StreamOptions": true, "StreamableHTTPOptions": true, "WebSocketOptions": true, "SubscribeOptions": true, "SubscriptionsOptions": true, "SubscriptionKindOptions": true, "LogOptions": true}
	var names []string
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil || !d.Name.IsExported() || d.Type.Results == nil || len(d.Type.Results.List) != 1 {
					continue
				}
				if id, ok := d.Type.Results.List[0].Type.(*ast.Ident); ok && optionTypes[id.Name] {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !structs[ts.Name.Name] {
						continue
					}
					for _, field := range ts.Type.(*ast.StructType).Fields.List {
						for _, n := range field.Names {
							if n.IsExported() {
								names = append(names, ts.Name.Name+"."+n.Name)
							}
						}
					}
				}
			}
		}
	}
	if len(names) < 50 {
		t.Fatalf("found only %d options and fields: the test is not reading the package", len(names))
	}
	for _, n := range names {
		field := n[strings.LastIndex(n, ".")+1:]
		if !regexp.MustCompile(`\b` + field + `\b`).Match(doc) {
			t.Errorf("doc.go does not list %s (with its default, in the Options or Limits section)", n)
		}
	}
}
