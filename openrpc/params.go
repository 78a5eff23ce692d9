package openrpc

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/seedhq/jsonrpc"
)

// ParamsValidator checks the params of one method against the schemas of
// its OpenRPC description. It is safe for concurrent use.
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

// CompileMethod compiles the params of m; references are resolved in the
// shared schemas defs (the document's components).
//
// Params by name must be an object whose members are params of m (an
// unknown name is a problem, as it is for jsonrpc.Register), with every
// required param present; params by position an array of at most
// len(m.Params) elements, at least up to the last required param.
func CompileMethod(m *Method, defs map[string]*Schema) (*ParamsValidator, error) {
	c := newCompiler(defs, RefComponents)
	v := compileMethod(c, m)
	if c.err() == nil && c.unsupported != nil {
		c = c.fallbackCompiler()
		v = compileMethod(c, m)
	}
	if err := c.err(); err != nil {
		return nil, errors.New("openrpc: method " + m.Name + ": " + err.Error())
	}
	return v, nil
}

func compileMethod(c *compiler, m *Method) *ParamsValidator {
	v := &ParamsValidator{}
	switch m.ParamStructure {
	case "by-name":
		v.byName = true
	case "by-position":
		v.byPosition = true
	default:
		v.byName, v.byPosition = true, true
	}
	switch {
	case m.ParamsSchema != nil:
		v.whole = c.compile(m.ParamsSchema)
	case m.Variadic && len(m.Params) == 1:
		v.variadic = c.compile(m.Params[0].Schema)
		v.byName = false
	default:
		obj := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: falseSchema()}
		for i, p := range m.Params {
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

// CheckParams checks params against the schemas of method in d, as a
// client may before it sends a call. It returns the problems (nil when the
// params fit) or an error when d has no such method or its schemas use
// keywords that Compile does not support.
func (d *Doc) CheckParams(method string, params []byte) ([]Problem, error) {
	m := d.Method(method)
	if m == nil {
		return nil, errors.New("openrpc: no method " + strconv.Quote(method) + " in the document")
	}
	var defs map[string]*Schema
	if d.Components != nil {
		defs = d.Components.Schemas
	}
	v, err := CompileMethod(m, defs)
	if err != nil {
		return nil, err
	}
	return v.Check(params), nil
}

// Validate returns a middleware that checks a request's params against the
// schemas of its method (as Document describes it) before the handler runs,
// and answers -32602 with the problems (see ParamsError) when they do not
// fit. Each method's validator is compiled once, on first use. With
// methods, only those methods are checked; otherwise all the methods of mux
// that were registered with jsonrpc.Register (a plain Handler has no schema).
//
// Install it on the mux before registering the methods (mux.Use), or wrap
// the whole mux: jsonrpc.Chain(mux, openrpc.Validate(mux)).
//
// A method whose schema cannot be compiled is not checked; the problem is
// logged once.
func Validate(mux *jsonrpc.Mux, methods ...string) jsonrpc.Middleware {
	vs := &validators{mux: mux}
	if len(methods) > 0 {
		vs.only = make(map[string]bool, len(methods))
		for _, m := range methods {
			vs.only[m] = true
		}
	}
	return func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if v := vs.get(req.Method); v != nil {
				if probs := v.Check(req.Params); len(probs) > 0 {
					return nil, ParamsError(probs)
				}
			}
			return next.ServeRPC(ctx, req)
		})
	}
}

type validators struct {
	mux  *jsonrpc.Mux
	only map[string]bool
	m    sync.Map // method name → *ParamsValidator (nil: not checked)
}

func (vs *validators) get(method string) *ParamsValidator {
	if v, ok := vs.m.Load(method); ok {
		return v.(*ParamsValidator)
	}
	if vs.only != nil && !vs.only[method] {
		return nil
	}
	info, ok := vs.mux.Method(method)
	if !ok {
		return nil // not (yet) registered: nothing to cache
	}
	var v *ParamsValidator
	if info.ParamsType != nil {
		g := NewGenerator(RefComponents)
		m := describe(g, info)
		if err := g.Err(); err != nil {
			slog.Warn("openrpc: params of "+method+" are validated only in part", "err", err)
		}
		var err error
		if v, err = CompileMethod(m, g.Defs()); err != nil {
			slog.Warn("openrpc: params of "+method+" are not validated", "err", err)
			v = nil
		}
	}
	actual, _ := vs.m.LoadOrStore(method, v)
	return actual.(*ParamsValidator)
}
