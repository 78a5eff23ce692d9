package codec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// The compiled codec: for the plain Go types that params and results are
// usually made of, a plan built once per type by reflection decodes and
// encodes with exactly v2's results. The plan covers
//
//   - bool, the integer and float kinds, string (named types too);
//   - structs of those, with json tags giving a name, "-", omitempty and
//     omitzero (names match exactly: the case counts);
//   - slices (not of bytes: v2 makes those base64), maps with string keys,
//     and pointers, of any type the plan covers.
//
// A type that holds anything else (a method of the JSON or text interfaces,
// an embedded field, an interface, an array, time.Duration, another tag
// option) has no plan and goes through v2 whole. A plan gives up (returns
// false) on anything it is not sure v2 takes the same way (an unknown
// member, a number out of range, a string in an int), and v2 then runs on
// the same input and destination, so errors are v2's own; FuzzCodec holds
// them to that. Decoding trusts the scanner: the text is valid JSON with
// valid UTF-8 and no duplicate names.

// codec is the plan for one Go type: what kind of value it is and the
// plans of the values it holds. decoder.value and appendValue follow it.
type codec struct {
	Kind   reflect.Kind
	typ    reflect.Type
	bits   int          // integers and floats
	elem   *codec       // pointers, slices, maps: the plan of the element
	Object *StructCodec // structs
	// direct: an interface holds the value itself in its data word
	// (pointer-shaped types), not a pointer to it.
	direct bool
}

// codecs caches the plan of each type seen (a nil *codec: no plan).
var codecs sync.Map // reflect.Type → *codec

// CodecFor returns the plan for t, or nil when values of t go through v2.
func CodecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	p := planner{building: map[reflect.Type]*codec{}}
	c := p.plan(t)
	if p.failed {
		c = nil
	}
	actual, _ := codecs.LoadOrStore(t, c)
	return actual.(*codec)
}

// maxEncodeDepth is the nesting of pointers, slices and maps past which the
// encoder hands a value to v2 (which then finds a cycle or goes on).
const maxEncodeDepth = 1000

var (
	methodTypes = []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[json.Unmarshaler](),
		reflect.TypeFor[jsonv2.MarshalerTo](), reflect.TypeFor[jsonv2.UnmarshalerFrom](),
		reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
		reflect.TypeFor[encoding.TextAppender](),
	}
	durationType = reflect.TypeFor[time.Duration]()
)

// hasMethods reports whether t or *t has a method v2 would call.
func hasMethods(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, m := range methodTypes {
		if t.Implements(m) || pt.Implements(m) {
			return true
		}
	}
	return false
}

// planner builds the plan of one type and the types it holds.
type planner struct {
	building map[reflect.Type]*codec // plans begun (recursive types point back to them)
	failed   bool                    // some type reached has no plan
}

func (pl *planner) plan(t reflect.Type) *codec {
	if c, ok := pl.building[t]; ok {
		return c
	}
	// time.Duration has no default form in v2; encoding/json's types
	// (Number) may be special to it where it is the standard library's.
	if hasMethods(t) || t == durationType || t.PkgPath() == "encoding/json" {
		pl.failed = true
		return nil
	}
	c := &codec{Kind: t.Kind(), typ: t, direct: directIface(t)}
	pl.building[t] = c
	switch t.Kind() {
	case reflect.Bool, reflect.String:
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		c.bits = t.Bits()
	case reflect.Pointer:
		c.elem = pl.plan(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			pl.failed = true // v2 makes bytes base64
		}
		c.elem = pl.plan(t.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String || hasMethods(t.Key()) {
			pl.failed = true
		}
		c.elem = pl.plan(t.Elem())
	case reflect.Struct:
		if c.Object = pl.structOf(t); c.Object == nil {
			pl.failed = true
		}
	default:
		pl.failed = true
	}
	return c
}

// directIface reports whether an interface holding a t holds it in its data
// word (the Go compiler's rule for pointer-shaped types).
func directIface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && directIface(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && directIface(t.Elem())
	}
	return false
}

// pointerIn returns an interface's data word: the value itself for a
// pointer-shaped type, else a pointer to the value.
func pointerIn(v *any) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(v))[1] }

// appendEncoded appends the JSON encoding of v, of the type c plans, or
// reports false for v2 to do it.
func appendEncoded(b []byte, v any, c *codec) ([]byte, bool) {
	w := pointerIn(&v)
	switch {
	case !c.direct:
		return appendValue(b, c, w, 0)
	case c.Kind == reflect.Pointer:
		if w == nil {
			return append(b, "null"...), true
		}
		return appendValue(b, c.elem, w, 1)
	}
	cell := new(unsafe.Pointer) // a map, or a struct of one pointer
	*cell = w
	return appendValue(b, c, unsafe.Pointer(cell), 0)
}

// decodeInto decodes data into the value p points to, of the type c
// plans, or reports false for v2 to do it.
func decodeInto(data []byte, c *codec, p unsafe.Pointer) bool {
	d := NewDecoder(data)
	return d.Value(c, p) && d.Peek() == 0 && d.Pos == len(data)
}

// Decoder reads one JSON value the scanner has already validated.
type Decoder struct {
	wire.Cursor
	// Alias: Data never changes (wire.Stable), so the strings decoded
	// share its memory where they have no escapes, rather than copy it.
	Alias bool
}

// NewDecoder returns a decoder of data, whose strings alias data when its
// memory is stable (see wire.Stable).
func NewDecoder(data []byte) Decoder {
	return Decoder{Cursor: wire.Cursor{Data: data}, Alias: wire.Stable(data)}
}

// literal consumes lit if it comes next.
func (d *Decoder) literal(lit string) bool { return d.Peek() == lit[0] && d.Literal(lit) }

// number returns the text of the number at d.pos, or nil if none is there.
func (d *Decoder) number() []byte {
	if c := d.Peek(); c != '-' && (c < '0' || c > '9') {
		return nil
	}
	start := d.Pos
	for ; d.Pos < len(d.Data); d.Pos++ {
		if c := d.Data[d.Pos]; (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
	}
	return d.Data[start:d.Pos]
}

// stringBytes reads the string at d.pos and returns its decoded bytes: a
// view of the input when it has no escapes (found with bytes.IndexByte:
// the scanner has checked the rest), else a new slice (fresh).
func (d *Decoder) stringBytes() (b []byte, fresh, ok bool) {
	if d.Peek() != '"' {
		return nil, false, false
	}
	body := d.Data[d.Pos+1:]
	q := bytes.IndexByte(body, '"')
	if q < 0 {
		return nil, false, false
	}
	bs := bytes.IndexByte(body[:q], '\\')
	if bs < 0 {
		d.Pos += q + 2
		return body[:q], false, true
	}
	// Escapes: the closing quote is the first one after an even run of
	// backslashes (each quote is looked at once).
	for {
		k := q - 1
		for k >= 0 && body[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			break
		}
		n := bytes.IndexByte(body[q+1:], '"')
		if n < 0 {
			return nil, false, false
		}
		q += 1 + n
	}
	d.Pos += 1 + q + 1
	return wire.Unquote(body[:q]), true, true
}

// str reads a string value.
func (d *Decoder) str() (string, bool) {
	b, fresh, ok := d.stringBytes()
	if fresh || d.Alias {
		// fresh: no other reference; Alias: bytes that never change.
		return unsafe.String(unsafe.SliceData(b), len(b)), ok
	}
	return string(b), ok
}

// member reads an object member's name and its colon.
func (d *Decoder) member() ([]byte, bool) {
	name, _, ok := d.stringBytes()
	if !ok || d.Peek() != ':' {
		return nil, false
	}
	d.Pos++
	return name, true
}

// open consumes opener and reports whether the object or array has
// members or elements (more).
func (d *Decoder) open(opener, closer byte) (more, ok bool) {
	if d.Peek() != opener {
		return false, false
	}
	d.Pos++
	if d.Peek() == closer {
		d.Pos++
		return false, true
	}
	return true, true
}

// Value decodes the JSON value at d.pos into *p, of the type c plans, as
// v2 would; it reports false on anything it is not sure of. A JSON null
// stores the zero value (a nil pointer, slice or map).
func (d *Decoder) Value(c *codec, p unsafe.Pointer) bool {
	if d.literal("null") {
		setZero(c, p)
		return true
	}
	switch c.Kind {
	case reflect.Bool:
		return d.bool(p)
	case reflect.String:
		s, ok := d.str()
		*(*string)(p) = s
		return ok
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return d.int(c.bits, p)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return d.uint(c.bits, p)
	case reflect.Float32, reflect.Float64:
		return d.float(c.bits, p)
	case reflect.Pointer:
		pp := (*unsafe.Pointer)(p)
		if *pp == nil {
			*pp = reflect.New(c.typ.Elem()).UnsafePointer()
		}
		return d.Value(c.elem, *pp)
	case reflect.Slice:
		return d.slice(c, p)
	case reflect.Map:
		return d.mapOf(c, p)
	case reflect.Struct:
		_, ok := d.Object(c.Object, p)
		return ok
	}
	return false
}

// setZero stores the zero value of c's type at p (what null decodes to).
func setZero(c *codec, p unsafe.Pointer) {
	switch c.Kind {
	case reflect.Pointer:
		*(*unsafe.Pointer)(p) = nil
	case reflect.String:
		*(*string)(p) = ""
	default:
		reflect.NewAt(c.typ, p).Elem().SetZero()
	}
}

func (d *Decoder) bool(p unsafe.Pointer) bool {
	switch {
	case d.literal("true"):
		*(*bool)(p) = true
	case d.literal("false"):
		*(*bool)(p) = false
	default:
		return false
	}
	return true
}

func (d *Decoder) float(bits int, p unsafe.Pointer) bool {
	s := d.number()
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), bits) // not kept
	if err != nil {
		return false
	}
	if bits == 32 {
		*(*float32)(p) = float32(f)
	} else {
		*(*float64)(p) = f
	}
	return true
}

// ParseUint parses the digits of an integer without sign, fraction or
// exponent (what v2 accepts for Go integers).
func ParseUint(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func (d *Decoder) int(bits int, p unsafe.Pointer) bool {
	s := d.number()
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	u, ok := ParseUint(s)
	if limit := uint64(1) << (bits - 1); !ok || (neg && u > limit) || (!neg && u >= limit) {
		return false
	}
	if neg {
		u = -u // two's complement
	}
	storeUint(p, bits, u)
	return true
}

func (d *Decoder) uint(bits int, p unsafe.Pointer) bool {
	n, ok := ParseUint(d.number()) // a sign is refused, as v2 does
	if !ok || (bits < 64 && n >= 1<<bits) {
		return false
	}
	storeUint(p, bits, n)
	return true
}

// The integers of each size at p, as the widest of their sign (a signed
// integer is stored as the same bits unsigned).

func storeUint(p unsafe.Pointer, bits int, n uint64) {
	switch bits {
	case 8:
		*(*uint8)(p) = uint8(n)
	case 16:
		*(*uint16)(p) = uint16(n)
	case 32:
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
}

func loadUint(p unsafe.Pointer, bits int) uint64 {
	switch bits {
	case 8:
		return uint64(*(*uint8)(p))
	case 16:
		return uint64(*(*uint16)(p))
	case 32:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

// slice decodes an array: like v2, into a new slice when nil, else over
// the old one's capacity (each element zeroed first).
func (d *Decoder) slice(c *codec, p unsafe.Pointer) bool {
	more, ok := d.open('[', ']')
	if !ok {
		return false
	}
	v := reflect.NewAt(c.typ, p).Elem()
	if v.IsNil() {
		v.Set(reflect.MakeSlice(c.typ, 0, 0))
	}
	v.SetLen(0)
	for n := 0; more; n++ {
		if n == v.Cap() {
			v.Grow(1)
		}
		v.SetLen(n + 1)
		e := v.Index(n)
		e.SetZero()
		if !d.Value(c.elem, e.Addr().UnsafePointer()) {
			return false
		}
		if more, ok = d.Next(']'); !ok {
			return false
		}
	}
	return true
}

// mapOf decodes an object into a map (allocated when nil). A key already
// in the map goes to v2, which decodes into the entry there.
func (d *Decoder) mapOf(c *codec, p unsafe.Pointer) bool {
	more, ok := d.open('{', '}')
	if !ok {
		return false
	}
	m := reflect.NewAt(c.typ, p).Elem()
	if m.IsNil() {
		m.Set(reflect.MakeMap(c.typ))
	}
	k, v := reflect.New(c.typ.Key()).Elem(), reflect.New(c.typ.Elem()).Elem()
	for more {
		name, ok := d.member()
		if !ok {
			return false
		}
		k.SetString(string(name))
		if m.MapIndex(k).IsValid() {
			return false
		}
		v.SetZero()
		if !d.Value(c.elem, v.Addr().UnsafePointer()) {
			return false
		}
		m.SetMapIndex(k, v)
		if more, ok = d.Next('}'); !ok {
			return false
		}
	}
	return true
}

// Object merges the JSON object at d.pos into the struct at p (fields it
// does not name keep their values, as in v2) and returns the set of fields
// it held (bit i: field i). An unknown or repeated name goes to v2.
func (d *Decoder) Object(sc *StructCodec, p unsafe.Pointer) (seen uint64, ok bool) {
	more, ok := d.open('{', '}')
	if !ok {
		return 0, false
	}
	for more {
		name, ok := d.member()
		if !ok {
			return 0, false
		}
		i := sc.field(name)
		if i < 0 || seen&(1<<i) != 0 {
			return 0, false
		}
		seen |= 1 << i
		f := &sc.Fields[i]
		if !d.Value(f.codec, unsafe.Add(p, f.offset)) {
			return 0, false
		}
		if more, ok = d.Next('}'); !ok {
			return 0, false
		}
	}
	return seen, true
}

// appendValue appends the JSON encoding of *p, of the type c plans, as v2
// would (nil slices as [], nil maps as {}, map keys sorted), or reports
// false on what v2 refuses (invalid UTF-8, NaN, infinities) and past
// maxEncodeDepth.
func appendValue(b []byte, c *codec, p unsafe.Pointer, depth int) ([]byte, bool) {
	if depth > maxEncodeDepth {
		return b, false
	}
	switch c.Kind {
	case reflect.Bool:
		return strconv.AppendBool(b, *(*bool)(p)), true
	case reflect.String:
		return wire.AppendQuote(b, *(*string)(p), true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		shift := 64 - c.bits // sign-extended
		return strconv.AppendInt(b, int64(loadUint(p, c.bits)<<shift)>>shift, 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(b, loadUint(p, c.bits), 10), true
	case reflect.Float32, reflect.Float64:
		f := float64(0)
		if c.bits == 32 {
			f = float64(*(*float32)(p))
		} else {
			f = *(*float64)(p)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false
		}
		return appendFloat(b, f, c.bits), true
	case reflect.Pointer:
		pp := *(*unsafe.Pointer)(p)
		if pp == nil {
			return append(b, "null"...), true
		}
		return appendValue(b, c.elem, pp, depth+1)
	case reflect.Slice:
		return appendSlice(b, c, p, depth)
	case reflect.Map:
		return appendMap(b, c, p, depth)
	case reflect.Struct:
		return appendObject(b, c.Object, p, depth)
	}
	return b, false
}

func appendSlice(b []byte, c *codec, p unsafe.Pointer, depth int) ([]byte, bool) {
	s := *(*[]byte)(p) // any slice's header: its data and length
	size := c.typ.Elem().Size()
	b = append(b, '[')
	for i := range len(s) {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = appendValue(b, c.elem, unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), uintptr(i)*size), depth+1); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

func appendMap(b []byte, c *codec, p unsafe.Pointer, depth int) ([]byte, bool) {
	m := reflect.NewAt(c.typ, p).Elem()
	if m.Len() == 0 {
		return append(b, "{}"...), true
	}
	keys := make([]string, 0, m.Len())
	for it := m.MapRange(); it.Next(); {
		keys = append(keys, it.Key().String())
	}
	slices.Sort(keys) // v2's deterministic order
	k, v := reflect.New(c.typ.Key()).Elem(), reflect.New(c.typ.Elem()).Elem()
	b = append(b, '{')
	for i, key := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = wire.AppendQuote(b, key, true); !ok {
			return b, false
		}
		b = append(b, ':')
		k.SetString(key)
		v.Set(m.MapIndex(k))
		if b, ok = appendValue(b, c.elem, v.Addr().UnsafePointer(), depth+1); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendObject(b []byte, sc *StructCodec, p unsafe.Pointer, depth int) ([]byte, bool) {
	b = append(b, '{')
	wrote := false
	for i := range sc.Fields {
		f := &sc.Fields[i]
		fp := unsafe.Add(p, f.offset)
		if f.omitZero && reflect.NewAt(f.codec.typ, fp).Elem().IsZero() {
			continue
		}
		mark := len(b)
		if wrote {
			b = append(b, ',')
		}
		b = append(b, f.head...)
		start := len(b)
		var ok bool
		if b, ok = appendValue(b, f.codec, fp, depth); !ok {
			return b, false
		}
		if f.omitEmpty {
			// v2 omits what encodes as null, "", {} or [].
			if v := b[start:]; len(v) == 2 && (v[0] == '"' || v[0] == '{' || v[0] == '[') || string(v) == "null" {
				b = b[:mark]
				continue
			}
		}
		wrote = true
	}
	return append(b, '}'), true
}

// StructCodec is the plan of a struct type.
type StructCodec struct {
	Fields []fieldCodec
	byName map[string]int // for structs with many fields
}

type fieldCodec struct {
	Name      string
	head      []byte // the quoted name and colon, as encoded
	offset    uintptr
	codec     *codec
	omitEmpty bool
	omitZero  bool
}

// structOf plans struct type t, or returns nil when v2 must handle it:
// embedded fields, tag options other than omitempty and omitzero, names v2
// would quote or reject, more than 64 fields, or none v2 could represent.
func (pl *planner) structOf(t reflect.Type) *StructCodec {
	sc := &StructCodec{}
	for i := range t.NumField() {
		fc, use, ok := pl.field(t.Field(i))
		if !ok || use && sc.field([]byte(fc.Name)) >= 0 { // a name given twice
			return nil
		}
		if use {
			sc.Fields = append(sc.Fields, fc)
		}
	}
	switch {
	case len(sc.Fields) == 0 && t.NumField() > 0:
		return nil // v2 decides whether this is an error
	case len(sc.Fields) > 64:
		return nil // the seen mask has 64 bits
	case len(sc.Fields) > 8:
		sc.byName = make(map[string]int, len(sc.Fields))
		for i, f := range sc.Fields {
			sc.byName[f.Name] = i
		}
	}
	return sc
}

// field plans one field of a struct: use is false for a field v2 leaves
// out, ok false for one that v2 must handle (the whole struct then goes to
// v2).
func (pl *planner) field(f reflect.StructField) (fc fieldCodec, use, ok bool) {
	tag, hasTag := f.Tag.Lookup("json")
	switch {
	case tag == "-":
		return fc, false, true
	case f.Anonymous:
		return fc, false, false
	case !f.IsExported():
		return fc, false, !hasTag // a tag on it: v2 reports an error
	}
	name, opts, hasOpts := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	if strings.ContainsAny(name, "\\'\"`") || !utf8.ValidString(name) {
		return fc, false, false
	}
	fc = fieldCodec{Name: name, offset: f.Offset}
	if hasOpts && !fc.options(f.Type, opts) {
		return fc, false, false
	}
	if fc.codec = pl.plan(f.Type); fc.codec == nil {
		return fc, false, false
	}
	head, _ := wire.AppendQuote(nil, name, true)
	fc.head = append(head, ':')
	return fc, true, true
}

// options sets the field's omitempty and omitzero from its tag's options;
// it reports false for any other option, one given twice, or omitzero on
// a type with an IsZero method (which v2 calls).
func (fc *fieldCodec) options(t reflect.Type, opts string) bool {
	_, isZero := reflect.PointerTo(t).MethodByName("IsZero") // *t's methods include t's
	for opt := range strings.SplitSeq(opts, ",") {
		switch {
		case opt == "omitempty" && !fc.omitEmpty:
			fc.omitEmpty = true
		case opt == "omitzero" && !fc.omitZero && !isZero:
			fc.omitZero = true
		default:
			return false
		}
	}
	return true
}

// field returns the index of the field named name, or -1.
func (sc *StructCodec) field(name []byte) int {
	if sc.byName != nil {
		if i, ok := sc.byName[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range sc.Fields {
		if sc.Fields[i].Name == string(name) {
			return i
		}
	}
	return -1
}

// appendFloat formats f as ECMAScript does (and v2): the shortest decimal
// that reads back as f, in exponent form below 1e-6 and from 1e21 on.
func appendFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		if bits == 64 || float32(abs) < 1e-6 || float32(abs) >= 1e21 {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 → e-7
		b = b[:n-1]
	}
	return b
}
