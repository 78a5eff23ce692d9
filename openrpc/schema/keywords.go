package schema

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// A keyword is what the validator knows of one JSON Schema keyword, or of a
// few that only make sense together (items reads prefixItems, contains its
// bounds): the names it claims and how to compile them. compile returns nil
// when s has none of them; a nil compile marks an annotation, or a keyword
// that a sibling reads. A schema with a keyword that no entry claims is
// validated by the fallback (see Compile).
//
// Adding a keyword is adding an entry here, with its check below.
type keyword struct {
	names   []string
	compile func(c *compiler, s *Schema, n *node) check
}

// A check is a compiled keyword. run validates v, reporting its problems on
// w; it returns false to skip the node's remaining checks (a value of the
// wrong type gets one problem, not one per keyword).
type check interface {
	run(w *walker, v *value) bool
}

// keywords is in the order the checks run, and problems are reported (set
// in init: the compile functions of applicators refer to it).
var keywords []keyword

var keywordIndex = map[string]int{}

func init() {
	keywords = []keyword{
		{[]string{"$schema"}, compileSchemaURI},
		{[]string{"$ref"}, compileRef},
		{[]string{"type"}, compileType},
		{[]string{"enum"}, compileEnum},
		{[]string{"const"}, compileConst},
		{[]string{"minimum"}, bound("minimum", func(s *Schema) *float64 { return s.Minimum }, func(c int) bool { return c >= 0 }, ">= ")},
		{[]string{"maximum"}, bound("maximum", func(s *Schema) *float64 { return s.Maximum }, func(c int) bool { return c <= 0 }, "<= ")},
		{[]string{"exclusiveMinimum"}, bound("exclusiveMinimum", func(s *Schema) *float64 { return s.ExclusiveMinimum }, func(c int) bool { return c > 0 }, "> ")},
		{[]string{"exclusiveMaximum"}, bound("exclusiveMaximum", func(s *Schema) *float64 { return s.ExclusiveMaximum }, func(c int) bool { return c < 0 }, "< ")},
		{[]string{"multipleOf"}, compileMultipleOf},
		{[]string{"minLength"}, compileMinLength},
		{[]string{"maxLength"}, compileMaxLength},
		{[]string{"pattern"}, compilePattern},
		{[]string{"format"}, compileFormat},
		{[]string{"items", "prefixItems"}, compileItems},
		{[]string{"contains", "minContains", "maxContains"}, compileContains},
		{[]string{"minItems"}, compileMinItems},
		{[]string{"maxItems"}, compileMaxItems},
		{[]string{"uniqueItems"}, compileUniqueItems},
		{[]string{"properties", "patternProperties", "additionalProperties", "required"}, compileMembers},
		{[]string{"dependentRequired"}, compileDependentRequired},
		{[]string{"minProperties"}, compileMinProperties},
		{[]string{"maxProperties"}, compileMaxProperties},
		{[]string{"propertyNames"}, compilePropertyNames},
		{[]string{"dependentSchemas"}, compileDependentSchemas},
		{[]string{"allOf"}, compileAllOf},
		{[]string{"anyOf"}, func(c *compiler, s *Schema, _ *node) check { return c.branches(s.AnyOf, false) }},
		{[]string{"oneOf"}, func(c *compiler, s *Schema, _ *node) check { return c.branches(s.OneOf, true) }},
		{[]string{"not"}, compileNot},
		{[]string{"if", "then", "else"}, compileIf},
		// Annotations.
		{[]string{"$defs", "$comment", "title", "description", "default", "deprecated", "readOnly", "writeOnly",
			"examples", "contentEncoding", "contentMediaType", "contentSchema"}, nil},
	}
	for i, k := range keywords {
		for _, n := range k.names {
			keywordIndex[n] = i
		}
	}
}

// keywordsOf returns the keywords present in s.
func keywordsOf(s *Schema) []string {
	b, err := json.Marshal(s)
	if err != nil || len(b) == 0 || b[0] != '{' {
		return nil
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(b)))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	var names []string
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return names
		}
		names = append(names, tok.String())
		if err := dec.SkipValue(); err != nil {
			return names
		}
	}
	return names
}

func compileSchemaURI(c *compiler, s *Schema, _ *node) check {
	if s.Schema != "" && strings.TrimSuffix(s.Schema, "#") != "https://json-schema.org/draft/2020-12/schema" {
		c.unsupportedf("$schema %q", s.Schema)
	}
	return nil
}

// $ref

type refCheck struct{ target *node }

func compileRef(c *compiler, s *Schema, n *node) check {
	if s.Ref == "" {
		return nil
	}
	t := c.refNode(s.Ref)
	if t == nil {
		return nil
	}
	n.ref = t
	return refCheck{t}
}

func (r refCheck) run(w *walker, v *value) bool {
	w.checkAt(r.target, v.start)
	return true
}

// type

type typeCheck struct{ types typeSet }

func compileType(c *compiler, s *Schema, n *node) check {
	names := s.Types
	if s.Type != "" {
		names = []string{s.Type}
	}
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		t, ok := parseType(name)
		if !ok {
			c.errorf("unknown type %q", name)
		}
		n.types |= t
	}
	return typeCheck{n.types}
}

func (t typeCheck) run(w *walker, v *value) bool {
	if t.types&v.kind != 0 || v.kind == tNumber && t.types&tInteger != 0 && isIntegerLiteral(w.raw(v), w.buf[:0]) {
		return true
	}
	if !w.muted() {
		got := v.kind.String()
		if v.kind == tNumber && t.types&tInteger != 0 {
			got = "number" // not an integer
		}
		w.report("expected " + t.types.String() + ", got " + got)
	}
	return false
}

// enum and const

type enumCheck struct {
	values  map[string]struct{} // canonical forms
	problem string
}

func compileEnum(c *compiler, s *Schema, _ *node) check {
	if s.Enum == nil {
		return nil
	}
	return c.enum(s.Enum, len(s.Enum) == 1)
}

func compileConst(c *compiler, s *Schema, _ *node) check {
	if s.Const == nil {
		return nil
	}
	return c.enum([]any{*s.Const}, true)
}

func (c *compiler) enum(vals []any, single bool) check {
	e := enumCheck{values: map[string]struct{}{}}
	var b strings.Builder
	if single {
		b.WriteString("must be ")
	} else {
		b.WriteString("must be one of ")
	}
	for i, v := range vals {
		raw, err := json.Marshal(v)
		if err != nil {
			c.errorf("enum value %v: %v", v, err)
			continue
		}
		form, ok := canonical(nil, raw)
		if !ok {
			c.errorf("enum value %s is not JSON", raw)
			continue
		}
		e.values[string(form)] = struct{}{}
		if i > 0 {
			b.WriteString(", ")
		}
		if s, ok := v.(string); ok {
			b.WriteString(strconv.Quote(s))
		} else {
			b.Write(raw)
		}
	}
	e.problem = b.String()
	return e
}

func (e enumCheck) run(w *walker, v *value) bool {
	form, ok := canonical(w.buf[:0], w.raw(v))
	w.buf = form[:0]
	if _, in := e.values[string(form)]; !ok || !in {
		if !w.muted() {
			w.report(e.problem)
		}
	}
	return true
}

// Numbers

// number returns the float64 nearest to number v.
func (w *walker) number(v *value) float64 {
	if !v.decoded {
		lit := w.raw(v)
		v.num, _ = strconv.ParseFloat(unsafe.String(unsafe.SliceData(lit), len(lit)), 64) // ±Inf or 0 out of range: still ordered
		v.decoded = true
	}
	return v.num
}

// compare compares number v with limit (whose exact value is dec) exactly.
func (w *walker) compare(v *value, limit float64, dec decimal) int {
	// Rounding is monotonic, and limit is a float64: if v's float differs
	// from limit, v differs the same way.
	switch x := w.number(v); {
	case x < limit:
		return -1
	case x > limit:
		return 1
	}
	d, ok := parseDecimal(w.raw(v), w.buf[:0])
	if !ok {
		return 0
	}
	return cmpDecimal(d, dec)
}

type boundCheck struct {
	limit float64
	dec   decimal
	ok    func(cmp int) bool
	text  string
}

func bound(name string, get func(*Schema) *float64, ok func(int) bool, op string) func(*compiler, *Schema, *node) check {
	return func(c *compiler, s *Schema, _ *node) check {
		p := get(s)
		if p == nil {
			return nil
		}
		return boundCheck{*p, floatDecimal(*p), ok, "must be " + op + strconv.FormatFloat(*p, 'g', -1, 64)}
	}
}

func (b boundCheck) run(w *walker, v *value) bool {
	if v.kind == tNumber && !b.ok(w.compare(v, b.limit, b.dec)) {
		w.report(b.text)
	}
	return true
}

type multipleOfCheck struct {
	m    float64
	dec  decimal
	text string
}

func compileMultipleOf(c *compiler, s *Schema, _ *node) check {
	if s.MultipleOf == nil {
		return nil
	}
	m := *s.MultipleOf
	if !(m > 0) {
		c.errorf("multipleOf %v is not positive", m)
		return nil
	}
	return multipleOfCheck{m, floatDecimal(m), "must be a multiple of " + strconv.FormatFloat(m, 'g', -1, 64)}
}

func (m multipleOfCheck) run(w *walker, v *value) bool {
	if v.kind != tNumber {
		return true
	}
	var ok bool
	lit := w.raw(v)
	if x := w.number(v); m.m == math.Trunc(m.m) && m.m < 1<<53 && math.Abs(x) < 1<<53 && isIntegerLiteral(lit, w.buf[:0]) && x == math.Trunc(x) {
		ok = math.Mod(x, m.m) == 0 // both exact integers
	} else {
		d, valid := parseDecimal(lit, w.buf[:0])
		ok = valid && d.isMultipleOf(m.dec)
	}
	if !ok {
		w.report(m.text)
	}
	return true
}

// Strings

// str returns the unescaped string v.
func (w *walker) str(v *value) (string, bool) {
	if !v.decoded {
		raw := w.raw(v)
		if hasEscape(raw) {
			b, err := jsontext.AppendUnquote(nil, raw)
			v.str, v.bad = string(b), err != nil
		} else {
			inner := raw[1 : len(raw)-1]
			v.str = unsafe.String(unsafe.SliceData(inner), len(inner)) // not retained
		}
		v.decoded = true
	}
	if v.bad {
		w.report("invalid string")
	}
	return v.str, !v.bad
}

type stringCheck struct {
	ok   func(string) bool
	text string
}

func (sc stringCheck) run(w *walker, v *value) bool {
	if v.kind != tString {
		return true
	}
	if s, ok := w.str(v); ok && !sc.ok(s) {
		w.report(sc.text)
	}
	return true
}

func compileMinLength(c *compiler, s *Schema, _ *node) check {
	if s.MinLength == nil {
		return nil
	}
	n := *s.MinLength
	return stringCheck{func(s string) bool { return utf8.RuneCountInString(s) >= n }, "must be at least " + strconv.Itoa(n) + " characters long"}
}

func compileMaxLength(c *compiler, s *Schema, _ *node) check {
	if s.MaxLength == nil {
		return nil
	}
	n := *s.MaxLength
	return stringCheck{func(s string) bool { return utf8.RuneCountInString(s) <= n }, "must be at most " + strconv.Itoa(n) + " characters long"}
}

func compilePattern(c *compiler, s *Schema, _ *node) check {
	if s.Pattern == "" {
		return nil
	}
	re, err := regexp.Compile(s.Pattern)
	if err != nil {
		c.errorf("pattern %q: %v", s.Pattern, err)
		return nil
	}
	return stringCheck{re.MatchString, "must match the pattern " + s.Pattern}
}

// compileFormat asserts date-time (RFC 3339); other formats are annotations.
func compileFormat(c *compiler, s *Schema, _ *node) check {
	if s.Format != "date-time" {
		return nil
	}
	return stringCheck{func(s string) bool {
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	}, "expected an RFC 3339 date-time"}
}

// Arrays

type itemsCheck struct {
	prefix []*node
	rest   *node // nil: any
}

func compileItems(c *compiler, s *Schema, _ *node) check {
	if s.ItemsArray != nil {
		c.unsupportedf("items as an array")
	}
	if s.Items == nil && s.PrefixItems == nil {
		return nil
	}
	ic := itemsCheck{}
	for _, p := range s.PrefixItems {
		ic.prefix = append(ic.prefix, c.compile(p))
	}
	if s.Items != nil {
		ic.rest = c.compile(s.Items)
	}
	return ic
}

func (ic itemsCheck) run(w *walker, v *value) bool {
	if v.kind != tArray {
		return true
	}
	for it := w.elements(v); w.next(&it); {
		i := it.i - 1
		n := ic.rest
		if i < len(ic.prefix) {
			n = ic.prefix[i]
		} else if n == nil {
			break
		}
		w.checkElem(it.e, i, n)
	}
	return true
}

type containsCheck struct {
	sub      *node
	min, max int // max -1: none
}

func compileContains(c *compiler, s *Schema, _ *node) check {
	if s.Contains == nil {
		return nil
	}
	cc := containsCheck{sub: c.compile(s.Contains), min: 1, max: -1}
	if s.MinContains != nil {
		cc.min = *s.MinContains
	}
	if s.MaxContains != nil {
		cc.max = *s.MaxContains
	}
	return cc
}

func (cc containsCheck) run(w *walker, v *value) bool {
	if v.kind != tArray {
		return true
	}
	n := 0
	for it := w.elements(v); w.next(&it); {
		if w.try(cc.sub, it.e.start) == 0 {
			n++
		}
	}
	switch {
	case n < cc.min && cc.min == 1:
		w.report("no item matches contains")
	case n < cc.min:
		w.report("expected at least " + strconv.Itoa(cc.min) + " items that match contains, got " + strconv.Itoa(n))
	case cc.max >= 0 && n > cc.max:
		w.report("expected at most " + strconv.Itoa(cc.max) + " items that match contains, got " + strconv.Itoa(n))
	}
	return true
}

// countCheck bounds the number of elements of an object or an array.
type countCheck struct {
	kind  typeSet
	limit int
	min   bool
	noun  string
}

func (cc countCheck) run(w *walker, v *value) bool {
	if v.kind != cc.kind {
		return true
	}
	n := w.count(v)
	switch {
	case cc.min && n < cc.limit:
		w.report("expected at least " + strconv.Itoa(cc.limit) + " " + cc.noun + ", got " + strconv.Itoa(n))
	case !cc.min && n > cc.limit:
		w.report("expected at most " + strconv.Itoa(cc.limit) + " " + cc.noun + ", got " + strconv.Itoa(n))
	}
	return true
}

func count(p *int, kind typeSet, min bool, noun string) check {
	if p == nil {
		return nil
	}
	return countCheck{kind, *p, min, noun}
}

func compileMinItems(_ *compiler, s *Schema, _ *node) check {
	return count(s.MinItems, tArray, true, "items")
}

func compileMaxItems(_ *compiler, s *Schema, _ *node) check {
	return count(s.MaxItems, tArray, false, "items")
}

func compileMinProperties(_ *compiler, s *Schema, _ *node) check {
	return count(s.MinProperties, tObject, true, "members")
}

func compileMaxProperties(_ *compiler, s *Schema, _ *node) check {
	return count(s.MaxProperties, tObject, false, "members")
}

type uniqueCheck struct{}

func compileUniqueItems(_ *compiler, s *Schema, _ *node) check {
	if !s.UniqueItems {
		return nil
	}
	return uniqueCheck{}
}

func (uniqueCheck) run(w *walker, v *value) bool {
	if v.kind != tArray || w.count(v) < 2 {
		return true
	}
	seen := make(map[string]int, len(v.elems))
	for i, e := range v.elems {
		w.pos = e.start
		form, ok := canonical(nil, w.skip())
		if !ok {
			continue
		}
		if j, dup := seen[string(form)]; dup {
			w.report("items " + strconv.Itoa(j) + " and " + strconv.Itoa(i) + " are equal")
			return true
		}
		seen[string(form)] = i
	}
	return true
}

// Objects

// membersCheck is properties, patternProperties, additionalProperties and
// required: one look-up per member.
type membersCheck struct {
	props    map[string]member
	patterns []patternNode
	addl     *node    // nil: any
	required []string // in order, without duplicates
}

type member struct {
	node *node // nil: not in properties (only required)
	req  int   // index in required, or -1
}

type patternNode struct {
	re   *regexp.Regexp
	node *node
}

func compileMembers(c *compiler, s *Schema, _ *node) check {
	if s.Properties == nil && s.PatternProperties == nil && s.AdditionalProperties == nil && len(s.Required) == 0 {
		return nil
	}
	mc := membersCheck{props: make(map[string]member, len(s.Properties))}
	for name, ps := range s.Properties {
		mc.props[name] = member{node: c.compile(ps), req: -1}
	}
	for _, r := range s.Required {
		m, ok := mc.props[r]
		if ok && m.req >= 0 {
			continue // listed twice
		}
		if !ok {
			m = member{req: -1}
		}
		m.req = len(mc.required)
		mc.required = append(mc.required, r)
		mc.props[r] = m
	}
	pats := slices.Sorted(func(yield func(string) bool) {
		for p := range s.PatternProperties {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range pats {
		re, err := regexp.Compile(p)
		if err != nil {
			c.errorf("patternProperties %q: %v", p, err)
			continue
		}
		mc.patterns = append(mc.patterns, patternNode{re, c.compile(s.PatternProperties[p])})
	}
	if s.AdditionalProperties != nil {
		mc.addl = c.compile(s.AdditionalProperties)
	}
	return mc
}

func (mc membersCheck) run(w *walker, v *value) bool {
	if v.kind != tObject {
		return true
	}
	seen := newSeenSet(len(mc.required))
	for it := w.elements(v); w.next(&it); {
		if req := mc.checkMember(w, it.e); req >= 0 {
			seen.mark(req)
		}
	}
	for i, r := range mc.required {
		if !seen.has(i) {
			w.reportAt(r, "missing required member")
		}
	}
	return true
}

// checkMember checks member e against its property's schema, those of the
// patterns its name matches, or additionalProperties. It returns the index
// of its name among the required members (-1: not required).
func (mc membersCheck) checkMember(w *walker, e elem) int {
	name := memberName(e.name)
	m, listed := mc.props[name]
	known := listed && m.node != nil
	if known {
		w.checkElem(e, 0, m.node)
	}
	for _, p := range mc.patterns {
		if p.re.MatchString(name) {
			known = true
			w.checkElem(e, 0, p.node)
		}
	}
	switch {
	case known || mc.addl == nil:
	case mc.addl.never:
		w.reportIn(e, 0, "unknown member")
	default:
		w.checkElem(e, 0, mc.addl)
	}
	if !listed {
		return -1
	}
	return m.req
}

// seenSet records which of the required members were seen: in one word
// for up to 64.
type seenSet struct {
	bits uint64
	more []bool
}

func newSeenSet(n int) seenSet {
	if n > 64 {
		return seenSet{more: make([]bool, n)}
	}
	return seenSet{}
}

func (s *seenSet) mark(i int) {
	if i < 64 {
		s.bits |= 1 << i
	} else {
		s.more[i] = true
	}
}

func (s *seenSet) has(i int) bool {
	if i < 64 {
		return s.bits&(1<<i) != 0
	}
	return s.more[i]
}

// has reports whether object v has a member named name.
func has(v *value, name string) bool {
	for _, e := range v.elems {
		if memberName(e.name) == name {
			return true
		}
	}
	return false
}

type dependentRequiredCheck map[string][]string

func compileDependentRequired(_ *compiler, s *Schema, _ *node) check {
	if len(s.DependentRequired) == 0 {
		return nil
	}
	return dependentRequiredCheck(s.DependentRequired)
}

func (dc dependentRequiredCheck) run(w *walker, v *value) bool {
	if v.kind != tObject {
		return true
	}
	w.count(v) // index the members
	for _, e := range v.elems {
		name := memberName(e.name)
		for _, dep := range dc[name] {
			if !has(v, dep) {
				w.reportAt(dep, "missing member required by "+strconv.Quote(name))
			}
		}
	}
	return true
}

type propertyNamesCheck struct{ sub *node }

func compilePropertyNames(c *compiler, s *Schema, _ *node) check {
	if s.PropertyNames == nil {
		return nil
	}
	return propertyNamesCheck{c.compile(s.PropertyNames)}
}

func (pc propertyNamesCheck) run(w *walker, v *value) bool {
	if v.kind != tObject {
		return true
	}
	w.count(v) // index the members
	for _, e := range v.elems {
		if w.try(pc.sub, e.nameStart) > 0 {
			w.reportIn(e, 0, "member name does not match propertyNames")
		}
	}
	return true
}

type dependentSchemasCheck map[string]*node

func compileDependentSchemas(c *compiler, s *Schema, _ *node) check {
	if len(s.DependentSchemas) == 0 {
		return nil
	}
	dc := dependentSchemasCheck{}
	for name, sub := range s.DependentSchemas {
		dc[name] = c.compile(sub)
	}
	return dc
}

func (dc dependentSchemasCheck) run(w *walker, v *value) bool {
	if v.kind != tObject {
		return true
	}
	w.count(v) // index the members
	for _, e := range v.elems {
		if sub, ok := dc[memberName(e.name)]; ok {
			w.checkAt(sub, v.start)
		}
	}
	return true
}

// Applicators

type allOfCheck []*node

func compileAllOf(c *compiler, s *Schema, _ *node) check {
	if s.AllOf == nil {
		return nil
	}
	var ac allOfCheck
	for _, sub := range s.AllOf {
		ac = append(ac, c.compile(sub))
	}
	return ac
}

func (ac allOfCheck) run(w *walker, v *value) bool {
	for _, sub := range ac {
		w.checkAt(sub, v.start)
	}
	return true
}

// branchCheck is anyOf, or oneOf when one.
type branchCheck struct {
	branches []*node
	one      bool
}

func (c *compiler) branches(subs []*Schema, one bool) check {
	if subs == nil {
		return nil
	}
	bc := branchCheck{one: one}
	for _, sub := range subs {
		bc.branches = append(bc.branches, c.compile(sub))
	}
	return bc
}

func (bc branchCheck) run(w *walker, v *value) bool {
	matched := 0
	var typed []*node // branches whose type admits the value
	var union typeSet
	for _, b := range bc.branches {
		if w.try(b, v.start) == 0 {
			matched++
			if !bc.one {
				return true
			}
		}
		bt := b.typesOf()
		union |= bt
		if bt == 0 || bt&v.kind != 0 || (bt&tInteger != 0 && v.kind == tNumber) {
			typed = append(typed, b)
		}
	}
	switch {
	case matched == 0 && len(typed) == 1:
		w.checkAt(typed[0], v.start) // report that branch's problems
	case matched == 0 && len(typed) == 0:
		if !w.muted() {
			w.report("expected " + union.String() + ", got " + v.kind.String())
		}
	case matched == 0:
		w.report("does not match any of the allowed schemas")
	case matched > 1:
		w.report("matches more than one of the exclusive schemas")
	}
	return true
}

type notCheck struct{ sub *node }

type neverCheck struct{}

func compileNot(c *compiler, s *Schema, n *node) check {
	if s.Not == nil {
		return nil
	}
	if IsTrue(s.Not) { // the false schema is {"not": {}}
		n.never = true
		return neverCheck{}
	}
	return notCheck{c.compile(s.Not)}
}

func (nc notCheck) run(w *walker, v *value) bool {
	if w.try(nc.sub, v.start) == 0 {
		w.report("matches a schema it must not match")
	}
	return true
}

func (neverCheck) run(w *walker, v *value) bool {
	w.report("not allowed")
	return false
}

type ifCheck struct{ cond, then, els *node }

func compileIf(c *compiler, s *Schema, _ *node) check {
	if s.If == nil || (s.Then == nil && s.Else == nil) {
		return nil
	}
	ic := ifCheck{cond: c.compile(s.If)}
	if s.Then != nil {
		ic.then = c.compile(s.Then)
	}
	if s.Else != nil {
		ic.els = c.compile(s.Else)
	}
	return ic
}

func (ic ifCheck) run(w *walker, v *value) bool {
	branch := ic.els
	if w.try(ic.cond, v.start) == 0 {
		branch = ic.then
	}
	if branch != nil {
		w.checkAt(branch, v.start)
	}
	return true
}
