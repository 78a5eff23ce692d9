package schema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// The fallback validates a whole schema with jsonschema-go's complete
// validator, for the schemas that use keywords the walker does not check
// (see Compile). It decodes the value first (integers as int64 where they
// fit, other numbers as float64), so it is slower and allocates.

type fallbackCheck struct{ rs *jsonschema.Resolved }

// compileFallback makes n validate with jsonschema-go: s with the
// compiler's definitions moved to "$defs" (references rewritten to match).
func (c *compiler) compileFallback(s *Schema, n *node) {
	if s == nil {
		return
	}
	root, err := c.standalone(s)
	if err == nil {
		var rs *jsonschema.Resolved
		if rs, err = root.Resolve(nil); err == nil {
			n.checks = []check{fallbackCheck{rs}}
			return
		}
	}
	c.errorf("schema not supported: %v", err)
}

// standalone returns a copy of s that holds the definitions it refers to.
func (c *compiler) standalone(s *Schema) (*Schema, error) {
	tree, err := asTree(s)
	if err != nil {
		return nil, err
	}
	if obj, ok := tree.(map[string]any); ok && c.defs != nil && !(c.root == s && c.prefix == RefDefs) {
		defs := map[string]any{}
		if own, ok := obj["$defs"].(map[string]any); ok {
			defs = own
		}
		for name, d := range c.defs {
			if defs[name], err = asTree(d); err != nil {
				return nil, err
			}
		}
		obj["$defs"] = defs
		tree = rewriteRefs(obj, c.prefix)
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	out := new(Schema)
	return out, json.Unmarshal(b, out)
}

// asTree returns schema s as generic JSON (numbers kept as written).
func asTree(s *Schema) (any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return tree, dec.Decode(&tree)
}

// rewriteRefs changes the "$ref"s that start with prefix to "#/$defs/".
// Keywords whose values are data (enum, const, default, examples) are left
// alone.
func rewriteRefs(v any, prefix string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "enum", "const", "default", "examples":
			case "$ref":
				if s, ok := x.(string); ok && strings.HasPrefix(s, prefix) {
					v[k] = RefDefs + strings.TrimPrefix(s, prefix)
				}
			default:
				v[k] = rewriteRefs(x, prefix)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = rewriteRefs(x, prefix)
		}
	}
	return v
}

func (f fallbackCheck) run(w *walker, v *value) bool {
	inst, err := decodeInstance(w.raw(v))
	if err != nil {
		w.report("invalid JSON")
		return false
	}
	if err := f.rs.Validate(inst); err != nil && !w.muted() {
		w.report(fallbackProblem(err))
	}
	return true
}

// decodeInstance decodes JSON for jsonschema-go: integers that fit as
// int64, other numbers as float64.
func decodeInstance(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}

// fallbackProblem turns jsonschema-go's error ("validating root:
// validating /properties/a: maximum: 5 is greater than 3") into a problem:
// the innermost message, and where in the schema it failed.
func fallbackProblem(err error) string {
	msg := err.Error()
	where := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, tail, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		where, msg = loc, tail
	}
	if where != "" && where != "root" {
		return msg + " (at schema " + where + ")"
	}
	return msg
}
