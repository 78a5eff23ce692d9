package gen

import (
	"fmt"
	"slices"
	"strconv"
)

type ckind uint8

const (
	cRaw    ckind = iota
	cNull         // only null
	cPrim         // one primitive (perhaps from several variants of that kind)
	cLit          // enum or const values of one primitive
	cArray        // items
	cMap          // additionalProperties or patternProperties
	cObject       // properties: a struct
	cUnion        // variants of different kinds
	cOne          // exactly one schema that is not null (oneOf [null, X], allOf [X])
)

type class struct {
	kind     ckind
	nullable bool
	prim     string
	format   string
	values   []*node
	variants []*node // cUnion, cPrim: the variants (as written, "$ref" kept)
	elem     *node   // cArray: items; cMap: the values' schema
	one      *node   // cOne
}

// classify decides what Go and TypeScript type schema s becomes.
func (b *builder) classify(s *node) class {
	if s == nil || s.kind != '{' {
		return class{kind: cRaw}
	}
	types := typeList(s)
	null := slices.Contains(types, "null") || s.bool("nullable")
	types = slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" })
	c := b.classifyShape(s, types)
	c.nullable = c.nullable || null
	if c.kind == cRaw && null && len(types) == 0 && s.get("type") != nil {
		c.kind = cNull
	}
	return c
}

func (b *builder) classifyShape(s *node, types []string) class {
	if s.get("properties") != nil && len(s.get("properties").keys) > 0 {
		return class{kind: cObject}
	}
	if members := s.list("allOf"); len(members) > 0 {
		return b.classifyAllOf(s, members)
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if vs := s.list(kw); len(vs) > 0 {
			return b.classifyUnion(s, vs, types)
		}
	}
	if ref := s.str("$ref"); ref != "" {
		return class{kind: cOne, one: &node{kind: '{', keys: []string{"$ref"}, vals: map[string]*node{"$ref": s.get("$ref")}}}
	}
	return b.classifyLeaf(s, types)
}

// classifyLeaf classifies a schema that combines no other schema.
func (b *builder) classifyLeaf(s *node, types []string) class {
	if vals := s.list("enum"); len(vals) > 0 {
		return literal(vals)
	}
	if v := s.get("const"); v != nil {
		return literal([]*node{v})
	}
	switch {
	case len(types) == 1:
		return b.classifyType(s, types[0])
	case len(types) > 1:
		if allNumeric(types) {
			return class{kind: cPrim, prim: "number"}
		}
		return class{kind: cRaw}
	case s.get("items") != nil || s.get("prefixItems") != nil:
		return b.classifyType(s, "array")
	case s.get("additionalProperties") != nil || s.get("patternProperties") != nil:
		return b.classifyType(s, "object")
	}
	return class{kind: cRaw}
}

func (b *builder) classifyType(s *node, t string) class {
	switch t {
	case "string", "boolean", "number":
		return class{kind: cPrim, prim: t}
	case "integer":
		return class{kind: cPrim, prim: t, format: s.str("format")}
	case "array":
		items := s.get("items")
		if items == nil || items.kind != '{' {
			return class{kind: cArray}
		}
		return class{kind: cArray, elem: items}
	case "object":
		if ap := s.get("additionalProperties"); ap != nil && ap.kind == '{' {
			return class{kind: cMap, elem: ap}
		}
		if pp := s.get("patternProperties"); pp != nil && len(pp.keys) == 1 {
			return class{kind: cMap, elem: pp.vals[pp.keys[0]]}
		}
		return class{kind: cMap}
	}
	return class{kind: cRaw}
}

func (b *builder) classifyAllOf(s *node, members []*node) class {
	var objects, substantive []*node
	for _, m := range members {
		r := b.deref(m)
		switch k := b.kindOf(m, 0); k {
		case "object":
			objects = append(objects, r)
		case "any":
			if b.classify(r).kind != cRaw {
				substantive = append(substantive, m)
			}
		default:
			substantive = append(substantive, m)
		}
	}
	if len(objects) > 0 {
		return class{kind: cObject}
	}
	if len(substantive) == 1 {
		return class{kind: cOne, one: substantive[0]}
	}
	return class{kind: cRaw}
}

func (b *builder) classifyUnion(s *node, vs []*node, types []string) class {
	var rest []*node
	null := false
	for _, v := range vs {
		if b.kindOf(v, 0) == "null" {
			null = true
			continue
		}
		rest = append(rest, v)
	}
	switch len(rest) {
	case 0:
		if null {
			return class{kind: cNull, nullable: true}
		}
		return class{kind: cRaw}
	case 1:
		return class{kind: cOne, one: rest[0], nullable: null}
	}
	kinds := map[string]bool{}
	for _, v := range rest {
		kinds[b.kindOf(v, 0)] = true
	}
	c := unionOfKinds(kinds, len(types) == 1 && types[0] == "object")
	c.nullable = null
	if c.kind != cObject {
		c.variants = rest
	}
	return c
}

// unionOfKinds classifies variants by the kinds of values they admit:
// all objects of an object schema merge; variants of one primitive kind
// (integers and numbers are one) are that primitive; anything else is a
// union.
func unionOfKinds(kinds map[string]bool, object bool) class {
	one := ""
	if len(kinds) == 1 {
		for k := range kinds {
			one = k
		}
	}
	switch {
	case one == "object" && object:
		return class{kind: cObject}
	case one == "string" || one == "boolean" || one == "integer" || one == "number":
		return class{kind: cPrim, prim: one}
	case len(kinds) == 2 && kinds["integer"] && kinds["number"]:
		return class{kind: cPrim, prim: "number"}
	}
	return class{kind: cUnion}
}

// kindOf tells what JSON values schema s admits, as one word: "string",
// "integer", "number", "boolean", "null", "object", "array" or "any".
func (b *builder) kindOf(s *node, depth int) string {
	s = b.deref(s)
	if s == nil || s.kind != '{' || depth > 16 {
		return "any"
	}
	types := typeList(s)
	switch {
	case len(types) == 1:
		return types[0]
	case len(types) > 1:
		return "any"
	case s.get("properties") != nil:
		return "object"
	case s.get("items") != nil:
		return "array"
	case len(s.list("enum")) > 0:
		return literal(s.list("enum")).litKind()
	case s.get("const") != nil:
		return literal([]*node{s.get("const")}).litKind()
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if k := b.combinedKind(s.list(kw), kw == "allOf", depth); k != "" {
			return k
		}
	}
	return "any"
}

// combinedKind is the kind of values all of vs admit ("any" if they
// differ; "" if there are none). In an allOf, members of any kind add
// nothing.
func (b *builder) combinedKind(vs []*node, allOf bool, depth int) string {
	k := ""
	for _, v := range vs {
		vk := b.kindOf(v, depth+1)
		if allOf && vk == "any" {
			continue
		}
		if k != "" && k != vk {
			return "any"
		}
		k = vk
	}
	return k
}

func (c class) litKind() string {
	switch {
	case c.kind == cNull:
		return "null"
	case c.kind == cLit:
		return c.prim
	}
	return "any"
}

// literal classifies enum or const values: all of one primitive kind (null
// aside) or any.
func literal(vals []*node) class {
	var kept []*node
	null := false
	kind := byte(0)
	for _, v := range vals {
		k := v.kind
		if k == 'f' {
			k = 't'
		}
		switch {
		case k == 'n':
			null = true
			continue
		case k == '{' || k == '[' || kind != 0 && kind != k:
			return class{kind: cRaw}
		}
		kind = k
		kept = append(kept, v)
	}
	if len(kept) == 0 {
		return class{kind: cNull, nullable: null}
	}
	prim := map[byte]string{'"': "string", '0': "number", 't': "boolean"}[kind]
	if prim == "number" && allIntegers(kept) {
		prim = "integer"
	}
	return class{kind: cLit, prim: prim, values: kept, nullable: null}
}

func allIntegers(vals []*node) bool {
	for _, v := range vals {
		if _, err := strconv.ParseInt(v.text, 10, 64); err != nil {
			return false
		}
	}
	return true
}

func allNumeric(types []string) bool {
	for _, t := range types {
		if t != "integer" && t != "number" {
			return false
		}
	}
	return true
}

// typeList returns the schema's "type" as a list.
func typeList(s *node) []string {
	t := s.get("type")
	switch {
	case t == nil:
		return nil
	case t.kind == '"':
		return []string{t.text}
	}
	return s.strings("type")
}

// plain returns the type of a schema that declares no type of its own.
func (b *builder) plain(s *node, c class, hint string) *typ {
	var t *typ
	switch c.kind {
	case cNull:
		return &typ{kind: tNull}
	case cPrim:
		t = &typ{kind: tPrim, prim: c.prim, format: c.format}
		for i, v := range c.variants {
			t.alts = append(t.alts, b.typeOf(v, fmt.Sprintf("%s%d", hint, i+1)))
		}
	case cLit:
		t = &typ{kind: tLit, prim: c.prim, values: c.values}
	case cArray:
		t = &typ{kind: tArray, elem: b.typeOf(c.elem, hint+"Item")}
	case cMap:
		t = &typ{kind: tMap, elem: b.typeOf(c.elem, hint+"Value")}
	case cOne:
		t = b.typeOf(c.one, hint)
	default:
		return &typ{kind: tRaw}
	}
	if c.nullable {
		t = nullable(t)
	}
	return t
}

// fillStruct gives d the properties of object schema s and of the schemas
// it combines, merged in order: a property's first definition wins; it is
// required when a schema that always applies (s, its "$ref", its allOf)
// requires it; the properties of oneOf/anyOf variants are optional.
func (b *builder) fillStruct(d *decl, s *node, hint string) {
	m := &merger{b: b, hint: hint, props: map[string]*field{}, required: map[string]bool{}, seen: map[*node]bool{}}
	m.walk(s, true, 0)
	names := newNamer()
	for i, name := range m.order {
		f := m.props[name]
		f.required = m.required[name]
		goName := typeName(name)
		if goName == "" {
			goName = fmt.Sprintf("Field%d", i)
		}
		f.name = names.unique(goName)
		d.fields = append(d.fields, f)
	}
}

// merger collects the properties of the schemas an object combines.
type merger struct {
	b        *builder
	hint     string
	props    map[string]*field
	order    []string
	required map[string]bool
	seen     map[*node]bool
}

func (m *merger) walk(o *node, always bool, depth int) {
	if o == nil || o.kind != '{' || m.seen[o] || depth > 32 {
		return
	}
	m.seen[o] = true
	defer delete(m.seen, o)
	if ref := o.str("$ref"); ref != "" {
		m.walk(m.b.root.pointer(ref), always, depth+1)
	}
	if always {
		for _, r := range o.strings("required") {
			m.required[r] = true
		}
	}
	if ps := o.get("properties"); ps != nil && ps.kind == '{' {
		for _, name := range ps.keys {
			m.add(name, ps.vals[name])
		}
	}
	for _, sub := range o.list("allOf") {
		m.walk(sub, always, depth+1)
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		for _, sub := range o.list(kw) {
			m.walk(sub, false, depth+1)
		}
	}
}

func (m *merger) add(name string, ps *node) {
	if _, ok := m.props[name]; ok {
		return
	}
	m.props[name] = &field{json: name, doc: firstNonEmpty(m.b.deref(ps).str("description"), ps.str("title")),
		t: m.b.typeOf(ps, m.hint+typeName(name))}
	m.order = append(m.order, name)
}

// fillUnion gives d its variants, each named after its schema.
func (b *builder) fillUnion(d *decl, variants []*node, hint string) {
	names := newNamer("Raw", "RawMessage", "IsNull")
	for i, v := range variants {
		name := ""
		if ref := v.str("$ref"); ref != "" {
			name = typeName(refHint(ref, ""))
		}
		r := b.deref(v)
		if name == "" {
			name = typeName(r.str("title"))
		}
		if name == "" || len(name) > 40 {
			name = kindName(b.kindOf(v, 0), i)
		}
		name = names.unique(name)
		d.variants = append(d.variants, &variant{name: name, t: b.typeOf(v, hint+name)})
	}
}

func kindName(k string, i int) string {
	switch k {
	case "string", "integer", "number", "object", "array":
		return typeName(k)
	case "boolean":
		return "Bool"
	}
	return fmt.Sprintf("Variant%d", i+1)
}
