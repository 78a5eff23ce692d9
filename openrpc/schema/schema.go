package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a JSON Schema, as modelled by github.com/google/jsonschema-go.
// An empty Schema is the true schema (it accepts every value) and marshals as
// true.
type Schema = jsonschema.Schema

// SchemaProvider is implemented by types that describe their own JSON Schema,
// typically types with a custom JSON encoding. The returned schema is used as
// is (it is cloned first).
type SchemaProvider interface {
	JSONSchema() *Schema
}

// Enumerator is implemented by types whose values are one of a fixed set:
// the schema of the type gains "enum" with these values (as they encode in
// JSON).
type Enumerator interface {
	JSONSchemaEnum() []any
}

// RefComponents and RefDefs are the two usual prefixes of a shared
// definition's "$ref": the components of an OpenRPC document, and the
// "$defs" of a standalone schema.
const (
	RefComponents = "#/components/schemas/"
	RefDefs       = "#/$defs/"
)

// A Generator builds JSON Schemas from Go types, following the rules of the
// JSON codec that jsonrpc uses (encoding/json/v2 semantics):
//
//   - bool → boolean; integers → integer (with minimum and maximum for the
//     sized ones, minimum 0 for unsigned); floats → number; string → string;
//   - []byte → a base64 string; other slices and arrays → array with items
//     (arrays also fix minItems and maxItems);
//   - maps with string (or text-marshalling) keys → object with
//     additionalProperties;
//   - structs → object with properties (json tags honoured, embedded structs
//     flattened), additionalProperties false, and required listing every
//     field that is neither a pointer nor tagged omitempty or omitzero (the
//     rule of jsonrpc.Register); named structs become shared definitions
//     referenced by "$ref", which makes recursive types possible;
//   - pointers → the pointee, also accepting null;
//   - time.Time → string with format date-time; json.RawMessage,
//     jsontext.Value and interfaces (any) → the true schema;
//   - a type implementing SchemaProvider gives its own schema; one
//     implementing Enumerator gains an enum; other types with a custom JSON
//     encoding give the true schema, and text marshalers a string.
//
// A struct field's "jsonschema" tag adds to its schema. It is either a plain
// description (as in jsonschema-go), or comma-separated key=value settings
// among description, title, enum (values separated by |), format, pattern,
// minimum, maximum, minLength, maxLength, minItems, maxItems, and the bare
// word deprecated. A description may contain commas.
//
// A Generator is not safe for concurrent use.
type Generator struct {
	// RefPrefix starts each "$ref" to a shared definition: RefComponents
	// (the default) or RefDefs.
	RefPrefix string

	defs  map[string]*Schema
	names map[reflect.Type]string
	taken map[string]reflect.Type
	errs  []error
}

// NewGenerator returns a Generator whose references start with refPrefix.
func NewGenerator(refPrefix string) *Generator {
	return &Generator{RefPrefix: refPrefix}
}

// Defs returns the shared definitions generated so far, by name.
func (g *Generator) Defs() map[string]*Schema { return g.defs }

// Err returns the problems met so far (unsupported Go types), joined, or nil.
// A schema with an unsupported part has the true schema in its place.
func (g *Generator) Err() error { return errors.Join(g.errs...) }

// SchemaOf returns the schema of Go type t. References to shared definitions
// are collected in Defs.
func (g *Generator) SchemaOf(t reflect.Type) *Schema {
	return g.schema(t, nil)
}

// FieldSchema returns the schema of struct field f: its type's schema with the
// settings of its jsonschema tag and json options (such as ",string").
func (g *Generator) FieldSchema(f reflect.StructField) *Schema {
	return g.schema(f.Type, &f)
}

// For returns a standalone schema of T: the definitions it uses are in
// its "$defs". It is what an MCP tool's inputSchema needs.
func For[T any]() (*Schema, error) { return OfType(reflect.TypeFor[T]()) }

// OfType is For for a reflect.Type.
func OfType(t reflect.Type) (*Schema, error) {
	g := NewGenerator(RefDefs)
	// Inline the top-level struct (an inputSchema must be an object schema).
	var s *Schema
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() == reflect.Struct && !isSpecial(st) {
		s = g.structSchema(st)
	} else {
		s = g.SchemaOf(t)
	}
	if len(g.defs) > 0 {
		s.Defs = g.defs
	}
	return s, g.Err()
}

var (
	timeType         = reflect.TypeFor[time.Time]()
	rawMessageType   = reflect.TypeFor[json.RawMessage]()
	jsontextValue    = reflect.TypeFor[jsontext.Value]()
	providerType     = reflect.TypeFor[SchemaProvider]()
	enumeratorType   = reflect.TypeFor[Enumerator]()
	textMarshaler    = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler  = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshaler    = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler  = reflect.TypeFor[json.Unmarshaler]()
	jsonMarshalerTo  = reflect.TypeFor[jsonv2.MarshalerTo]()
	jsonUnmarshalFro = reflect.TypeFor[jsonv2.UnmarshalerFrom]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// isSpecial reports whether t has a schema of its own (not derived from its kind).
func isSpecial(t reflect.Type) bool {
	if t == timeType || t == rawMessageType || t == jsontextValue {
		return true
	}
	for _, i := range []reflect.Type{providerType, jsonMarshaler, jsonUnmarshaler, jsonMarshalerTo, jsonUnmarshalFro, textMarshaler, textUnmarshaler} {
		if implements(t, i) {
			return true
		}
	}
	return false
}

func (g *Generator) fail(format string, args ...any) *Schema {
	g.errs = append(g.errs, fmt.Errorf("openrpc: "+format, args...))
	return &Schema{}
}

// schema returns the schema of t; f, when not nil, is the struct field whose
// tags refine it.
func (g *Generator) schema(t reflect.Type, f *reflect.StructField) *Schema {
	var s *Schema
	if t.Kind() == reflect.Pointer && !implements(t, providerType) {
		s = nullable(g.schema(t.Elem(), nil))
	} else {
		s = g.typeSchema(t)
	}
	if f != nil {
		g.applyField(s, t, f)
	}
	return s
}

// nullable makes s accept null as well.
func nullable(s *Schema) *Schema {
	switch {
	case IsTrue(s):
		return s
	case s.Ref != "":
		return &Schema{AnyOf: []*Schema{{Type: "null"}, s}}
	case s.Type != "":
		s.Types, s.Type = []string{"null", s.Type}, ""
	case len(s.Types) > 0:
		if !contains(s.Types, "null") {
			s.Types = append([]string{"null"}, s.Types...)
		}
	default:
		return &Schema{AnyOf: []*Schema{{Type: "null"}, s}}
	}
	if s.Enum != nil {
		s.Enum = append(s.Enum, nil)
	}
	return s
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// IsTrue reports whether s is the true schema.
func IsTrue(s *Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "true"
}

func (g *Generator) typeSchema(t reflect.Type) *Schema {
	if implements(t, providerType) {
		v := reflect.New(t).Elem()
		if t.Kind() == reflect.Pointer {
			v = reflect.New(t.Elem())
		}
		p, ok := v.Interface().(SchemaProvider)
		if !ok {
			p = v.Addr().Interface().(SchemaProvider)
		}
		if s := p.JSONSchema(); s != nil {
			return s.CloneSchemas()
		}
		return &Schema{}
	}
	s := g.baseSchema(t)
	if implements(t, enumeratorType) {
		v := reflect.New(t)
		e, ok := v.Elem().Interface().(Enumerator)
		if !ok {
			e = v.Interface().(Enumerator)
		}
		s.Enum = e.JSONSchemaEnum()
	}
	return s
}

func (g *Generator) baseSchema(t reflect.Type) *Schema {
	if s := encodedSchema(t); s != nil {
		return s
	}
	if s := scalarSchema(t.Kind()); s != nil {
		return s
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		if t.PkgPath() == "time" && t.Name() == "Duration" {
			return g.fail("time.Duration has no default JSON representation; give the field a JSONSchema method or another type")
		}
		return &Schema{Type: "integer"}
	case reflect.Slice, reflect.Array:
		return g.listSchema(t)
	case reflect.Map:
		return g.mapSchema(t)
	case reflect.Struct:
		if t.Name() == "" {
			return g.structSchema(t)
		}
		return g.ref(t)
	}
	return g.fail("type %v has no JSON representation", t)
}

// encodedSchema is the schema of a type whose encoding is its own (a
// time, raw JSON, a JSON or text marshaler), nil for others.
func encodedSchema(t reflect.Type) *Schema {
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case t == rawMessageType, t == jsontextValue:
		return &Schema{}
	case implements(t, jsonMarshaler), implements(t, jsonUnmarshaler), implements(t, jsonMarshalerTo), implements(t, jsonUnmarshalFro):
		return &Schema{} // a custom encoding we cannot see into
	case implements(t, textMarshaler), implements(t, textUnmarshaler):
		return &Schema{Type: "string"}
	}
	return nil
}

// intRanges are the bounds of the sized integer kinds.
var intRanges = map[reflect.Kind][2]float64{
	reflect.Int8:   {math.MinInt8, math.MaxInt8},
	reflect.Int16:  {math.MinInt16, math.MaxInt16},
	reflect.Int32:  {math.MinInt32, math.MaxInt32},
	reflect.Uint8:  {0, math.MaxUint8},
	reflect.Uint16: {0, math.MaxUint16},
	reflect.Uint32: {0, math.MaxUint32},
}

// scalarSchema is the schema of a kind that needs nothing of its type (nil
// for the others).
func scalarSchema(k reflect.Kind) *Schema {
	if r, ok := intRanges[k]; ok {
		return intRange(r[0], r[1])
	}
	switch k {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Minimum: jsonschema.Ptr(0.0)}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Interface:
		return &Schema{}
	}
	return nil
}

// listSchema is the schema of a slice or array type: an array, or a base64
// string for bytes.
func (g *Generator) listSchema(t reflect.Type) *Schema {
	if t.Elem().Kind() == reflect.Uint8 && !implements(t.Elem(), jsonMarshaler) && !implements(t.Elem(), textMarshaler) {
		return &Schema{Type: "string", ContentEncoding: "base64"}
	}
	s := &Schema{Type: "array", Items: g.schema(t.Elem(), nil)}
	if t.Kind() == reflect.Array {
		s.MinItems, s.MaxItems = jsonschema.Ptr(t.Len()), jsonschema.Ptr(t.Len())
	}
	return s
}

// mapSchema is the schema of a map type whose keys can be JSON names.
func (g *Generator) mapSchema(t reflect.Type) *Schema {
	k := t.Key()
	switch {
	case k.Kind() == reflect.String, implements(k, textMarshaler):
	case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		// Integer keys encode as decimal strings.
	default:
		return g.fail("map key type %v cannot be a JSON object name", k)
	}
	return &Schema{Type: "object", AdditionalProperties: g.schema(t.Elem(), nil)}
}

func intRange(lo, hi float64) *Schema {
	return &Schema{Type: "integer", Minimum: jsonschema.Ptr(lo), Maximum: jsonschema.Ptr(hi)}
}

// ref returns a reference to the shared definition of named struct t,
// generating it on first use.
func (g *Generator) ref(t reflect.Type) *Schema {
	if g.names == nil {
		g.names = make(map[reflect.Type]string)
		g.taken = make(map[string]reflect.Type)
		g.defs = make(map[string]*Schema)
	}
	name, ok := g.names[t]
	if !ok {
		name = g.defName(t)
		g.names[t] = name
		g.taken[name] = t
		g.defs[name] = &Schema{} // placeholder while recursing
		g.defs[name] = g.structSchema(t)
	}
	return &Schema{Ref: g.RefPrefix + name}
}

var notNameChar = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func (g *Generator) defName(t reflect.Type) string {
	base := strings.Trim(notNameChar.ReplaceAllString(t.Name(), "_"), "_")
	if base == "" {
		base = "Type"
	}
	if _, clash := g.taken[base]; !clash {
		return base
	}
	pkg := t.PkgPath()
	if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := notNameChar.ReplaceAllString(pkg, "_") + "_" + base
	for i := 2; ; i++ {
		if _, clash := g.taken[name]; !clash {
			return name
		}
		name = notNameChar.ReplaceAllString(pkg, "_") + "_" + base + strconv.Itoa(i)
	}
}

func (g *Generator) structSchema(t reflect.Type) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, AdditionalProperties: falseSchema()}
	for _, f := range StructFields(t) {
		s.Properties[f.Name] = g.FieldSchema(f.Field)
		s.PropertyOrder = append(s.PropertyOrder, f.Name)
		if f.Required {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

func falseSchema() *Schema { return &Schema{Not: &Schema{}} }

// Field is a JSON member of a struct type.
type Field struct {
	Name     string // the JSON name
	Required bool   // neither a pointer nor tagged omitempty or omitzero
	Field    reflect.StructField
	Index    []int // the index path, for reflect.Value.FieldByIndex
}

// StructFields lists the JSON members of struct type t in declaration order,
// as encoding/json/v2 sees them: json tags honoured, "-" skipped, unexported
// fields skipped, embedded structs without a name tag flattened, and a name
// that occurs more than once resolved by Go's rules (the shallowest wins;
// at equal depth a tagged one wins; otherwise none).
func StructFields(t reflect.Type) []Field {
	var w fieldWalker
	w.walk(t, nil, 0, map[reflect.Type]bool{})
	var out []Field
	for i, c := range w.all {
		if w.wins(i, c) {
			out = append(out, c.Field)
		}
	}
	return out
}

// fieldWalker collects the candidate members of a struct type, its
// embedded structs' included (see StructFields).
type fieldWalker struct {
	all []fieldCandidate
}

type fieldCandidate struct {
	Field
	depth  int
	tagged bool
}

func (w *fieldWalker) walk(t reflect.Type, index []int, depth int, visiting map[reflect.Type]bool) {
	if visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		path := append(append([]int(nil), index...), i)
		if f.Anonymous && name == "" {
			if ft := derefType(f.Type); ft.Kind() == reflect.Struct && !isSpecial(ft) {
				w.walk(ft, path, depth+1, visiting)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		tagged := name != ""
		if name == "" {
			name = f.Name
		}
		optional := f.Type.Kind() == reflect.Pointer || hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		w.all = append(w.all, fieldCandidate{Field{Name: name, Required: !optional, Field: f, Index: path}, depth, tagged})
	}
}

// wins reports whether candidate i, c, is the member of its name: no
// other is shallower, or as deep and tagged when c is not, or as deep and
// as tagged (then none is).
func (w *fieldWalker) wins(i int, c fieldCandidate) bool {
	for j, d := range w.all {
		if i == j || d.Name != c.Name {
			continue
		}
		if d.depth < c.depth || (d.depth == c.depth && d.tagged && !c.tagged) ||
			(d.depth == c.depth && d.tagged == c.tagged) {
			return false
		}
	}
	return true
}

// derefType is t, or the type it points to.
func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

func hasOpt(opts, opt string) bool {
	return strings.Contains(","+opts+",", ","+opt+",")
}

var tagKeys = []string{"description", "title", "enum", "format", "pattern", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "deprecated"}

// parseTag splits a jsonschema tag into settings. A tag that does not start
// with a known key is a plain description.
func parseTag(tag string) map[string]string {
	starts := func(s string) (string, bool) {
		for _, k := range tagKeys {
			if s == k && k == "deprecated" {
				return k, true
			}
			if strings.HasPrefix(s, k+"=") || (k == "deprecated" && strings.HasPrefix(s, k+",")) {
				return k, true
			}
		}
		return "", false
	}
	if _, ok := starts(tag); !ok {
		return map[string]string{"description": tag}
	}
	out := map[string]string{}
	for tag != "" {
		key, _ := starts(tag)
		rest := tag[len(key):]
		rest = strings.TrimPrefix(rest, "=")
		// The value runs to the next ",key=" (or ",deprecated").
		end := len(rest)
		for i := 0; i < len(rest); i++ {
			if rest[i] == ',' {
				if _, ok := starts(rest[i+1:]); ok {
					end = i
					break
				}
			}
		}
		out[key] = rest[:end]
		tag = strings.TrimPrefix(rest[end:], ",")
	}
	return out
}

// applyField refines s with field f's tags.
func (g *Generator) applyField(s *Schema, t reflect.Type, f *reflect.StructField) {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if hasOpt(opts, "string") {
		switch k := derefKind(t); {
		case k >= reflect.Int && k <= reflect.Float64, k == reflect.Bool:
			*s = Schema{Type: "string", Description: s.Description}
		}
	}
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return
	}
	for k, v := range parseTag(tag) {
		g.applyKeyword(s, t, f, k, v)
	}
}

// applyKeyword applies the setting k=v of field f's jsonschema tag to s,
// the schema of the field's type t.
func (g *Generator) applyKeyword(s *Schema, t reflect.Type, f *reflect.StructField, k, v string) {
	switch k {
	case "description":
		s.Description = v
	case "title":
		s.Title = v
	case "format":
		s.Format = v
	case "pattern":
		if _, err := regexp.Compile(v); err != nil {
			g.fail("field %s: bad pattern: %v", f.Name, err)
			return
		}
		s.Pattern = v
	case "deprecated":
		s.Deprecated = true
	case "minimum", "maximum":
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			g.fail("field %s: bad %s %q", f.Name, k, v)
			return
		}
		if k == "minimum" {
			s.Minimum = &x
		} else {
			s.Maximum = &x
		}
	case "minLength", "maxLength", "minItems", "maxItems":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			g.fail("field %s: bad %s %q", f.Name, k, v)
			return
		}
		*lengthField(s, k) = &n
	case "enum":
		s.Enum = g.enumOf(t, f, v)
	}
}

// lengthField is the member of s that the keyword k (minLength,
// maxLength, minItems or maxItems) sets.
func lengthField(s *Schema, k string) **int {
	switch k {
	case "minLength":
		return &s.MinLength
	case "maxLength":
		return &s.MaxLength
	case "minItems":
		return &s.MinItems
	}
	return &s.MaxItems
}

// enumOf is the enum of field f, of type t, given as "a|b|c" in its tag
// (with null for a pointer).
func (g *Generator) enumOf(t reflect.Type, f *reflect.StructField, v string) []any {
	var vals []any
	for _, e := range strings.Split(v, "|") {
		val, err := enumValue(derefKind(t), e)
		if err != nil {
			g.fail("field %s: bad enum value %q: %v", f.Name, e, err)
			continue
		}
		vals = append(vals, val)
	}
	if t.Kind() == reflect.Pointer {
		vals = append(vals, nil)
	}
	return vals
}

func derefKind(t reflect.Type) reflect.Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind()
}

func enumValue(k reflect.Kind, s string) (any, error) {
	switch {
	case k == reflect.Bool:
		return strconv.ParseBool(s)
	case k >= reflect.Int && k <= reflect.Int64:
		return strconv.ParseInt(s, 10, 64)
	case k >= reflect.Uint && k <= reflect.Uintptr:
		return strconv.ParseUint(s, 10, 64)
	case k == reflect.Float32 || k == reflect.Float64:
		return strconv.ParseFloat(s, 64)
	}
	return s, nil
}
