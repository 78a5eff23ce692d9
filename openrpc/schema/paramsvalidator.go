package schema

import "strconv"

// ParamsValidator checks the params of one method against their schemas. It is safe for concurrent use.
type ParamsValidator struct {
	byName, byPosition bool
	whole              *node   // the whole params (x-params-schema)
	variadic           *node   // each positional param (x-variadic)
	object             *node   // params by name
	positional         []*node // params by position
	names              []string
	required           []bool
	minArgs            int // params up to the last required one
}

// MethodParams describes the params of one method for CompileParams.
type MethodParams struct {
	ByName, ByPosition bool    // the params may come as an object, as an array
	Whole              *Schema // a schema of the whole params, or nil
	Variadic           bool    // the one param of Params may repeat, by position only
	Params             []Param // the params, in positional order
}

// Param is one param of MethodParams.
type Param struct {
	Name     string
	Schema   *Schema
	Required bool
}

// CompileParams compiles the params of a method; references are resolved
// in the shared schemas defs, whose references start with prefix.
//
// Params by name must be an object whose members are the params (an
// unknown name is a problem, as it is for jsonrpc.Register), with every
// required param present; params by position an array of at most
// len(p.Params) elements, at least up to the last required param.
func CompileParams(p MethodParams, defs map[string]*Schema, prefix string) (*ParamsValidator, error) {
	c := newCompiler(defs, prefix)
	v := compileParams(c, p)
	if c.err() == nil && c.unsupported != nil {
		c = c.fallbackCompiler()
		v = compileParams(c, p)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	return v, nil
}

func compileParams(c *compiler, p MethodParams) *ParamsValidator {
	v := &ParamsValidator{byName: p.ByName, byPosition: p.ByPosition}
	switch {
	case p.Whole != nil:
		v.whole = c.compile(p.Whole)
	case p.Variadic && len(p.Params) == 1:
		v.variadic = c.compile(p.Params[0].Schema)
		v.byName = false
	default:
		obj := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: falseSchema()}
		for i, p := range p.Params {
			obj.Properties[p.Name] = p.Schema
			if p.Required {
				obj.Required = append(obj.Required, p.Name)
				v.minArgs = i + 1
			}
			v.names = append(v.names, p.Name)
			v.required = append(v.required, p.Required)
			v.positional = append(v.positional, c.compile(p.Schema))
		}
		v.object = c.compile(obj)
	}
	return v
}

// Check returns the problems of params (nil when they fit). Params are raw
// JSON: an array, an object, or nil when the request has none.
func (v *ParamsValidator) Check(params []byte) []Problem {
	w := getWalker(params)
	defer putWalker(w)
	w.ws()
	if w.pos >= len(params) {
		if v.minArgs > 0 {
			return []Problem{{Path: "", Problem: "params are required"}}
		}
		return nil
	}
	if v.whole != nil {
		w.check(v.whole)
		return w.probs
	}
	switch params[w.pos] {
	case '{':
		if !v.byName {
			return []Problem{{Path: "", Problem: "expected an array, got an object"}}
		}
		w.check(v.object)
	case '[':
		if !v.byPosition {
			return []Problem{{Path: "", Problem: "expected an object, got an array"}}
		}
		w.positional(v)
	default:
		return []Problem{{Path: "", Problem: "params must be an array or an object"}}
	}
	return w.probs
}

func (w *walker) positional(v *ParamsValidator) {
	w.pos++ // [
	i := 0
	if !w.expect(']') {
		for {
			var n *node
			switch {
			case v.variadic != nil:
				n = v.variadic
			case i < len(v.positional):
				n = v.positional[i]
			}
			w.path = append(w.path, seg{index: i})
			w.check(n)
			w.path = w.path[:len(w.path)-1]
			i++
			if w.err || !w.expect(',') {
				break
			}
		}
	}
	if v.variadic == nil && i > len(v.positional) {
		w.report("too many params: expected at most " + strconv.Itoa(len(v.positional)) + ", got " + strconv.Itoa(i))
	}
	for j := i; j < v.minArgs; j++ {
		if v.required[j] {
			w.path = append(w.path, seg{index: j})
			w.report("missing required param " + strconv.Quote(v.names[j]))
			w.path = w.path[:len(w.path)-1]
		}
	}
}
