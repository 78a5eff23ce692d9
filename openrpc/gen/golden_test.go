package gen_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc/openrpc/gen"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// TestGolden compares the generated Go and TypeScript of the documents in
// testdata/golden with the files beside them (go test -update rewrites
// them), and the warnings with the .warnings files.
func TestGolden(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if len(docs) == 0 {
		t.Fatal("no golden documents")
	}
	for _, path := range docs {
		base := strings.TrimSuffix(path, ".json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var warnings strings.Builder
			opts := gen.Options{Warn: func(s string) { warnings.WriteString(s + "\n") }}
			goSrc, err := gen.Go(doc, opts)
			if err != nil {
				t.Fatal(err)
			}
			tsSrc, err := gen.TypeScript(doc, gen.Options{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, base+".go.golden", goSrc)
			golden(t, base+".ts.golden", tsSrc)
			golden(t, base+".warnings", []byte(warnings.String()))
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the generated output (go test -update rewrites it); got:\n%s", path, got)
	}
}
