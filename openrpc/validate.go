package openrpc

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/seedhq/jsonrpc"
)

// Problem is one way in which a JSON value does not match its schema.
type Problem struct {
	Path    string `json:"path"`    // a JSON pointer (RFC 6901) into the value; "" is the value itself
	Problem string `json:"problem"` // what is wrong, e.g. "expected number, got string"
}

// MaxProblems bounds the problems one validation reports.
const MaxProblems = 32

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

// A Validator checks JSON values against a compiled schema. It is safe for
// concurrent use.
type Validator struct{ root *node }

// Compile compiles schema s for validation. References ("$ref") are resolved
// in defs, whose keys are the names after prefix (for instance
// RefComponents); with nil defs, s's own "$defs" are used with RefDefs.
//
// The supported keywords are type, enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength,
// pattern, format (date-time is checked, other formats are annotations),
// items, minItems, maxItems, uniqueItems, properties, required,
// additionalProperties, allOf, anyOf, oneOf, not and $ref; annotations are
// ignored. Other validation keywords make Compile fail rather than validate
// less than the schema says.
func Compile(s *Schema, defs map[string]*Schema, prefix string) (*Validator, error) {
	c := newCompiler(defs, prefix)
	if defs == nil && s != nil {
		c.defs, c.prefix = s.Defs, RefDefs
	}
	root := c.compile(s)
	if err := c.finish(); err != nil {
		return nil, err
	}
	return &Validator{root: root}, nil
}

// Validate returns the problems of JSON value data (at most MaxProblems),
// or nil when it matches.
func (v *Validator) Validate(data []byte) []Problem {
	w := getWalker(data)
	defer putWalker(w)
	w.check(v.root)
	return w.probs
}

var walkers = sync.Pool{New: func() any { return new(walker) }}

func getWalker(data []byte) *walker {
	w := walkers.Get().(*walker)
	w.init(data)
	return w
}

func putWalker(w *walker) {
	w.data, w.probs = nil, nil // retain neither the params nor the problems
	walkers.Put(w)
}

type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBool
	tObject
	tArray
	tNumber
	tString
	tInteger
)

var typeNames = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

func parseType(s string) (typeSet, bool) {
	for i, n := range typeNames {
		if n == s {
			return 1 << i, true
		}
	}
	return 0, false
}

func (t typeSet) String() string {
	var names []string
	for i, n := range typeNames {
		if t&(1<<i) != 0 && !(n == "integer" && t&tNumber != 0) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

type enumVal struct {
	kind typeSet
	str  string
	num  float64
	b    bool
}

type propNode struct {
	node *node
	req  int // index in required, or -1
}

type node struct {
	never          bool
	types          typeSet // 0: any type
	enum           []enumVal
	constant       bool // enum came from const
	min, max       *float64
	exMin, exMax   *float64
	multipleOf     float64
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	dateTime       bool
	props          map[string]propNode
	required       []string
	addl           *node // nil: anything
	items          *node
	minItems       int
	maxItems       int
	unique         bool
	allOf          []*node
	anyOf          []*node
	oneOf          []*node
	not            *node
	ref            string
	refTo          *node
	trivial        bool // accepts everything: skip
	pureRef        bool // only a $ref: follow it
}

type compiler struct {
	defs   map[string]*Schema
	prefix string
	refs   map[string]*node
	errs   []error
	all    []*node
}

func newCompiler(defs map[string]*Schema, prefix string) *compiler {
	return &compiler{defs: defs, prefix: prefix, refs: map[string]*node{}}
}

func (c *compiler) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("openrpc: "+format, args...))
}

func (c *compiler) compile(s *Schema) *node {
	n := &node{minLen: -1, maxLen: -1, maxItems: -1}
	c.all = append(c.all, n)
	if s == nil {
		return n
	}
	if s.Not != nil && isTrue(s.Not) && isFalseOnly(s) {
		n.never = true
		return n
	}
	if s.Ref != "" {
		n.ref = s.Ref
		if _, ok := c.refs[s.Ref]; !ok {
			name, ok := strings.CutPrefix(s.Ref, c.prefix)
			def := c.defs[name]
			if !ok || def == nil {
				c.errorf("unresolved $ref %q", s.Ref)
				return n
			}
			c.refs[s.Ref] = nil // mark while compiling (recursion)
			c.refs[s.Ref] = c.compile(def)
		}
	}
	switch {
	case s.Type != "":
		t, ok := parseType(s.Type)
		if !ok {
			c.errorf("unknown type %q", s.Type)
		}
		n.types = t
	case len(s.Types) > 0:
		for _, ty := range s.Types {
			t, ok := parseType(ty)
			if !ok {
				c.errorf("unknown type %q", ty)
			}
			n.types |= t
		}
	}
	if s.Enum != nil {
		n.enum = c.enumVals(s.Enum)
	}
	if s.Const != nil {
		n.enum, n.constant = c.enumVals([]any{*s.Const}), true
	}
	n.min, n.max, n.exMin, n.exMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	if s.MultipleOf != nil {
		n.multipleOf = *s.MultipleOf
	}
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			c.errorf("pattern %q: %v", s.Pattern, err)
		}
		n.pattern = re
	}
	n.dateTime = s.Format == "date-time"
	if s.Properties != nil || len(s.Required) > 0 {
		n.props = make(map[string]propNode, len(s.Properties))
		for name, ps := range s.Properties {
			n.props[name] = propNode{node: c.compile(ps), req: -1}
		}
		for i, r := range s.Required {
			p, ok := n.props[r]
			if !ok {
				p = propNode{node: c.compile(&Schema{})}
			}
			p.req = i
			n.props[r] = p
		}
		n.required = s.Required
	}
	if s.AdditionalProperties != nil {
		n.addl = c.compile(s.AdditionalProperties)
	}
	if s.Items != nil {
		n.items = c.compile(s.Items)
	}
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	n.unique = s.UniqueItems
	for _, sub := range s.AllOf {
		n.allOf = append(n.allOf, c.compile(sub))
	}
	for _, sub := range s.AnyOf {
		n.anyOf = append(n.anyOf, c.compile(sub))
	}
	for _, sub := range s.OneOf {
		n.oneOf = append(n.oneOf, c.compile(sub))
	}
	if s.Not != nil {
		n.not = c.compile(s.Not)
	}
	var unsupported []string
	for kw, set := range map[string]bool{
		"prefixItems": s.PrefixItems != nil, "items (array form)": s.ItemsArray != nil, "additionalItems": s.AdditionalItems != nil,
		"contains": s.Contains != nil, "minProperties": s.MinProperties != nil, "maxProperties": s.MaxProperties != nil,
		"dependentRequired": s.DependentRequired != nil, "patternProperties": s.PatternProperties != nil,
		"propertyNames": s.PropertyNames != nil, "unevaluatedProperties": s.UnevaluatedProperties != nil,
		"unevaluatedItems": s.UnevaluatedItems != nil, "if": s.If != nil, "dependentSchemas": s.DependentSchemas != nil,
		"dependencies": s.DependencySchemas != nil || s.DependencyStrings != nil, "$dynamicRef": s.DynamicRef != "",
	} {
		if set {
			unsupported = append(unsupported, kw)
		}
	}
	if len(unsupported) > 0 {
		slices.Sort(unsupported)
		c.errorf("unsupported keywords: %s", strings.Join(unsupported, ", "))
	}
	return n
}

// isFalseOnly reports whether s is exactly {"not": {}}, the false schema.
func isFalseOnly(s *Schema) bool {
	c := *s
	c.Not = nil
	return isTrue(&c)
}

func (c *compiler) enumVals(vals []any) []enumVal {
	out := make([]enumVal, 0, len(vals))
	for _, v := range vals {
		var e enumVal
		switch v := v.(type) {
		case nil:
			e.kind = tNull
		case bool:
			e.kind, e.b = tBool, v
		case string:
			e.kind, e.str = tString, v
		case float64:
			e.kind, e.num = tNumber, v
		case float32:
			e.kind, e.num = tNumber, float64(v)
		case int:
			e.kind, e.num = tNumber, float64(v)
		case int64:
			e.kind, e.num = tNumber, float64(v)
		case uint64:
			e.kind, e.num = tNumber, float64(v)
		case int32:
			e.kind, e.num = tNumber, float64(v)
		default:
			c.errorf("enum value %v (%T) is not supported", v, v)
			continue
		}
		out = append(out, e)
	}
	return out
}

// finish links references and marks the nodes that accept everything.
func (c *compiler) finish() error {
	for _, n := range c.all {
		if n.ref != "" {
			n.refTo = c.refs[n.ref]
		}
	}
	for _, n := range c.all {
		n.trivial = !n.never && n.types == 0 && n.enum == nil && n.min == nil && n.max == nil &&
			n.exMin == nil && n.exMax == nil && n.multipleOf == 0 && n.minLen < 0 && n.maxLen < 0 &&
			n.pattern == nil && !n.dateTime && n.props == nil && n.addl == nil && n.items == nil &&
			n.minItems == 0 && n.maxItems < 0 && !n.unique && n.allOf == nil && n.anyOf == nil &&
			n.oneOf == nil && n.not == nil && n.ref == ""
		n.pureRef = n.refTo != nil && n.trivialBesidesRef()
	}
	return errors.Join(c.errs...)
}

// seg is one step of a JSON pointer.
type seg struct {
	name  []byte // raw (still quoted-escaped) member name, or nil for an index
	index int
}

type walker struct {
	data  []byte
	pos   int
	path  []seg
	stack [16]seg
	probs []Problem
	quiet int // >0 while trying branches: count only
	fails int
	err   bool
}

func (w *walker) init(data []byte) {
	w.data, w.pos = data, 0
	w.path = w.stack[:0]
	w.probs, w.quiet, w.fails, w.err = nil, 0, 0, false
}

func (w *walker) pointer() string {
	var b strings.Builder
	for _, s := range w.path {
		b.WriteByte('/')
		if s.name == nil {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		name := unquoteName(s.name)
		name = strings.ReplaceAll(name, "~", "~0")
		b.WriteString(strings.ReplaceAll(name, "/", "~1"))
	}
	return b.String()
}

func (w *walker) report(problem string) {
	w.fails++
	if w.quiet > 0 || len(w.probs) >= MaxProblems {
		return
	}
	w.probs = append(w.probs, Problem{Path: w.pointer(), Problem: problem})
}

// muted reports whether a problem would not be recorded (while trying
// branches, or past MaxProblems); it then counts it, so that the caller can
// skip building the message.
func (w *walker) muted() bool {
	if w.quiet > 0 || len(w.probs) >= MaxProblems {
		w.fails++
		return true
	}
	return false
}

func (w *walker) reportAt(name string, problem string) {
	w.path = append(w.path, seg{name: []byte(`"` + name + `"`)})
	w.report(problem)
	w.path = w.path[:len(w.path)-1]
}

func unquoteName(raw []byte) string {
	if !hasEscape(raw) {
		return string(raw[1 : len(raw)-1])
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

func hasEscape(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' {
			return true
		}
	}
	return false
}

func (w *walker) ws() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// kindAt returns the JSON type of the value at the current position.
func (w *walker) kindAt() typeSet {
	w.ws()
	if w.pos >= len(w.data) {
		return 0
	}
	switch c := w.data[w.pos]; {
	case c == 'n':
		return tNull
	case c == 't' || c == 'f':
		return tBool
	case c == '{':
		return tObject
	case c == '[':
		return tArray
	case c == '"':
		return tString
	case c == '-' || (c >= '0' && c <= '9'):
		return tNumber
	}
	return 0
}

// skip moves past the value at the current position and returns its bytes.
func (w *walker) skip() []byte {
	w.ws()
	start := w.pos
	if w.pos >= len(w.data) {
		w.err = true
		return nil
	}
	switch c := w.data[w.pos]; c {
	case '"':
		w.pos++
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case '\\':
				w.pos += 2
				continue
			case '"':
				w.pos++
				return w.data[start:w.pos]
			}
			w.pos++
		}
		w.err = true
	case '{', '[':
		depth := 0
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case '"':
				w.skip()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					w.pos++
					return w.data[start:w.pos]
				}
			}
			w.pos++
		}
		w.err = true
	default:
		for w.pos < len(w.data) {
			switch w.data[w.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return w.data[start:w.pos]
			}
			w.pos++
		}
	}
	if w.pos > len(w.data) {
		w.pos = len(w.data)
	}
	return w.data[start:w.pos]
}

func (w *walker) expect(c byte) bool {
	w.ws()
	if w.pos < len(w.data) && w.data[w.pos] == c {
		w.pos++
		return true
	}
	return false
}

// check validates the value at the current position against n and moves past it.
func (w *walker) check(n *node) {
	for n != nil && n.pureRef {
		n = n.refTo
	}
	if w.err {
		return
	}
	if n == nil || n.trivial {
		w.skip()
		return
	}
	kind := w.kindAt()
	if kind == 0 {
		w.err = true
		w.report("invalid JSON")
		return
	}
	if n.never {
		w.skip()
		w.report("not allowed")
		return
	}
	if n.allOf != nil || n.anyOf != nil || n.oneOf != nil || n.not != nil || n.refTo != nil {
		w.combinators(n, kind)
		return
	}
	w.checkOne(n, kind)
}

func (n *node) trivialBesidesRef() bool {
	m := *n
	m.ref, m.refTo = "", nil
	return m.types == 0 && m.enum == nil && m.min == nil && m.max == nil && m.exMin == nil && m.exMax == nil &&
		m.multipleOf == 0 && m.minLen < 0 && m.maxLen < 0 && m.pattern == nil && !m.dateTime && m.props == nil &&
		m.addl == nil && m.items == nil && m.minItems == 0 && m.maxItems < 0 && !m.unique && m.allOf == nil &&
		m.anyOf == nil && m.oneOf == nil && m.not == nil && !m.never
}

// try validates the value at start against n quietly and returns the number
// of problems found.
func (w *walker) try(n *node, start int) int {
	w.pos = start
	w.quiet++
	before := w.fails
	w.check(n)
	w.quiet--
	return w.fails - before
}

func (w *walker) combinators(n *node, kind typeSet) {
	w.ws()
	start := w.pos
	// The node's own keywords.
	own := *n
	own.allOf, own.anyOf, own.oneOf, own.not, own.ref, own.refTo = nil, nil, nil, nil, "", nil
	if own.trivialBesidesRef() {
		w.skip()
	} else {
		w.checkOne(&own, kind)
	}
	end := w.pos
	all := n.allOf
	if n.refTo != nil {
		all = append([]*node{n.refTo}, all...)
	}
	for _, sub := range all {
		w.pos = start
		w.check(sub)
	}
	if n.anyOf != nil || n.oneOf != nil {
		branches, one := n.anyOf, false
		if n.oneOf != nil {
			branches, one = n.oneOf, true
		}
		matched := 0
		var typed []*node // branches whose type admits the value
		var union typeSet
		for _, b := range branches {
			if w.try(b, start) == 0 {
				matched++
			}
			bt := b.typesOf()
			union |= bt
			if bt == 0 || bt&kind != 0 || (bt&tInteger != 0 && kind == tNumber) {
				typed = append(typed, b)
			}
		}
		switch {
		case matched == 0 && len(typed) == 1:
			w.pos = start
			w.check(typed[0]) // report that branch's problems
		case matched == 0 && len(typed) == 0:
			if !w.muted() {
				w.report("expected " + union.String() + ", got " + kind.String())
			}
		case matched == 0:
			w.report("does not match any of the allowed schemas")
		case one && matched > 1:
			w.report("matches more than one of the exclusive schemas")
		}
	}
	if n.not != nil && w.try(n.not, start) == 0 {
		w.pos = start
		w.report("matches a schema it must not match")
	}
	w.pos = end
}

// typesOf returns the JSON types a node admits (0: any or unknown).
func (n *node) typesOf() typeSet {
	for n.refTo != nil && n.types == 0 {
		n = n.refTo
	}
	return n.types
}

func (w *walker) checkOne(n *node, kind typeSet) {
	if n.types != 0 && n.types&kind == 0 {
		if !(kind == tNumber && n.types&tInteger != 0) {
			w.skip()
			if !w.muted() {
				w.report("expected " + n.types.String() + ", got " + kind.String())
			}
			return
		}
	}
	switch kind {
	case tObject:
		w.object(n)
	case tArray:
		w.array(n)
	case tString:
		w.str(n, w.skip())
	case tNumber:
		w.number(n, w.skip())
	default:
		lit := w.skip()
		if n.enum != nil {
			ok := false
			for _, e := range n.enum {
				if (e.kind == tNull && lit[0] == 'n') || (e.kind == tBool && e.b == (lit[0] == 't')) {
					ok = true
				}
			}
			if !ok && !w.muted() {
				w.report(n.enumProblem())
			}
		}
	}
}

func (n *node) enumProblem() string {
	var b strings.Builder
	if n.constant {
		b.WriteString("must be ")
	} else if len(n.enum) == 1 {
		b.WriteString("must be ")
	} else {
		b.WriteString("must be one of ")
	}
	for i, e := range n.enum {
		if i > 0 {
			b.WriteString(", ")
		}
		switch e.kind {
		case tNull:
			b.WriteString("null")
		case tBool:
			b.WriteString(strconv.FormatBool(e.b))
		case tString:
			b.WriteString(strconv.Quote(e.str))
		case tNumber:
			b.WriteString(strconv.FormatFloat(e.num, 'g', -1, 64))
		}
	}
	return b.String()
}

func (w *walker) object(n *node) {
	w.pos++ // {
	var seen uint64
	var seenMore []bool
	if len(n.required) > 64 {
		seenMore = make([]bool, len(n.required))
	}
	if !w.expect('}') {
		for {
			w.ws()
			name := w.skip()
			if w.err || len(name) < 2 || name[0] != '"' || !w.expect(':') {
				w.err = true
				w.report("invalid JSON")
				return
			}
			w.path = append(w.path, seg{name: name})
			var p propNode
			var ok bool
			if n.props != nil {
				if hasEscape(name) {
					p, ok = n.props[unquoteName(name)]
				} else {
					p, ok = n.props[string(name[1:len(name)-1])]
				}
			}
			switch {
			case ok:
				if p.req >= 0 {
					if p.req < 64 {
						seen |= 1 << p.req
					} else {
						seenMore[p.req] = true
					}
				}
				w.check(p.node)
			case n.addl != nil && n.addl.never:
				w.skip()
				w.report("unknown member")
			default:
				w.check(n.addl)
			}
			w.path = w.path[:len(w.path)-1]
			if w.err {
				return
			}
			if w.expect(',') {
				continue
			}
			if !w.expect('}') {
				w.err = true
				w.report("invalid JSON")
			}
			break
		}
	}
	for i, r := range n.required {
		if (i < 64 && seen&(1<<i) == 0) || (i >= 64 && !seenMore[i]) {
			w.reportAt(r, "missing required member")
		}
	}
}

func (w *walker) array(n *node) {
	w.pos++ // [
	count := 0
	var elems [][]byte
	if !w.expect(']') {
		for {
			w.path = append(w.path, seg{index: count})
			w.ws()
			start := w.pos
			w.check(n.items)
			if n.unique {
				elems = append(elems, w.data[start:w.pos])
			}
			w.path = w.path[:len(w.path)-1]
			count++
			if w.err {
				return
			}
			if w.expect(',') {
				continue
			}
			if !w.expect(']') {
				w.err = true
				w.report("invalid JSON")
			}
			break
		}
	}
	if count < n.minItems {
		w.report("expected at least " + strconv.Itoa(n.minItems) + " items, got " + strconv.Itoa(count))
	}
	if n.maxItems >= 0 && count > n.maxItems {
		w.report("expected at most " + strconv.Itoa(n.maxItems) + " items, got " + strconv.Itoa(count))
	}
	if n.unique {
		for i := range elems {
			for j := range i {
				if jsonEqual(elems[i], elems[j]) {
					w.report("items " + strconv.Itoa(j) + " and " + strconv.Itoa(i) + " are equal")
					return
				}
			}
		}
	}
}

func jsonEqual(a, b []byte) bool {
	x, err1 := jsontext.AppendFormat(nil, a)
	y, err2 := jsontext.AppendFormat(nil, b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func (w *walker) str(n *node, raw []byte) {
	if n.enum == nil && n.minLen < 0 && n.maxLen < 0 && n.pattern == nil && !n.dateTime {
		return
	}
	var s string
	if hasEscape(raw) {
		b, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			w.report("invalid string")
			return
		}
		s = string(b)
	} else {
		inner := raw[1 : len(raw)-1]
		s = unsafe.String(unsafe.SliceData(inner), len(inner)) // not retained
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if e.kind == tString && e.str == s {
				ok = true
				break
			}
		}
		if !ok && !w.muted() {
			w.report(n.enumProblem())
		}
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen {
			w.report("must be at least " + strconv.Itoa(n.minLen) + " characters long")
		}
		if n.maxLen >= 0 && l > n.maxLen {
			w.report("must be at most " + strconv.Itoa(n.maxLen) + " characters long")
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		w.report("must match the pattern " + n.pattern.String())
	}
	if n.dateTime {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			w.report("expected an RFC 3339 date-time")
		}
	}
}

func (w *walker) number(n *node, lit []byte) {
	integral := true
	for _, c := range lit {
		if c == '.' || c == 'e' || c == 'E' {
			integral = false
			break
		}
	}
	needValue := !integral && n.types&tInteger != 0 && n.types&tNumber == 0 ||
		n.enum != nil || n.min != nil || n.max != nil || n.exMin != nil || n.exMax != nil || n.multipleOf != 0
	if !needValue {
		return
	}
	x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(lit), len(lit)), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		w.report("invalid number")
		return
	}
	if n.types&tInteger != 0 && n.types&tNumber == 0 && x != math.Trunc(x) {
		w.report("expected integer, got number")
		return
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if e.kind == tNumber && e.num == x {
				ok = true
				break
			}
		}
		if !ok && !w.muted() {
			w.report(n.enumProblem())
		}
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	if n.min != nil && x < *n.min {
		w.report("must be >= " + f(*n.min))
	}
	if n.max != nil && x > *n.max {
		w.report("must be <= " + f(*n.max))
	}
	if n.exMin != nil && x <= *n.exMin {
		w.report("must be > " + f(*n.exMin))
	}
	if n.exMax != nil && x >= *n.exMax {
		w.report("must be < " + f(*n.exMax))
	}
	if n.multipleOf != 0 {
		if q := x / n.multipleOf; q != math.Trunc(q) {
			w.report("must be a multiple of " + f(n.multipleOf))
		}
	}
}
