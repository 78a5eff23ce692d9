package openrpc

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc/schema"
)

// CompileMethod compiles the params of m; references are resolved in the
// shared schemas defs (the document's components).
//
// Params by name must be an object whose members are params of m (an
// unknown name is a problem, as it is for jsonrpc.Register), with every
// required param present; params by position an array of at most
// len(m.Params) elements, at least up to the last required param.
func CompileMethod(m *Method, defs map[string]*Schema) (*ParamsValidator, error) {
	p := schema.MethodParams{Whole: m.ParamsSchema, Variadic: m.Variadic}
	switch m.ParamStructure {
	case "by-name":
		p.ByName = true
	case "by-position":
		p.ByPosition = true
	default:
		p.ByName, p.ByPosition = true, true
	}
	for _, d := range m.Params {
		p.Params = append(p.Params, schema.Param{Name: d.Name, Schema: d.Schema, Required: d.Required})
	}
	v, err := schema.CompileParams(p, defs, RefComponents)
	if err != nil {
		return nil, errors.New("openrpc: method " + m.Name + ": " + err.Error())
	}
	return v, nil
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

// ParamsError returns the -32602 error that reports problems: its message
// names the first problem and its data lists them all, as
// [{"path":"/minuend","problem":"expected number, got string"}] (the shape of
// the errors of jsonrpc.Register's own decoding).
func ParamsError(problems []Problem) *jsonrpc.Error {
	e := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
	if len(problems) == 0 {
		return e
	}
	p := problems[0]
	if p.Path != "" {
		e.Message += ": " + p.Path
	}
	e.Message += ": " + p.Problem
	if len(problems) > 1 {
		e.Message += " (and " + strconv.Itoa(len(problems)-1) + " more)"
	}
	return e.WithData(problems)
}
