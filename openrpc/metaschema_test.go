package openrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
)

// The official OpenRPC meta-schema (npm package @open-rpc/meta-schema) and
// the JSON Schema meta-schema its JSONSchema definition refers to
// (@json-schema-tools/meta-schema) are committed in testdata/metaschema, so
// the documents are checked against them by every `go test`. After `npm ci`
// in testdata (CI does it), the copies are compared with the packages and
// every verdict is cross-checked with ajv, a second validator.

const nodeModules = "testdata/node_modules"

// errNoAjv is checkDocument's ajv verdict when ajv cannot run.
var errNoAjv = errors.New("ajv not run: `npm ci` in openrpc/testdata and node are needed")

// haveNode reports whether the npm packages and node are there; without
// them the ajv cross-check and the copies' check are skipped (a failure
// when JSONRPC_REQUIRE_NODE is set, as in CI).
func haveNode(t *testing.T) bool {
	t.Helper()
	missing := ""
	if _, err := os.Stat(filepath.Join(nodeModules, "@open-rpc/meta-schema")); err != nil {
		missing = "openrpc/testdata/node_modules is missing: run `npm ci` in openrpc/testdata"
	} else if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	}
	if missing != "" && os.Getenv("JSONRPC_REQUIRE_NODE") != "" {
		t.Fatal(missing)
	}
	return missing == ""
}

func runNode(t *testing.T, stdin []byte, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = "testdata"
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && stderr.Len() > 0 {
		err = errors.New(err.Error() + ": " + stderr.String())
	}
	return out, err
}

// metaSchema returns the OpenRPC meta-schema, resolved for validation by
// jsonschema-go (as draft-07, which both meta-schemas are written in).
func metaSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile("testdata/metaschema/openrpc.json")
	if err != nil {
		t.Fatal(err)
	}
	toolsRaw, err := os.ReadFile("testdata/metaschema/json-schema-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	load := func(data []byte) *jsonschema.Schema {
		var s jsonschema.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		s.Schema = "http://json-schema.org/draft-07/schema#"
		return &s
	}
	root, tools := load(raw), load(toolsRaw)
	if root.ID != "https://meta.open-rpc.org/" || len(root.Definitions) < 10 {
		t.Fatalf("unexpected meta-schema: $id %q, %d definitions", root.ID, len(root.Definitions))
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{Loader: func(u *url.URL) (*jsonschema.Schema, error) {
		if u.Host == "meta.json-schema.tools" {
			return tools, nil
		}
		return nil, errors.New("no network in tests: " + u.String())
	}})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestMetaSchemaCopies checks that the committed meta-schemas are those of
// the npm packages.
func TestMetaSchemaCopies(t *testing.T) {
	if !haveNode(t) {
		t.Skip(errNoAjv)
	}
	fromNode, err := runNode(t, nil, "metaschema.js")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := os.ReadFile(filepath.Join(nodeModules, "@json-schema-tools/meta-schema/schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for copyName, want := range map[string][]byte{"openrpc.json": fromNode, "json-schema-tools.json": tools} {
		got, err := os.ReadFile(filepath.Join("testdata/metaschema", copyName))
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("testdata/metaschema/%s differs from the npm package: refresh the copy (see testdata/metaschema/README.md)", copyName)
		}
	}
}

// checkDocument validates doc (JSON) with jsonschema-go and, when it can
// run, ajv, and returns their verdicts (ajv's is errNoAjv when it did not
// run).
func checkDocument(t *testing.T, rs *jsonschema.Resolved, doc []byte) (goErr, ajvErr error) {
	t.Helper()
	var inst any
	if err := json.Unmarshal(doc, &inst); err != nil {
		t.Fatal(err)
	}
	goErr = rs.Validate(inst)
	if !haveNode(t) {
		return goErr, errNoAjv
	}
	out, err := runNode(t, doc, "validate.js")
	if err != nil {
		ajvErr = errors.New(string(out))
	}
	return goErr, ajvErr
}

func discoverDemo(t *testing.T) []byte {
	t.Helper()
	mux := demo.Shared{}.NewMux()
	srv := &jsonrpc.Server{Handler: mux}
	c := pipeConn(t, srv)
	var doc json.RawMessage
	if err := c.Call(context.Background(), "rpc.discover", nil, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestDemoDocumentValidatesAgainstMetaSchema(t *testing.T) {
	rs := metaSchema(t)
	doc := discoverDemo(t)
	goErr, ajvErr := checkDocument(t, rs, doc)
	if goErr != nil {
		t.Errorf("jsonschema-go: the demo's document does not validate: %v", goErr)
	}
	if ajvErr != nil && ajvErr != errNoAjv {
		t.Errorf("ajv: the demo's document does not validate:\n%v", ajvErr)
	}
	// The document is the demo's: every method, with descriptions.
	d, err := openrpc.ParseDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"subtract", "sum", "echo", "sleep", "tools/list", "tools/call", "rpc.discover"} {
		m := d.Method(name)
		if m == nil || m.Summary == "" {
			t.Errorf("method %s missing or without summary: %+v", name, m)
		}
	}
}

// TestMetaSchemaCatchesBrokenDocuments shows that the check can fail: each
// broken variant of a valid document is rejected by both validators.
func TestMetaSchemaCatchesBrokenDocuments(t *testing.T) {
	rs := metaSchema(t)
	good := discoverDemo(t)
	breaks := map[string]func(d map[string]any){
		"no info.version": func(d map[string]any) { delete(d["info"].(map[string]any), "version") },
		"bad openrpc":     func(d map[string]any) { d["openrpc"] = "9.9.9" },
		"bad paramStructure": func(d map[string]any) {
			d["methods"].([]any)[0].(map[string]any)["paramStructure"] = "sideways"
		},
		"param without schema": func(d map[string]any) {
			for _, m := range d["methods"].([]any) {
				if ps := m.(map[string]any)["params"].([]any); len(ps) > 0 {
					delete(ps[0].(map[string]any), "schema")
					return
				}
			}
		},
		"schema of wrong type": func(d map[string]any) {
			for _, m := range d["methods"].([]any) {
				m.(map[string]any)["result"].(map[string]any)["schema"] = map[string]any{"type": 5}
				return
			}
		},
		"unknown member": func(d map[string]any) { d["method"] = []any{} },
	}
	for name, brk := range breaks {
		t.Run(name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(good, &d); err != nil {
				t.Fatal(err)
			}
			brk(d)
			bad, _ := json.Marshal(d)
			goErr, ajvErr := checkDocument(t, rs, bad)
			if goErr == nil {
				t.Error("jsonschema-go accepted the broken document")
			}
			if ajvErr == nil {
				t.Error("ajv accepted the broken document")
			}
		})
	}
}

// TestRichDocumentValidatesAgainstMetaSchema covers what the demo does not:
// recursive types, enums, nullable refs, maps, arrays, deprecated methods,
// positional scalars, examples and errors.
func TestRichDocumentValidatesAgainstMetaSchema(t *testing.T) {
	rs := metaSchema(t)
	doc, err := openrpc.Document(richMux(), openrpc.Info{Title: "rich", Version: "0.1", License: &openrpc.License{Name: "MIT"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"$ref":"#/components/schemas/Tree"`) {
		t.Fatalf("no shared schema reference in %s", b)
	}
	goErr, ajvErr := checkDocument(t, rs, b)
	if goErr != nil {
		t.Errorf("jsonschema-go: %v", goErr)
	}
	if ajvErr != nil && ajvErr != errNoAjv {
		t.Errorf("ajv:\n%v", ajvErr)
	}
}
