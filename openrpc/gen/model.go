package gen

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The model both generators render: the document's methods and the types
// their params and results need, named once.

type tkind uint8

const (
	tRaw   tkind = iota // any JSON value (json.RawMessage, unknown)
	tNull               // only null
	tPrim               // string, integer, number or boolean
	tArray              // []elem
	tMap                // map[string]elem
	tNamed              // a declared type
	tLit                // inline enum or const: literal values of one primitive
)

// typ is a type expression.
type typ struct {
	kind     tkind
	prim     string  // tPrim, tLit: "string", "integer", "number", "boolean"
	format   string  // an integer's format (int32, uint64...)
	elem     *typ    // tArray, tMap
	decl     *decl   // tNamed
	values   []*node // tLit
	nullable bool    // null is also a value
	alts     []*typ  // a union of primitives that Go sees as prim (TypeScript lists them)
}

type dkind uint8

const (
	dStruct dkind = iota // an object with properties
	dUnion               // oneOf/anyOf of different kinds of values
	dEnum                // a named enum of strings
	dDef                 // a named type over another type expression
	dAlias               // another name for a named type
)

// decl is a named type.
type decl struct {
	name     string
	kind     dkind
	doc      string
	fields   []*field
	variants []*variant
	under    *typ    // dDef, dAlias
	values   []*node // dEnum
	done     bool
}

type field struct {
	name     string // Go and TypeScript member name
	json     string // the property's name
	t        *typ
	required bool
	doc      string
	ptr      bool // Go: a pointer even when required (breaks a cycle of values)
}

type variant struct {
	name string
	t    *typ
}

type param struct {
	name     string // the param's name in the document
	local    string // Go argument name
	tsLocal  string // TypeScript argument name
	field    string // Go field name in the params struct
	t        *typ
	required bool
	doc      string
}

type method struct {
	name       string // on the wire
	goName     string
	doc        string
	deprecated bool
	params     []*param
	result     *typ // nil: the method returns nothing
	notify     bool // the document gives no result: a notification
	byName     bool
	reserved   bool // rpc.*: not part of Service
	// variadic (x-variadic): any number of positional params, each of
	// the only param's type.
	variadic bool
	// whole (x-params-schema), when set, is the type of the whole params
	// value, which the methods take as one argument.
	whole *typ
}

type model struct {
	title   string
	version string
	methods []*method
	decls   []*decl
	subs    []*subscription
}

// builder turns a document into the model.
type builder struct {
	root   *node
	names  *namer
	byKey  map[string]*typ // a component's "$ref" or an inline schema's shape → its type
	decls  []*decl
	warn   func(string)
	active map[*node]bool // schemas being built (a cycle through inline schemas)
}

// reservedTypeNames are the package-level names the generated code
// declares itself.
var reservedTypeNames = []string{"Client", "NewClient", "Service", "Register", "RpcError", "Transport", "Response",
	"Error", "Record", "Promise", "Map", "Array", "Object", "String", "Number", "Boolean", "Date", "JSON", "WebSocket", "MessageEvent", "Partial"}

func build(root *node, warn func(string)) (*builder, *model, error) {
	if root.kind != '{' || root.get("methods") == nil {
		return nil, nil, fmt.Errorf("not an OpenRPC document: no methods")
	}
	b := &builder{root: root, names: newNamer(reservedTypeNames...), byKey: map[string]*typ{}, warn: warn, active: map[*node]bool{}}
	m := &model{title: root.get("info").str("title"), version: root.get("info").str("version")}
	comps := root.get("components").get("schemas")
	if comps != nil {
		names := slices.Clone(comps.keys)
		sort.Strings(names)
		// Components keep their names: claimed before any inline type.
		for _, name := range names {
			b.componentDecl(name)
		}
		for _, name := range names {
			b.componentBody(name)
		}
	}
	methodNames := newNamer()
	var subsOf []*node
	for i, mn := range root.list("methods") {
		if ref := mn.str("$ref"); ref != "" {
			mn = root.pointer(ref)
		}
		name := mn.str("name")
		if name == "" {
			return nil, nil, fmt.Errorf("method %d has no name", i)
		}
		goName := typeName(name)
		if goName == "" {
			goName = "Method"
		}
		if n := methodNames.unique(goName); n != goName {
			b.warn(fmt.Sprintf("method %s: Go name %s is taken by another method; using %s", name, goName, n))
			goName = n
		}
		m.methods = append(m.methods, b.method(mn, name, goName))
		subsOf = append(subsOf, mn)
	}
	for i, mn := range subsOf {
		m.subs = append(m.subs, b.subscriptions(mn, m.methods[i].name, methodNames)...)
	}
	m.decls = b.decls
	breakCycles(m.decls)
	return b, m, nil
}

func (b *builder) method(mn *node, name, goName string) *method {
	me := &method{name: name, goName: goName, deprecated: mn.bool("deprecated"), reserved: strings.HasPrefix(name, "rpc.")}
	me.doc = firstNonEmpty(mn.str("summary"), mn.str("description"))
	me.byName = mn.str("paramStructure") == "by-name"
	locals := newNamer()
	tsLocals := newNamer()
	fields := newNamer()
	for i, pn := range mn.list("params") {
		pn = b.deref(pn)
		p := &param{name: pn.str("name"), required: pn.bool("required"), doc: firstNonEmpty(pn.str("summary"), pn.str("description"))}
		hint := goName + typeName(p.name)
		if typeName(p.name) == "" {
			hint = fmt.Sprintf("%sParam%d", goName, i)
		}
		p.t = b.typeOf(pn.get("schema"), hint)
		p.local = uniqueLocal(locals, localName(p.name, i, goLocalReserved), name, p.name, b.warn)
		p.tsLocal = uniqueLocal(tsLocals, localName(p.name, i, tsReserved), name, p.name, nil)
		f := typeName(p.name)
		if f == "" {
			f = fmt.Sprintf("Arg%d", i)
		}
		p.field = fields.unique(f)
		me.params = append(me.params, p)
	}
	me.variadic = mn.bool("x-variadic") && len(me.params) == 1
	if ps := mn.get("x-params-schema"); ps != nil && len(me.params) == 0 {
		me.whole = b.typeOf(ps, goName+"Params")
	}
	rn := b.deref(mn.get("result"))
	if rn == nil {
		me.notify = true
		return me
	}
	t := b.typeOf(rn.get("schema"), goName+"Result")
	if t.kind != tNull {
		me.result = t
	}
	return me
}

func uniqueLocal(n *namer, name, method, param string, warn func(string)) string {
	out := n.unique(name)
	if out != name && warn != nil {
		warn(fmt.Sprintf("method %s: param %q: Go name %s is taken; using %s", method, param, name, out))
	}
	return out
}

// goLocalReserved are the names a param cannot take in Go: keywords,
// predeclared names, the imports and the generated code's own variables.
var goLocalReserved = func() map[string]bool {
	m := setOf("ctx", "c", "s", "mux", "p", "params", "raw", "out", "err", "context", "json", "jsonv2", "jsonrpc", "conn")
	for k := range goKeywords {
		m[k] = true
	}
	for k := range goPredeclared {
		m[k] = true
	}
	return m
}()

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// deref follows a "$ref" (to components/contentDescriptors, or anywhere
// in the document).
func (b *builder) deref(n *node) *node {
	for i := 0; n != nil && i < 32; i++ {
		ref := n.str("$ref")
		if ref == "" {
			return n
		}
		n = b.root.pointer(ref)
	}
	return n
}

const componentPrefix = "#/components/schemas/"

func (b *builder) componentDecl(name string) {
	goName := typeName(name)
	if goName == "" {
		goName = "Schema"
	}
	n := b.names.unique(goName)
	if n != goName {
		b.warn(fmt.Sprintf("schema %q: Go name %s is taken; using %s", name, goName, n))
	}
	d := &decl{name: n}
	b.byKey[componentPrefix+name] = &typ{kind: tNamed, decl: d}
}

func (b *builder) componentBody(name string) {
	t := b.byKey[componentPrefix+name]
	d := t.decl
	s := b.root.get("components").get("schemas").get(name)
	b.declBody(d, s, d.name)
}

// declBody fills d (a component) from schema s.
func (b *builder) declBody(d *decl, s *node, hint string) {
	if d.done {
		return
	}
	d.done = true
	d.doc = firstNonEmpty(s.str("description"), s.str("title"))
	b.decls = append(b.decls, d)
	if ref := s.str("$ref"); ref != "" && !hasShape(s) {
		under := b.refType(ref, hint)
		if under.kind == tNamed && under.decl != d {
			d.kind, d.under = dAlias, under
			return
		}
		d.kind, d.under = dDef, under
		return
	}
	if vals := s.list("enum"); len(vals) > 0 && allStrings(vals) && !s.bool("nullable") {
		d.kind, d.values = dEnum, vals
		return
	}
	b.shape(d, s, hint)
}

// shape fills d with the structure of s: a struct, a union or a defined type.
func (b *builder) shape(d *decl, s *node, hint string) {
	switch c := b.classify(s); c.kind {
	case cObject:
		d.kind = dStruct
		b.fillStruct(d, s, hint)
	case cUnion:
		d.kind = dUnion
		b.fillUnion(d, c.variants, hint)
	default:
		d.kind, d.under = dDef, b.plain(s, c, hint)
	}
}

// typeOf returns the type of schema s; hint names an inline type.
func (b *builder) typeOf(s *node, hint string) *typ {
	if s == nil || s.kind != '{' {
		return &typ{kind: tRaw}
	}
	if ref := s.str("$ref"); ref != "" && !hasShape(s) {
		t := b.refType(ref, hint)
		if s.bool("nullable") {
			t = nullable(t)
		}
		return t
	}
	c := b.classify(s)
	if c.kind != cObject && c.kind != cUnion {
		return b.plain(s, c, hint)
	}
	key := shapeKey(s)
	if t, ok := b.byKey[key]; ok {
		return t
	}
	d := &decl{name: b.inlineName(s, hint)}
	t := &typ{kind: tNamed, decl: d, nullable: c.nullable}
	b.byKey[key] = t
	d.done = true
	d.doc = firstNonEmpty(s.str("description"), s.str("title"))
	b.decls = append(b.decls, d)
	if c.kind == cObject {
		d.kind = dStruct
		b.fillStruct(d, s, d.name)
	} else {
		d.kind = dUnion
		b.fillUnion(d, c.variants, d.name)
	}
	return t
}

// inlineName names an inline type: from its title when free, else from
// where it is used (the method, param, property...).
func (b *builder) inlineName(s *node, hint string) string {
	if t := typeName(s.str("title")); t != "" && len(t) <= 48 && !b.names.taken[t] {
		return b.names.unique(t)
	}
	if hint == "" {
		hint = "Type"
	}
	n := b.names.unique(hint)
	if n != hint {
		b.warn(fmt.Sprintf("type name %s is taken; using %s", hint, n))
	}
	return n
}

func (b *builder) refType(ref, hint string) *typ {
	if t, ok := b.byKey[ref]; ok {
		return t
	}
	target := b.root.pointer(ref)
	if target == nil {
		b.warn(fmt.Sprintf("unresolved $ref %q: any value", ref))
		return &typ{kind: tRaw}
	}
	if b.active[target] {
		return &typ{kind: tRaw} // a cycle through non-component schemas
	}
	b.active[target] = true
	defer delete(b.active, target)
	return b.typeOf(target, refHint(ref, hint))
}

// refHint names the target of a "$ref" that is not a component, from its
// path (#/components/schemas/Block/properties/hash → BlockHash).
func refHint(ref, hint string) string {
	path := strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/components/schemas/")
	var parts []string
	for _, p := range strings.Split(path, "/") {
		if p == "properties" || p == "items" || p == "$defs" || p == "definitions" {
			continue
		}
		parts = append(parts, typeName(p))
	}
	if n := strings.Join(parts, ""); n != "" {
		return n
	}
	return hint
}

func hasShape(s *node) bool {
	for _, k := range []string{"properties", "allOf", "oneOf", "anyOf", "items", "additionalProperties", "patternProperties"} {
		if s.get(k) != nil {
			return true
		}
	}
	return false
}

func nullable(t *typ) *typ {
	if t.nullable || t.kind == tRaw || t.kind == tNull {
		return t
	}
	c := *t
	c.nullable = true
	return &c
}

func allStrings(vals []*node) bool {
	for _, v := range vals {
		if v.kind != '"' {
			return false
		}
	}
	return true
}

// breakCycles makes the fields that close a cycle of struct values
// pointers (a Go struct cannot contain itself).
func breakCycles(decls []*decl) {
	state := map[*decl]int{} // 1 on the stack, 2 done
	var visit func(d *decl)
	visit = func(d *decl) {
		state[d] = 1
		for _, f := range d.fields {
			if !valueField(f) {
				continue
			}
			target := structOf(f.t.decl)
			if target == nil {
				continue
			}
			switch state[target] {
			case 1:
				f.ptr = true
			case 0:
				visit(target)
			}
		}
		state[d] = 2
	}
	for _, d := range decls {
		if d.kind == dStruct && state[d] == 0 {
			visit(d)
		}
	}
}

// valueField reports whether Go holds f's type by value in the struct.
func valueField(f *field) bool {
	return f.required && !f.t.nullable && f.t.kind == tNamed
}

// structOf returns the struct decl behind d (through aliases), or nil.
func structOf(d *decl) *decl {
	for i := 0; d != nil && i < 16; i++ {
		switch d.kind {
		case dStruct:
			return d
		case dAlias, dDef:
			if d.under == nil || d.under.kind != tNamed || d.under.nullable {
				return nil
			}
			d = d.under.decl
		default:
			return nil
		}
	}
	return nil
}
