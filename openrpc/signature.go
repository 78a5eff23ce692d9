package openrpc

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/seedhq/jsonrpc/openrpc/schema"
)

// TypeString renders a schema as a short type expression, as used by
// Signature: number, integer, string, date-time, boolean, null, any,
// []T, map[string]T, {a: T, b?: U}, "x"|"y" for enums, T|null for nullable
// types, and the name of a shared schema for a "$ref".
func TypeString(s *Schema) string { return typeString(s, 0) }

func typeString(s *Schema, depth int) string {
	switch {
	case s == nil || schema.IsTrue(s):
		return "any"
	case s.Not != nil && schema.IsFalseOnly(s):
		return "never"
	case s.Ref != "":
		return s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
	case s.Const != nil:
		b, _ := json.Marshal(*s.Const)
		return string(b)
	case s.Enum != nil:
		var parts []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			parts = append(parts, string(b))
		}
		return strings.Join(parts, "|")
	case s.AnyOf != nil:
		return alternatives(s.AnyOf, depth)
	case s.OneOf != nil:
		return alternatives(s.OneOf, depth)
	}
	types := typesOf(s)
	if len(types) == 0 {
		return "any"
	}
	var parts []string
	for _, t := range types {
		if t == "null" {
			continue
		}
		parts = append(parts, oneType(s, t, depth))
	}
	if slices.Contains(types, "null") {
		parts = append(parts, "null")
	}
	return strings.Join(parts, "|")
}

// alternatives renders the schemas of an anyOf or oneOf as T|U; an object
// schema with a title is named by it.
func alternatives(list []*Schema, depth int) string {
	var parts []string
	for _, a := range list {
		if a != nil && a.Title != "" && a.Ref == "" && slices.Contains(typesOf(a), "object") {
			parts = append(parts, a.Title)
			continue
		}
		parts = append(parts, typeString(a, depth))
	}
	return strings.Join(parts, "|")
}

// typesOf lists the types s allows: its type or types, else those its
// keywords imply (none: any).
func typesOf(s *Schema) []string {
	switch {
	case s.Type != "":
		return []string{s.Type}
	case len(s.Types) > 0:
		return s.Types
	case s.Properties != nil:
		return []string{"object"}
	case s.Items != nil:
		return []string{"array"}
	}
	return nil
}

func oneType(s *Schema, t string, depth int) string {
	switch t {
	case "string":
		if s.Format != "" {
			return s.Format
		}
		if s.ContentEncoding == "base64" {
			return "base64"
		}
	case "array":
		item := typeString(s.Items, depth+1)
		if strings.Contains(item, "|") {
			item = "(" + item + ")"
		}
		if s.MinItems != nil && s.MaxItems != nil && *s.MinItems == *s.MaxItems {
			return "[" + strconv.Itoa(*s.MinItems) + "]" + item
		}
		return "[]" + item
	case "object":
		return objectType(s, depth)
	}
	return t
}

// objectType renders an object schema: {a: T, b?: U}, map[string]T or object.
func objectType(s *Schema, depth int) string {
	if len(s.Properties) == 0 {
		if s.AdditionalProperties != nil && !isFalseSchema(s.AdditionalProperties) {
			return "map[string]" + typeString(s.AdditionalProperties, depth+1)
		}
		return "object"
	}
	if depth > 2 {
		return "{…}"
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range propertyNames(s) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		if !slices.Contains(s.Required, name) {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		b.WriteString(typeString(s.Properties[name], depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func isFalseSchema(s *Schema) bool { return s.Not != nil && schema.IsFalseOnly(s) }

// propertyNames lists the properties of s in their order (PropertyOrder,
// then the others sorted).
func propertyNames(s *Schema) []string {
	var names []string
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var rest []string
	for n := range s.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// Signature returns the method as one line, for example
//
//	subtract(minuend number, subtrahend number) number
//	sleep(ms integer) integer
//	sum(values ...number) number
//	echo(params any) any
//
// An optional param has "?" after its name; a deprecated method ends with
// " (deprecated)".
func (m *Method) Signature() string {
	var b strings.Builder
	b.WriteString(m.Name)
	b.WriteByte('(')
	switch {
	case m.ParamsSchema != nil:
		b.WriteString("params ")
		b.WriteString(TypeString(m.ParamsSchema))
	default:
		for i, p := range m.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name)
			if !p.Required && !m.Variadic {
				b.WriteByte('?')
			}
			b.WriteByte(' ')
			if m.Variadic {
				b.WriteString("...")
			}
			b.WriteString(TypeString(p.Schema))
		}
	}
	b.WriteByte(')')
	if m.Result != nil {
		b.WriteByte(' ')
		b.WriteString(TypeString(m.Result.Schema))
	}
	if m.Deprecated {
		b.WriteString(" (deprecated")
		if m.Replacement != "" {
			b.WriteString(": use " + m.Replacement)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Describe returns a readable, multi-line description of the method: its
// signature, summary and description, how params may be given, each param
// and the result with their types and descriptions, the errors it may
// return and its examples. Shared schemas named in the types are described
// after, from the document's components (d may be nil).
func (d *Doc) Describe(m *Method) string {
	var b strings.Builder
	line := func(s ...string) {
		b.WriteString(strings.Join(s, ""))
		b.WriteByte('\n')
	}
	line(m.Signature())
	if m.Summary != "" {
		line("  ", m.Summary)
	}
	if m.Description != "" {
		for l := range strings.SplitSeq(m.Description, "\n") {
			line("  ", l)
		}
	}
	if m.Deprecated {
		line(deprecationLine(m))
	}
	line(paramsLine(m))
	var refs []string
	for i, p := range m.Params {
		line(paramLine(m, i, p))
		refs = collectRefs(p.Schema, refs)
	}
	refs = collectRefs(m.ParamsSchema, refs)
	if m.Result != nil {
		l := "result: " + TypeString(m.Result.Schema)
		if desc := firstNonEmpty(m.Result.Description, m.Result.Summary, m.Result.Schema.Description); desc != "" {
			l += ": " + desc
		}
		line(l)
		refs = collectRefs(m.Result.Schema, refs)
	}
	if len(m.Errors) > 0 {
		line("errors:")
		for _, e := range m.Errors {
			line("  ", strconv.FormatInt(e.Code, 10), " ", e.Message)
		}
	}
	for i := range m.Examples {
		line(exampleLine(m, &m.Examples[i]))
	}
	refs = d.describeKinds(m.Subscription, refs, line)
	d.describeShared(refs, line)
	return b.String()
}

// describeKinds lists the kinds of subscriptions a subscribe method
// starts (its x-subscription), each with its params and events, and
// returns refs with the shared schemas their events name.
func (d *Doc) describeKinds(sub *Subscription, refs []string, line func(...string)) []string {
	if sub == nil {
		return refs
	}
	l := "kinds (the first param; the events come as " + sub.Notification + " notifications"
	if sub.Unsubscribe != "" {
		l += ", and " + sub.Unsubscribe + " [id] ends one"
	}
	line(l, "):")
	for _, k := range sub.Kinds {
		params := "no params"
		if k.Params != nil {
			params = "params " + TypeString(k.Params)
		}
		line("  ", k.Name, ": ", params, "; events ", TypeString(k.Event))
		ps := d.resolve(k.Params)
		for _, name := range propertyNames(ps) {
			prop := ps.Properties[name]
			req := "optional"
			if slices.Contains(ps.Required, name) {
				req = "required"
			}
			pl := "    " + name + " " + TypeString(prop) + " (" + req + ")"
			if prop.Description != "" {
				pl += ": " + prop.Description
			}
			line(pl)
		}
		refs = collectRefs(k.Event, refs)
	}
	return refs
}

// resolve follows a "$ref" to the document's shared schema (nil when s
// is nil or the reference leads nowhere).
func (d *Doc) resolve(s *Schema) *Schema {
	for i := 0; i < 8 && s != nil && s.Ref != ""; i++ {
		if d == nil || d.Components == nil {
			return nil
		}
		s = d.Components.Schemas[s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]]
	}
	if s == nil {
		return &Schema{}
	}
	return s
}

// deprecationLine tells that m is deprecated, and what replaces it when.
func deprecationLine(m *Method) string {
	l := "deprecated: it still works"
	if m.Replacement != "" {
		l += "; call " + m.Replacement + " instead"
	}
	if m.Sunset != "" {
		l += "; to be removed at " + m.Sunset
	}
	return l
}

// paramsLine tells how m's params may be given.
func paramsLine(m *Method) string {
	switch ps := m.ParamStructure; {
	case m.ParamsSchema != nil:
		return "params: " + TypeString(m.ParamsSchema) + " (by position or by name)"
	case len(m.Params) == 0:
		return "params: none"
	case m.Variadic:
		return "params: any number of " + TypeString(m.Params[0].Schema) + ", by position"
	case ps == "by-name":
		return "params: by name"
	case ps == "by-position":
		return "params: by position"
	}
	return "params: by position or by name"
}

// paramLine describes m's param p, the i-th.
func paramLine(m *Method, i int, p *ContentDescriptor) string {
	req := "optional"
	switch {
	case m.Variadic:
		req = "repeated"
	case p.Required:
		req = "required"
	}
	l := "  " + strconv.Itoa(i) + ". " + p.Name + " " + TypeString(p.Schema) + " (" + req
	if p.Deprecated {
		l += ", deprecated"
	}
	l += ")"
	if desc := firstNonEmpty(p.Description, p.Summary, p.Schema.Description); desc != "" {
		l += ": " + desc
	}
	return l
}

// exampleLine shows one of m's examples as a call and its result.
func exampleLine(m *Method, ex *ExamplePairing) string {
	var args []string
	for _, p := range ex.Params {
		if m.Variadic || m.ParamStructure == "by-position" {
			args = append(args, string(p.Value)) // positional: the names are no params'
		} else {
			args = append(args, p.Name+"="+string(p.Value))
		}
	}
	l := "example " + strconv.Quote(ex.Name) + ": (" + strings.Join(args, ", ") + ")"
	if ex.Result != nil {
		l += " → " + string(ex.Result.Value)
	}
	return l
}

// describeShared describes the shared schemas named in refs, and those
// they name, from the document's components (none when d is nil).
func (d *Doc) describeShared(refs []string, line func(...string)) {
	if d == nil || d.Components == nil {
		return
	}
	done := map[string]bool{}
	for len(refs) > 0 {
		name := refs[0]
		refs = refs[1:]
		s := d.Components.Schemas[name]
		if done[name] || s == nil {
			continue
		}
		done[name] = true
		line(name, ": ", typeString(s, 0))
		refs = collectRefs(s, refs)
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// collectRefs appends the names of the shared schemas that s refers to.
func collectRefs(s *Schema, refs []string) []string {
	if s == nil {
		return refs
	}
	if s.Ref != "" {
		name := s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
		if !slices.Contains(refs, name) {
			refs = append(refs, name)
		}
	}
	for _, n := range propertyNames(s) {
		refs = collectRefs(s.Properties[n], refs)
	}
	for _, sub := range []*Schema{s.Items, s.AdditionalProperties, s.Not} {
		refs = collectRefs(sub, refs)
	}
	for _, list := range [][]*Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			refs = collectRefs(sub, refs)
		}
	}
	return refs
}
