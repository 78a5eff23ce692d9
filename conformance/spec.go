package conformance

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// specExamples are the examples of the specification's §7, one JSON object
// a line (the same file as the shared conformance vectors).
//
//go:embed spec-examples.jsonl
var specExamples []byte

// vector is one example: the request as sent and what must come back.
type vector struct {
	Name    string      `json:"name"`
	Source  string      `json:"source"`
	Request string      `json:"request"`
	Expect  expectation `json:"expect"`
}

type expectation struct {
	Response  string          `json:"response"` // none, single, batch
	ID        json.RawMessage `json:"id"`
	Result    json.RawMessage `json:"result"`
	ErrorCode *int64          `json:"error_code"`
	Items     []expectation   `json:"items"`
}

// needsMethods reports whether the example calls methods of the
// specification's example service (subtract, sum, get_data) for a result.
func (e expectation) needsMethods() bool {
	return e.Result != nil || slices.ContainsFunc(e.Items, expectation.needsMethods)
}

// specExampleChecks checks the specification's own examples. Those that
// call the example service's methods run only against a server that has
// them (jrpc serve does): subtract [42,23] must give 19.
func (r *runner) specExampleChecks() []check {
	var cs []check
	for line := range bytes.Lines(specExamples) {
		var v vector
		if err := json.Unmarshal(line, &v); err != nil {
			panic("conformance: bad spec example: " + err.Error())
		}
		level := MUST
		if v.Expect.Response == "batch" {
			level = SHOULD // §6: a Response object SHOULD exist for each Request object
		}
		spec := "§7 Examples: " + strings.TrimPrefix(strings.Split(v.Source, ";")[0], "jsonrpc.org/specification §7 Examples ")
		cs = append(cs, check{name: "spec/" + strings.TrimPrefix(v.Name, "spec-"), level: level, spec: spec, mayClose: true, run: func(r *runner) error {
			if v.Expect.needsMethods() && !r.hasExampleMethods() {
				return skip("the server has not the example methods of the specification (subtract [42,23] is not 19)")
			}
			return r.example(v)
		}})
	}
	return cs
}

// hasExampleMethods asks the server once for subtract [42,23].
func (r *runner) hasExampleMethods() bool {
	if r.demo == nil {
		yes := false
		resp, err := r.single([]byte(`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"probe"}`))
		if err == nil {
			res, ok := resp.get("result")
			yes = ok && jsonEqual(res, jsontext.Value("19"))
		}
		r.demo = &yes
	}
	return *r.demo
}

func (r *runner) example(v vector) error {
	if v.Expect.Response == "none" {
		rep, err := r.silent([]byte(v.Request))
		if err == nil && rep != nil {
			return because("notifications are answered", "it was answered")
		}
		return err
	}
	rep, err := r.call([]byte(v.Request))
	switch {
	case err != nil:
		return err
	case rep.invalid != "":
		return fmt.Errorf("the reply is %s", rep.invalid)
	case v.Expect.Response == "single" && rep.batch:
		return fmt.Errorf("the reply is an Array, want a single Response object")
	case v.Expect.Response == "single":
		return matches(rep.items[0], v.Expect)
	case !rep.batch:
		return fmt.Errorf("the reply is a single %s, want an Array", rep.items[0].describe())
	case len(rep.items) != len(v.Expect.Items):
		return fmt.Errorf("%d responses, want %d", len(rep.items), len(v.Expect.Items))
	}
	left := slices.Clone(rep.items)
	for _, w := range v.Expect.Items {
		i := slices.IndexFunc(left, func(it *response) bool { return matches(it, w) == nil })
		if i < 0 {
			return fmt.Errorf("no response with id %s and %s", w.ID, w.what())
		}
		left = slices.Delete(left, i, i+1)
	}
	return nil
}

func (e expectation) what() string {
	if e.ErrorCode != nil {
		return fmt.Sprintf("error %d", *e.ErrorCode)
	}
	return "result " + string(e.Result)
}

// matches checks one response against an expectation.
func matches(resp *response, e expectation) error {
	if same, _ := sameID(jsontext.Value(e.ID), resp.id()); !same {
		return fmt.Errorf("want id %s, got %s", e.ID, idText(resp))
	}
	if e.ErrorCode != nil {
		if c, ok := resp.code(); !ok || c != *e.ErrorCode {
			return fmt.Errorf("want error %d, got %s", *e.ErrorCode, resp.describe())
		}
		return nil
	}
	if res, ok := resp.get("result"); !ok || !jsonEqual(res, jsontext.Value(e.Result)) {
		return fmt.Errorf("want result %s, got %s", e.Result, resp.describe())
	}
	return nil
}
