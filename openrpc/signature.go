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
	if s == nil || schema.IsTrue(s) {
		return "any"
	}
	if s.Not != nil && schema.IsFalseOnly(s) {
		return "never"
	}
	if s.Ref != "" {
		return s.Ref[strings.LastIndexByte(s.Ref, '/')+1:]
	}
	if s.Const != nil {
		b, _ := json.Marshal(*s.Const)
		return string(b)
	}
	if s.Enum != nil {
		var parts []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			parts = append(parts, string(b))
		}
		return strings.Join(parts, "|")
	}
	alts := func(list []*Schema) string {
		var parts []string
		for _, a := range list {
			parts = append(parts, typeString(a, depth))
		}
		return strings.Join(parts, "|")
	}
	switch {
	case s.AnyOf != nil:
		return alts(s.AnyOf)
	case s.OneOf != nil:
		return alts(s.OneOf)
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		if s.Properties != nil {
			types = []string{"object"}
		} else if s.Items != nil {
			types = []string{"array"}
		} else {
			return "any"
		}
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
	return t
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
		l := "deprecated: it still works"
		if m.Replacement != "" {
			l += "; call " + m.Replacement + " instead"
		}
		if m.Sunset != "" {
			l += "; to be removed at " + m.Sunset
		}
		line(l)
	}
	switch ps := m.ParamStructure; {
	case m.ParamsSchema != nil:
		line("params: ", TypeString(m.ParamsSchema), " (by position or by name)")
	case len(m.Params) == 0:
		line("params: none")
	case m.Variadic:
		line("params: any number of ", TypeString(m.Params[0].Schema), ", by position")
	case ps == "by-name":
		line("params: by name")
	case ps == "by-position":
		line("params: by position")
	default:
		line("params: by position or by name")
	}
	var refs []string
	collect := func(s *Schema) { refs = collectRefs(s, refs) }
	for i, p := range m.Params {
		req := "optional"
		if p.Required || m.Variadic {
			req = "required"
		}
		if m.Variadic {
			req = "repeated"
		}
		l := "  " + strconv.Itoa(i) + ". " + p.Name + " " + TypeString(p.Schema) + " (" + req
		if p.Deprecated {
			l += ", deprecated"
		}
		l += ")"
		if desc := firstNonEmpty(p.Description, p.Summary, p.Schema.Description); desc != "" {
			l += ": " + desc
		}
		line(l)
		collect(p.Schema)
	}
	if m.ParamsSchema != nil {
		collect(m.ParamsSchema)
	}
	if m.Result != nil {
		l := "result: " + TypeString(m.Result.Schema)
		if desc := firstNonEmpty(m.Result.Description, m.Result.Summary, m.Result.Schema.Description); desc != "" {
			l += ": " + desc
		}
		line(l)
		collect(m.Result.Schema)
	}
	if len(m.Errors) > 0 {
		line("errors:")
		for _, e := range m.Errors {
			line("  ", strconv.FormatInt(e.Code, 10), " ", e.Message)
		}
	}
	for _, ex := range m.Examples {
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
		line(l)
	}
	if d != nil && d.Components != nil {
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
	return b.String()
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
