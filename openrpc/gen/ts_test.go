package gen_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/seedhq/jsonrpc/openrpc/gen"
)

// tsc returns the path of the TypeScript compiler of testdata's npm
// package, or skips (fails when JSONRPC_REQUIRE_NODE is set).
func tsc(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "node_modules", "typescript", "bin", "tsc"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("JSONRPC_REQUIRE_NODE") != "" {
			t.Fatal("no tsc: run npm ci --prefix openrpc/gen/testdata")
		}
		t.Skip("no tsc: run npm ci --prefix openrpc/gen/testdata")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	return path
}

func node(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestTypeScript generates TypeScript for every document of the corpus,
// the golden documents and the demo's, and has tsc --strict check them
// all; then Node runs the demo's client against the demo over HTTP and
// WebSocket: the same results as the Go client's, and an RpcError for an
// unknown method.
func TestTypeScript(t *testing.T) {
	compiler := tsc(t)
	docs := corpus(t)
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, f := range golden {
		docs["golden-"+strings.TrimSuffix(filepath.Base(f), ".json")] = f
	}
	dir := t.TempDir()
	var files []string
	for name, path := range docs {
		doc, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		src, err := gen.TypeScript(doc, gen.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		write(t, filepath.Join(dir, name+".ts"), src)
		files = append(files, name+".ts")
	}
	mux := demo.Shared{}.NewMux()
	d, err := openrpc.Document(mux, demo.Info)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(d)
	src, err := gen.TypeScript(doc, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "demo.ts"), src)
	strict := []string{compiler, "--strict", "--target", "es2022", "--module", "es2022", "--lib", "es2022,dom", "--skipLibCheck"}
	node(t, dir, append(append(strict, "--noEmit"), files...)...)
	node(t, dir, append(strict, "--outDir", "out", "demo.ts")...)

	srv := &jsonrpc.Server{Handler: mux}
	httpSrv := httptest.NewServer(srv)
	defer httpSrv.Close()
	wsSrv := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer wsSrv.Close()
	script, err := os.ReadFile(filepath.Join("testdata", "roundtrip", "demo_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "run.mjs"), script)
	out := node(t, dir, "--experimental-websocket", "run.mjs", httpSrv.URL, "ws"+strings.TrimPrefix(wsSrv.URL, "http"))
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := map[string]any{"diff": 19.0, "total": 6.5, "echo": map[string]any{"a": []any{1.0, "two", nil}}, "big": "xxxxx",
		"err":     map[string]any{"code": -32000.0, "message": "busy", "data": map[string]any{"retry": true}},
		"unknown": map[string]any{"code": float64(jsonrpc.CodeMethodNotFound)}}
	if len(lines) != 2 {
		t.Fatalf("node printed %q", out)
	}
	for i, line := range lines {
		var got map[string]any
		if err := json.Unmarshal([]byte(line), &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("transport %d: got %s, want %v (%v)", i, line, want, err)
		}
	}
}
