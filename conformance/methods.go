package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// maxDiscovered bounds the methods taken from rpc.discover.
const maxDiscovered = 32

// methodChecks are the result checks of Suite.Methods and, with
// Suite.Discover, of the examples in the server's rpc.discover document.
func (r *runner) methodChecks() []check {
	methods := slices.Clone(r.s.Methods)
	if r.s.Discover {
		methods = append(methods, r.discover()...)
	}
	var cs []check
	for _, m := range methods {
		cs = append(cs, callChecks(m)...)
	}
	return cs
}

// label names a method and the structure of its params in check names.
func (m Method) label() string {
	switch jsontext.Value(m.Params).Kind() {
	case '[':
		return m.Name + "/by-position"
	case '{':
		return m.Name + "/by-name"
	}
	return m.Name + "/no-params"
}

// call returns the message calling m with id (JSON text), or as a
// notification when id is empty.
func (m Method) call(id string) []byte {
	name, _ := json.Marshal(m.Name)
	b := append([]byte(`{"jsonrpc":"2.0","method":`), name...)
	if m.Params != nil {
		b = append(append(b, `,"params":`...), m.Params...)
	}
	if id != "" {
		b = append(append(b, `,"id":`...), id...)
	}
	return append(b, '}')
}

func callChecks(m Method) []check {
	name := "method/" + m.label()
	cs := []check{
		{name: name + "/result", level: MUST, spec: specResponse + " (result, under the request's id)", run: func(r *runner) error {
			_, err := r.result(m, `"m-1"`)
			return err
		}},
		{name: name + "/ids", level: MUST, spec: specResponse + " (id MUST be the same as the request's)", run: func(r *runner) error {
			for _, id := range []string{`9007199254740993`, `""`, `-1.5`} {
				if _, err := r.result(m, id); err != nil {
					return err
				}
			}
			return nil
		}},
		silentCheck(name+"/notification", MUST, specNotification+" (the Server MUST NOT reply)", string(m.call(""))),
		{name: name + "/batch", level: SHOULD, spec: specBatch + " (a Response for each Request, matched by id)", run: func(r *runner) error {
			rep, err := r.call(slices.Concat([]byte("["), m.call(`"b-1"`), []byte(","), m.call(`"b-2"`), []byte("]")))
			switch {
			case err != nil:
				return err
			case !rep.batch || len(rep.items) != 2:
				return errors.New("want an Array of 2 responses")
			}
			for _, id := range []string{`"b-1"`, `"b-2"`} {
				if !slices.ContainsFunc(rep.items, func(it *response) bool {
					same, _ := sameID(jsontext.Value(id), it.id())
					return same && it.has("result")
				}) {
					return fmt.Errorf("no result with id %s", id)
				}
			}
			return nil
		}},
	}
	if m.Result != nil {
		cs = append(cs, check{name: name + "/example-result", level: MAY, spec: "OpenRPC example (the server's own)", run: func(r *runner) error {
			res, err := r.result(m, `"m-2"`)
			if err == nil && !jsonEqual(res, jsontext.Value(m.Result)) {
				err = fmt.Errorf("result %s, the example says %s", clip(res), clip(m.Result))
			}
			return err
		}})
	}
	return cs
}

// result calls m with id and returns its result.
func (r *runner) result(m Method, id string) (jsontext.Value, error) {
	resp, err := r.single(m.call(id))
	if err != nil {
		return nil, err
	}
	if same, _ := sameID(jsontext.Value(id), resp.id()); !same {
		return nil, fmt.Errorf("sent id %s, the response has %s", id, idText(resp))
	}
	res, ok := resp.get("result")
	if !ok {
		return nil, fmt.Errorf("want a result, got %s", resp.describe())
	}
	return res, nil
}

// openRPC is what the suite reads of an OpenRPC document.
type openRPC struct {
	Methods []struct {
		Name           string           `json:"name"`
		ParamStructure string           `json:"paramStructure"`
		Examples       []openRPCExample `json:"examples"`
	} `json:"methods"`
}

type openRPCExample struct {
	Params []struct {
		Value json.RawMessage `json:"value"`
		Name  string          `json:"name"`
	} `json:"params"`
	Result *struct {
		Value json.RawMessage `json:"value"`
	} `json:"result"`
}

// discover returns the methods of the server's rpc.discover document that
// have an example with a result: each by name and by position, as the
// method's paramStructure allows (the first example of each).
func (r *runner) discover() []Method {
	resp, err := r.single([]byte(`{"jsonrpc":"2.0","method":"rpc.discover","id":"discover"}`))
	if err != nil {
		var lost *lostError
		if errors.As(err, &lost) {
			r.drop()
		}
		return nil
	}
	res, ok := resp.get("result")
	var doc openRPC
	if !ok || json.Unmarshal(res, &doc) != nil {
		return nil
	}
	var out []Method
	for _, dm := range doc.Methods {
		out = append(out, exampleMethods(dm.Name, dm.ParamStructure, dm.Examples)...)
	}
	return out[:min(len(out), maxDiscovered)]
}

// exampleMethods returns the calls of a method's examples that have a
// result: by name and by position, as paramStructure allows, the first
// example of each.
func exampleMethods(name, paramStructure string, examples []openRPCExample) []Method {
	var out []Method
	seen := map[string]bool{}
	for _, ex := range examples {
		if ex.Result == nil {
			continue
		}
		named, pos := []byte("{"), []byte("[")
		for i, p := range ex.Params {
			if i > 0 {
				named, pos = append(named, ','), append(pos, ',')
			}
			key, _ := json.Marshal(p.Name)
			named = append(append(append(named, key...), ':'), p.Value...)
			pos = append(pos, p.Value...)
		}
		forms := map[string][]byte{"by-name": append(named, '}'), "by-position": append(pos, ']')}
		for _, form := range []string{"by-name", "by-position"} {
			if seen[form] || paramStructure != "" && paramStructure != "either" && paramStructure != form {
				continue
			}
			seen[form] = true
			out = append(out, Method{Name: name, Params: forms[form], Result: ex.Result.Value})
		}
	}
	return out
}
