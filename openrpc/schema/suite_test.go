package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// TestJSONSchemaSuite runs the official JSON Schema Test Suite (draft
// 2020-12, vendored in testdata/JSON-Schema-Test-Suite) through Compile and
// Validate. Every group must compile (by the walker or by the fallback) and
// every test answer right, except the groups listed in unsupportedGroups;
// the log has a line per file: groups passed by the walker, by the
// fallback, failed and unsupported.
//
//	go test -run JSONSchemaSuite -v ./openrpc
func TestJSONSchemaSuite(t *testing.T) {
	files, err := filepath.Glob("../testdata/JSON-Schema-Test-Suite/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files: %v", err)
	}
	type tally struct{ fast, fallback, fail, unsupported, tests, wrong int }
	var total tally
	var lines []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var groups []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct {
				Description string
				Data        json.RawMessage
				Valid       bool
			}
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatal(file, err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".json")
		var ft tally
		for _, g := range groups {
			name := base + "/" + g.Description
			why, expected := unsupportedGroups[name]
			var s Schema
			err := json.Unmarshal(g.Schema, &s)
			var v *Validator
			if err == nil {
				v, err = Compile(&s, nil, "")
			}
			if err != nil {
				ft.unsupported++
				if !expected {
					t.Errorf("%s: does not compile: %v", name, err)
				}
				continue
			}
			if expected {
				t.Errorf("%s: listed as unsupported (%s) but compiles: remove it from the list", name, why)
			}
			wrong := 0
			for _, c := range g.Tests {
				ft.tests++
				probs := v.Validate(c.Data)
				if (len(probs) == 0) != c.Valid {
					wrong++
					t.Errorf("%s: %s: %s: got %v (problems %q), want valid=%v\n\tschema %s", name, c.Description, c.Data, len(probs) == 0, probs, c.Valid, g.Schema)
				}
			}
			ft.wrong += wrong
			switch {
			case wrong > 0:
				ft.fail++
			case v.usesFallback():
				ft.fallback++
			default:
				ft.fast++
			}
		}
		lines = append(lines, fmt.Sprintf("%-24s walker %3d  fallback %3d  fail %d  unsupported %d", base, ft.fast, ft.fallback, ft.fail, ft.unsupported))
		total.fast += ft.fast
		total.fallback += ft.fallback
		total.fail += ft.fail
		total.unsupported += ft.unsupported
		total.tests += ft.tests
		total.wrong += ft.wrong
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("groups: walker %d, fallback %d, failed %d, unsupported %d; tests run %d, wrong answers %d",
		total.fast, total.fallback, total.fail, total.unsupported, total.tests, total.wrong)
}

// unsupportedGroups are the suite's groups that Compile refuses, and why:
// all refer to remote schemas (the meta-schema, or the suite's
// http://localhost:1234 server), and Compile loads nothing remote.
const remote = "remote $ref"

var unsupportedGroups = map[string]string{
	"defs/validate definition against metaschema":                               remote,
	"dynamicRef/strict-tree schema, guards against misspelled properties":       remote,
	"dynamicRef/tests for implementation dynamic anchor and reference link":     remote,
	"dynamicRef/$ref and $dynamicAnchor are independent of order - $defs first": remote,
	"dynamicRef/$ref and $dynamicAnchor are independent of order - $ref first":  remote,
	"dynamicRef/$ref to $dynamicRef finds detached $dynamicAnchor":              remote,
	"ref/remote ref, containing refs itself":                                    remote,
	"refRemote/remote ref":                                                      remote,
	"refRemote/fragment within remote ref":                                      remote,
	"refRemote/anchor within remote ref":                                        remote,
	"refRemote/ref within remote ref":                                           remote,
	"refRemote/base URI change":                                                 remote,
	"refRemote/base URI change - change folder":                                 remote,
	"refRemote/base URI change - change folder in subschema":                    remote,
	"refRemote/root ref in remote ref":                                          remote,
	"refRemote/remote ref with ref to defs":                                     remote,
	"refRemote/Location-independent identifier in remote ref":                   remote,
	"refRemote/retrieved nested refs resolve relative to their URI not $id":     remote,
	"refRemote/remote HTTP ref with different $id":                              remote,
	"refRemote/remote HTTP ref with different URN $id":                          remote,
	"refRemote/remote HTTP ref with nested absolute ref":                        remote,
	"refRemote/$ref to $ref finds detached $anchor":                             remote,
}

// usesFallback reports whether v validates with jsonschema-go.
func (v *Validator) usesFallback() bool {
	if v.root == nil || len(v.root.checks) != 1 {
		return false
	}
	_, ok := v.root.checks[0].(fallbackCheck)
	return ok
}

// FuzzWalkerMatchesFallback checks the walker against jsonschema-go on the
// suite's schemas that the walker compiles, for any JSON value whose
// numbers are small integers (where jsonschema-go, which decodes numbers,
// is exact) and that has no duplicate member names. Schemas with "format"
// are left out (the walker asserts date-time; jsonschema-go does not).
func FuzzWalkerMatchesFallback(f *testing.F) {
	type pair struct{ fast, slow *Validator }
	var pairs []pair
	files, _ := filepath.Glob("../testdata/JSON-Schema-Test-Suite/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var groups []struct {
			Schema json.RawMessage
			Tests  []struct{ Data json.RawMessage }
		}
		if err := json.Unmarshal(data, &groups); err != nil {
			f.Fatal(err)
		}
		for _, g := range groups {
			if strings.Contains(string(g.Schema), `"format"`) {
				continue
			}
			var s Schema
			if json.Unmarshal(g.Schema, &s) != nil {
				continue
			}
			fast, err := Compile(&s, nil, "")
			if err != nil || fast.usesFallback() {
				continue
			}
			c := newCompiler(s.Defs, RefDefs)
			c.root = &s
			c = c.fallbackCompiler()
			slow := &Validator{root: c.compile(&s)}
			if c.err() != nil {
				continue
			}
			pairs = append(pairs, pair{fast, slow})
			for _, t := range g.Tests {
				f.Add(uint16(len(pairs)-1), []byte(t.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		p := pairs[int(which)%len(pairs)]
		if !jsontext.Value(data).IsValid() || !smallIntegersOnly(data) {
			return
		}
		fast, slow := p.fast.Validate(data), p.slow.Validate(data)
		if (len(fast) == 0) != (len(slow) == 0) {
			t.Fatalf("schema %d, data %s: walker %q, jsonschema-go %q", int(which)%len(pairs), data, fast, slow)
		}
	})
}

// smallIntegersOnly reports whether every number in JSON text data is an
// integer of at most 15 digits.
func smallIntegersOnly(data []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return err == io.EOF
		}
		if tok.Kind() == '0' {
			s := tok.String()
			if strings.ContainsAny(s, ".eE") || len(strings.TrimPrefix(s, "-")) > 15 {
				return false
			}
		}
	}
}
