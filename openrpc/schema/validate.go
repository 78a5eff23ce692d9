package schema

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Problem is one way in which a JSON value does not match its schema.
type Problem struct {
	Path    string `json:"path"`    // a JSON pointer (RFC 6901) into the value; "" is the value itself
	Problem string `json:"problem"` // what is wrong, e.g. "expected number, got string"
}

// MaxProblems bounds the problems one validation reports.
const MaxProblems = 32

// A Validator checks JSON values against a compiled schema. It is safe for
// concurrent use.
type Validator struct{ root *node }

// Compile compiles schema s (JSON Schema draft 2020-12) for validation.
// References ("$ref") are resolved in defs, whose keys are the names after
// prefix (for instance RefComponents); with nil defs, s's own "$defs" are
// used with RefDefs, and "#" is s itself.
//
// The keywords of the table in keywords.go (every assertion and applicator
// of draft 2020-12 except the unevaluated ones) are checked by a walker over
// the raw JSON that neither decodes nor allocates in the common cases;
// numbers are compared exactly, as decimals. "format" checks date-time; other
// formats, and the other annotations, are ignored. A schema that uses
// anything else (unevaluatedProperties, unevaluatedItems, $dynamicRef, $id,
// $anchor, references other than to defs, other drafts' keywords, unknown
// keywords) is validated whole by github.com/google/jsonschema-go instead,
// with the same Problem shape (its path is then ""; numbers are compared as
// int64 or float64). Compile fails only when neither can compile s.
func Compile(s *Schema, defs map[string]*Schema, prefix string) (*Validator, error) {
	own := defs == nil && s != nil
	if own {
		defs, prefix = s.Defs, RefDefs
	}
	c := newCompiler(defs, prefix)
	if own {
		c.root = s
	}
	root := c.compile(s)
	if err := c.err(); err != nil {
		return nil, err
	}
	if c.unsupported != nil {
		c = c.fallbackCompiler()
		root = c.compile(s)
		if err := c.err(); err != nil {
			return nil, err
		}
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

// A node is a compiled schema: the checks of its keywords, in the order of
// the keyword table. A node without checks accepts every value.
type node struct {
	checks []check
	types  typeSet // the types "type" admits (0: any), for messages
	ref    *node   // the target of "$ref", for messages
	never  bool    // the false schema
}

// typesOf returns the JSON types a node admits (0: any or unknown).
func (n *node) typesOf() typeSet {
	for n.types == 0 && n.ref != nil && n.ref != n {
		n = n.ref
	}
	return n.types
}

type compiler struct {
	defs        map[string]*Schema
	prefix      string
	root        *Schema          // the schema that "#" names, if any
	refs        map[string]*node // compiled definitions, by $ref
	errs        []error
	unsupported []string // what only the fallback validates
	fallback    bool     // compile every schema for jsonschema-go
}

func newCompiler(defs map[string]*Schema, prefix string) *compiler {
	return &compiler{defs: defs, prefix: prefix, refs: map[string]*node{}}
}

func (c *compiler) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf("openrpc: "+format, args...))
}

func (c *compiler) unsupportedf(format string, args ...any) {
	c.unsupported = append(c.unsupported, fmt.Sprintf(format, args...))
}

func (c *compiler) err() error { return errors.Join(c.errs...) }

// fallbackCompiler returns a compiler with c's definitions that compiles
// schemas for jsonschema-go.
func (c *compiler) fallbackCompiler() *compiler {
	f := newCompiler(c.defs, c.prefix)
	f.root, f.fallback = c.root, true
	return f
}

// compile compiles s into a new node.
func (c *compiler) compile(s *Schema) *node {
	n := &node{}
	if c.fallback {
		c.compileFallback(s, n)
		return n
	}
	c.fill(n, s)
	return n
}

// fill compiles the keywords of s into n.
func (c *compiler) fill(n *node, s *Schema) {
	if s == nil {
		return
	}
	for _, name := range keywordsOf(s) {
		if _, ok := keywordIndex[name]; !ok {
			c.unsupportedf("keyword %s", name)
		}
	}
	for _, k := range keywords {
		if k.compile == nil {
			continue
		}
		if ch := k.compile(c, s, n); ch != nil {
			n.checks = append(n.checks, ch)
		}
	}
}

// refNode returns the node of reference ref, compiling its target once
// (recursive references share the node).
func (c *compiler) refNode(ref string) *node {
	if n, ok := c.refs[ref]; ok {
		return n
	}
	var def *Schema
	if ref == "#" {
		def = c.root
	} else if name, ok := strings.CutPrefix(ref, c.prefix); ok && c.defs != nil {
		def = c.defs[unescapePointer(name)]
	}
	if def == nil {
		c.unsupportedf("$ref %q", ref)
		return nil
	}
	n := &node{}
	c.refs[ref] = n
	c.fill(n, def)
	return n
}

// IsFalseOnly reports whether s is exactly {"not": {}}, the false schema.
func IsFalseOnly(s *Schema) bool {
	c := *s
	c.Not = nil
	return IsTrue(&c)
}

func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// seg is one step of a JSON pointer.
type seg struct {
	name  []byte // raw (still quoted-escaped) member name, or nil for an index
	index int
}

// elem is a member of an object or an item of an array.
type elem struct {
	name      []byte // the raw member name (nil for an item)
	nameStart int
	start     int // where the value starts
}

// value is the value a node's checks look at: its kind, its bytes and, for
// objects and arrays, its elements. Numbers and strings are decoded once,
// on first use.
type value struct {
	kind       typeSet
	start, end int
	elems      []elem // once indexed
	indexed    bool
	level      int // the depth it was read at (its slot in walker.elems)
	decoded    bool
	num        float64 // numbers: the nearest float64
	str        string  // strings: unescaped (valid while the walk lasts)
	bad        bool    // a string with an invalid escape
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
	depth int
	elems [][]elem // the elements read, by depth, reused
	vals  []*value // the values read, by depth, reused (a check's *value does not escape to the heap per call)
	buf   []byte   // scratch for numbers and canonical forms

	elemStart, elemEnd int // the element checkElem last checked, and its end
}

func (w *walker) init(data []byte) {
	w.data, w.pos = data, 0
	w.path = w.stack[:0]
	w.probs, w.quiet, w.fails, w.err, w.depth = nil, 0, 0, false, 0
	w.elemStart, w.elemEnd = -1, -1
}

// raw returns the bytes of v (finding the end of a container not read yet).
func (w *walker) raw(v *value) []byte {
	if v.end == 0 {
		pos := w.pos
		w.pos = v.start
		w.skip()
		v.end, w.pos = w.pos, pos
	}
	return w.data[v.start:v.end]
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

// reportAt reports a problem of member name of the current object.
func (w *walker) reportAt(name string, problem string) {
	quoted, _ := jsontext.AppendQuote(nil, name)
	w.path = append(w.path, seg{name: quoted})
	w.report(problem)
	w.path = w.path[:len(w.path)-1]
}

// reportIn reports a problem of element e of the current value.
func (w *walker) reportIn(e elem, index int, problem string) {
	w.path = append(w.path, seg{name: e.name, index: index})
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

// memberName returns the unescaped name of raw member name; it is valid
// while the walk lasts.
func memberName(raw []byte) string {
	if !hasEscape(raw) {
		inner := raw[1 : len(raw)-1]
		return unsafe.String(unsafe.SliceData(inner), len(inner))
	}
	return unquoteName(raw)
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

// read describes the value at the current position in v. A scalar is read
// whole; an object or an array is only started: its elements are read as
// checks go through them (elements, next), once, and its end is found then.
func (w *walker) read(v *value) bool {
	*v = value{kind: w.kindAt(), start: w.pos, level: w.depth}
	switch v.kind {
	case 0:
		return false
	case tObject, tArray:
		return true
	}
	w.skip()
	v.end = w.pos
	return !w.err
}

// elemIter goes through the elements of an object or an array: from the
// bytes the first time (recording them), from the record afterwards.
type elemIter struct {
	v    *value
	i    int
	e    elem
	list []elem // recorded so far, when reading
}

// elements starts going through the elements of container v.
func (w *walker) elements(v *value) elemIter {
	it := elemIter{v: v}
	if !v.indexed {
		for len(w.elems) <= v.level {
			w.elems = append(w.elems, nil)
		}
		it.list = w.elems[v.level][:0]
	}
	return it
}

// next moves it to the next element and reports whether there is one. When
// reading, the previous element's value ends where checkElem left it, or is
// skipped.
func (w *walker) next(it *elemIter) bool {
	v := it.v
	if v.indexed {
		if it.i >= len(v.elems) {
			return false
		}
		it.e = v.elems[it.i]
		it.i++
		return true
	}
	if w.err {
		return false
	}
	closer := byte(']')
	if v.kind == tObject {
		closer = '}'
	}
	if ended, ok := w.step(it, closer); ended {
		return ok
	}
	var e elem
	if closer == '}' {
		w.ws()
		e.nameStart = w.pos
		e.name = w.skip()
		if w.err || len(e.name) < 2 || e.name[0] != '"' || !w.expect(':') {
			return w.invalid()
		}
	}
	w.ws()
	e.start = w.pos
	if w.pos >= len(w.data) {
		return w.invalid()
	}
	it.list = append(it.list, e)
	it.e = e
	it.i++
	return true
}

// step moves past the opening bracket or the current element and its
// comma. It reports whether the container ended there, and then what next
// returns.
func (w *walker) step(it *elemIter, closer byte) (ended, ok bool) {
	if it.i == 0 {
		w.pos = it.v.start + 1
		if w.expect(closer) {
			return true, w.indexed(it)
		}
		return false, false
	}
	if w.elemStart == it.e.start && w.elemEnd > it.e.start {
		w.pos = w.elemEnd // checked: its end is known
	} else if w.pos = it.e.start; w.skip() == nil || w.err {
		return true, w.invalid()
	}
	if !w.expect(',') {
		if w.expect(closer) {
			return true, w.indexed(it)
		}
		return true, w.invalid()
	}
	return false, false
}

// indexed records the elements read, ending the first pass.
func (w *walker) indexed(it *elemIter) bool {
	v := it.v
	w.elems[v.level] = it.list
	v.elems, v.end, v.indexed = it.list, w.pos, true
	return false
}

func (w *walker) invalid() bool {
	if !w.err {
		w.err = true
		w.report("invalid JSON")
	}
	return false
}

// count returns the number of elements of container v.
func (w *walker) count(v *value) int {
	it := w.elements(v)
	for w.next(&it) {
	}
	return len(v.elems)
}

// check validates the value at the current position against n and moves past it.
func (w *walker) check(n *node) {
	if w.err {
		return
	}
	if n == nil || len(n.checks) == 0 {
		if w.skip(); w.err {
			w.report("invalid JSON")
		}
		return
	}
	for len(w.vals) <= w.depth {
		w.vals = append(w.vals, new(value))
	}
	v := w.vals[w.depth]
	if !w.read(v) {
		w.invalid()
		return
	}
	w.depth++
	for _, c := range n.checks {
		if !c.run(w, v) || w.err {
			break
		}
	}
	w.depth--
	if w.err {
		return
	}
	if v.end == 0 { // a container no check went through
		w.pos = v.start
		if w.skip(); w.err {
			w.report("invalid JSON")
			return
		}
		v.end = w.pos
	}
	w.pos = v.end
}

// checkElem validates element e (index i) of the current value against n,
// and notes where e ends (see next).
func (w *walker) checkElem(e elem, i int, n *node) {
	w.pos = e.start
	w.path = append(w.path, seg{name: e.name, index: i})
	w.check(n)
	w.path = w.path[:len(w.path)-1]
	w.elemStart, w.elemEnd = e.start, w.pos
}

// checkAt validates the value at start against n, reporting its problems.
func (w *walker) checkAt(n *node, start int) {
	w.pos = start
	w.check(n)
}

// try validates the value at start against n quietly and returns the number
// of problems found. They are not counted as failures of the caller's value
// (a failed branch of anyOf inside a passing one is no failure).
func (w *walker) try(n *node, start int) int {
	w.quiet++
	before := w.fails
	w.checkAt(n, start)
	w.quiet--
	found := w.fails - before
	w.fails = before
	return found
}
