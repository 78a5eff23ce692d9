package openrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/seedhq/jsonrpc"
)

// Version is the OpenRPC specification version of the documents built here.
const Version = "1.3.2"

// Doc is an OpenRPC document (https://spec.open-rpc.org). Its JSON encoding
// validates against the OpenRPC meta-schema.
type Doc struct {
	OpenRPC    string      `json:"openrpc"`
	Info       Info        `json:"info"`
	Servers    []Server    `json:"servers,omitzero"`
	Methods    []*Method   `json:"methods"`
	Components *Components `json:"components,omitzero"`
}

// Info describes the service.
type Info struct {
	Title string `json:"title"`
	// Version is the version of the API the service offers (its own, such
	// as "2.1.0"; two versions served side by side have two Infos), not the
	// version of this toolkit or of OpenRPC (that is Doc.OpenRPC).
	Version        string   `json:"version"`
	Description    string   `json:"description,omitzero"`
	TermsOfService string   `json:"termsOfService,omitzero"`
	Contact        *Contact `json:"contact,omitzero"`
	License        *License `json:"license,omitzero"`
}

// Contact is the contact information of the service.
type Contact struct {
	Name  string `json:"name,omitzero"`
	URL   string `json:"url,omitzero"`
	Email string `json:"email,omitzero"`
}

// License is the license of the service.
type License struct {
	Name string `json:"name"`
	URL  string `json:"url,omitzero"`
}

// Server is a server that offers the service.
type Server struct {
	Name        string `json:"name,omitzero"`
	URL         string `json:"url"`
	Summary     string `json:"summary,omitzero"`
	Description string `json:"description,omitzero"`
}

// Method describes one method.
type Method struct {
	Name        string `json:"name"`
	Summary     string `json:"summary,omitzero"`
	Description string `json:"description,omitzero"`
	Tags        []Tag  `json:"tags,omitzero"`
	// ParamStructure is "by-position", "by-name" or "either" (the default
	// when empty).
	ParamStructure string               `json:"paramStructure,omitzero"`
	Params         []*ContentDescriptor `json:"params"`
	Result         *ContentDescriptor   `json:"result,omitzero"`
	Errors         []ErrorObject        `json:"errors,omitzero"`
	Examples       []ExamplePairing     `json:"examples,omitzero"`
	Deprecated     bool                 `json:"deprecated,omitzero"`
	// Replacement (x-replacement) names the method to call instead of a
	// deprecated one; Sunset (x-sunset, RFC 3339) is when it will be
	// removed. Both are extensions of this package (jsonrpc.MethodDoc).
	Replacement string `json:"x-replacement,omitzero"`
	Sunset      string `json:"x-sunset,omitzero"`

	// Extensions of this package, for params that content descriptors
	// cannot describe:
	//
	// Variadic means that the method takes any number of positional params,
	// each described by the only element of Params (a Go slice type).
	Variadic bool `json:"x-variadic,omitzero"`
	// ParamsSchema, when set, is the schema of the whole params value (a Go
	// map type, or any params at all for json.RawMessage and any).
	ParamsSchema *Schema `json:"x-params-schema,omitzero"`
	// Subscription (x-subscription), on the subscribe method of a
	// jsonrpc.Subscriptions, describes the subscriptions it starts.
	Subscription *Subscription `json:"x-subscription,omitzero"`
}

// Subscription describes the subscriptions a subscribe method starts, in
// go-ethereum's convention: the call's params are a kind's name, then its
// arguments; the result is the subscription's id; the events come as
// Notification notifications with params {"subscription": id, "result":
// event}; Unsubscribe [id] ends one. It is an extension of this package
// ("x-subscription"): OpenRPC 1.3 describes notification methods but not
// subscriptions (open-rpc/spec#381).
type Subscription struct {
	Unsubscribe  string             `json:"unsubscribe"`
	Notification string             `json:"notification"`
	Kinds        []SubscriptionKind `json:"kinds"`
}

// SubscriptionKind is one kind of subscription: Params is the schema of
// its one argument after the name (absent when it takes none), Event the
// schema of its events.
type SubscriptionKind struct {
	Name   string  `json:"name"`
	Params *Schema `json:"params,omitzero"`
	Event  *Schema `json:"event"`
}

// Tag groups methods.
type Tag struct {
	Name        string `json:"name"`
	Summary     string `json:"summary,omitzero"`
	Description string `json:"description,omitzero"`
}

// ContentDescriptor describes a param or a result.
type ContentDescriptor struct {
	Name        string  `json:"name"`
	Summary     string  `json:"summary,omitzero"`
	Description string  `json:"description,omitzero"`
	Schema      *Schema `json:"schema"`
	Required    bool    `json:"required,omitzero"`
	Deprecated  bool    `json:"deprecated,omitzero"`
}

// ErrorObject is an error a method may return.
type ErrorObject struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitzero"`
}

// ExamplePairing is an example call: params and result.
type ExamplePairing struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitzero"`
	Params      []ExampleObject `json:"params"`
	Result      *ExampleObject  `json:"result,omitzero"`
}

// ExampleObject is an example value of a param or a result.
type ExampleObject struct {
	Name        string          `json:"name"`
	Summary     string          `json:"summary,omitzero"`
	Description string          `json:"description,omitzero"`
	Value       json.RawMessage `json:"value"`
}

// Components holds the schemas shared by the methods, referenced as
// "#/components/schemas/NAME".
type Components struct {
	Schemas map[string]*Schema `json:"schemas,omitzero"`
}

// Method returns the method of the document with the given name, or nil.
func (d *Doc) Method(name string) *Method {
	for _, m := range d.Methods {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Document builds the OpenRPC document of the methods registered on mux.
// The schemas come from the Go types of the methods registered with
// jsonrpc.Register; their documentation from the jsonrpc.MethodDoc given at
// registration. A method registered as a plain Handler accepts any params
// and returns any result, as far as the document can tell.
//
// The error reports Go types that have no JSON Schema (see Generator): the
// document is complete otherwise, with true schemas in their place.
func Document(mux *jsonrpc.Mux, info Info) (*Doc, error) {
	return document(mux.Methods(), info)
}

func document(methods []jsonrpc.MethodInfo, info Info) (*Doc, error) {
	g := NewGenerator(RefComponents)
	doc := &Doc{OpenRPC: Version, Info: info, Methods: []*Method{}}
	for _, mi := range methods {
		m := describe(g, mi)
		if mi.Subscriptions != nil {
			m.Subscription = describeSubscriptions(g, mi.Subscriptions)
		}
		doc.Methods = append(doc.Methods, m)
	}
	if len(g.Defs()) > 0 {
		doc.Components = &Components{Schemas: g.Defs()}
	}
	return doc, g.Err()
}

// DiscoverMethod is the name of the discovery method.
const DiscoverMethod = "rpc.discover"

// Register serves rpc.discover on mux: it returns the OpenRPC document of
// the methods of mux (Document), rebuilt when methods are added. rpc.discover
// takes no params (an empty array or object is accepted). It lists only the
// methods the caller may call (jsonrpc.Authorized), so that a server with a
// per-method policy does not show a caller what it cannot use.
func Register(mux *jsonrpc.Mux, info Info) {
	var (
		mu    sync.Mutex
		key   string
		cache json.RawMessage
	)
	h := func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if p := strings.TrimSpace(string(req.Params)); p != "" && !isEmptyContainer(p) {
			return nil, ParamsError([]Problem{{Path: "", Problem: "rpc.discover takes no params"}})
		}
		methods := slices.DeleteFunc(mux.Methods(), func(m jsonrpc.MethodInfo) bool { return !jsonrpc.Authorized(ctx, m.Name) })
		var kb strings.Builder
		for _, m := range methods {
			kb.WriteString(m.Name)
			kb.WriteByte(0)
		}
		mu.Lock()
		defer mu.Unlock()
		if cache != nil && kb.String() == key {
			return cache, nil
		}
		doc, err := document(methods, info)
		if err != nil {
			slog.Warn("openrpc: incomplete discovery document", "err", err)
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		key, cache = kb.String(), b
		return cache, nil
	}
	mux.HandleExtension(DiscoverMethod, jsonrpc.HandlerFunc(h), jsonrpc.MethodDoc{
		Summary:     "Returns the OpenRPC document of this service.",
		Description: "The document lists every method with JSON Schemas for its params and result (OpenRPC " + Version + ").",
	})
}

func isEmptyContainer(p string) bool {
	p = strings.Join(strings.Fields(p), "")
	return p == "[]" || p == "{}"
}

type paramsKind uint8

const (
	kindNone   paramsKind = iota // no Go type: any params
	kindStruct                   // by name or by position
	kindSlice                    // variadic, by position
	kindArray                    // fixed positions
	kindMap                      // by name, any names
	kindRaw                      // json.RawMessage or any
	kindScalar                   // one positional param
)

// kindOf mirrors how jsonrpc.Register maps params onto a Go type.
func kindOf(t reflect.Type) paramsKind {
	if t == nil {
		return kindNone
	}
	st := t
	if st.Kind() == reflect.Pointer && st.Elem().Kind() == reflect.Struct {
		st = st.Elem()
	}
	switch {
	case t == rawJSONType || t.Kind() == reflect.Interface:
		return kindRaw
	case st.Kind() == reflect.Struct:
		return kindStruct
	case t.Kind() == reflect.Slice:
		return kindSlice
	case t.Kind() == reflect.Array:
		return kindArray
	case t.Kind() == reflect.Map:
		return kindMap
	}
	return kindScalar
}

func paramName(names []string, i int, def string) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	if def != "" {
		return def
	}
	return "arg" + strconv.Itoa(i)
}

// describe returns the OpenRPC method of mi; shared schemas go to g.
func describe(g *Generator, mi jsonrpc.MethodInfo) *Method {
	d := mi.Doc
	m := &Method{
		Name:        mi.Name,
		Summary:     d.Summary,
		Description: d.Description,
		Deprecated:  d.Deprecated,
		Params:      []*ContentDescriptor{},
	}
	if d.Deprecated {
		m.Replacement = d.Replacement
		if !d.Sunset.IsZero() {
			m.Sunset = d.Sunset.UTC().Format(time.RFC3339)
		}
	}
	for _, t := range d.Tags {
		m.Tags = append(m.Tags, Tag{Name: t})
	}
	for _, e := range d.Errors {
		m.Errors = append(m.Errors, ErrorObject{Code: e.Code, Message: e.Message, Data: e.Data})
	}
	if !m.describeParams(g, mi) {
		return m
	}
	if mi.ResultType != nil {
		m.Result = &ContentDescriptor{Name: "result", Schema: g.SchemaOf(mi.ResultType)}
	} else {
		m.Result = &ContentDescriptor{Name: "result", Schema: &Schema{}}
	}
	for i, ex := range d.Examples {
		m.Examples = append(m.Examples, examplePairing(m, i, ex))
	}
	return m
}

// describeParams describes the params of the method mi; it reports false
// when m is complete (the discovery method: no result to add).
func (m *Method) describeParams(g *Generator, mi jsonrpc.MethodInfo) bool {
	d := mi.Doc
	switch kindOf(mi.ParamsType) {
	case kindNone:
		if mi.Name == DiscoverMethod {
			m.ParamStructure = "either"
			m.Result = &ContentDescriptor{Name: "OpenRPC document", Schema: &Schema{Type: "object", Description: "An OpenRPC document (https://spec.open-rpc.org)."}}
			return false
		}
		m.ParamStructure, m.ParamsSchema = "either", &Schema{}
	case kindRaw:
		m.ParamStructure, m.ParamsSchema = "either", &Schema{}
	case kindMap:
		m.ParamStructure, m.ParamsSchema = "by-name", g.SchemaOf(mi.ParamsType)
	case kindSlice:
		m.ParamStructure, m.Variadic = "by-position", true
		s := g.SchemaOf(mi.ParamsType)
		item := s.Items
		if item == nil { // []byte: a base64 string, taken as one param
			m.Variadic = false
			item = s
		}
		m.Params = append(m.Params, &ContentDescriptor{Name: paramName(d.ParamNames, 0, "values"), Schema: item, Required: !m.Variadic})
	case kindArray:
		m.ParamStructure = "by-position"
		item := g.SchemaOf(mi.ParamsType.Elem())
		for i := range mi.ParamsType.Len() {
			m.Params = append(m.Params, &ContentDescriptor{Name: paramName(d.ParamNames, i, ""), Schema: item.CloneSchemas(), Required: true})
		}
	case kindScalar:
		m.ParamStructure = "by-position"
		m.Params = append(m.Params, &ContentDescriptor{Name: paramName(d.ParamNames, 0, "value"), Schema: g.SchemaOf(mi.ParamsType), Required: true})
	case kindStruct:
		m.describeStructParams(g, mi)
	}
	return true
}

// describeStructParams describes params that are a struct's fields.
func (m *Method) describeStructParams(g *Generator, mi jsonrpc.MethodInfo) {
	switch {
	case mi.ByName && mi.ByPosition:
		m.ParamStructure = "either"
	case mi.ByName:
		m.ParamStructure = "by-name"
	default:
		m.ParamStructure = "by-position"
	}
	for _, p := range mi.Params {
		s := g.FieldSchema(p.Field)
		cd := &ContentDescriptor{Name: p.Name, Schema: s, Required: p.Required, Description: s.Description, Deprecated: s.Deprecated}
		m.Params = append(m.Params, cd)
	}
}

func examplePairing(m *Method, i int, ex jsonrpc.Example) ExamplePairing {
	p := ExamplePairing{Name: ex.Name, Params: []ExampleObject{}}
	if p.Name == "" {
		p.Name = "example " + strconv.Itoa(i+1)
	}
	var arr []json.RawMessage
	var obj map[string]json.RawMessage
	switch {
	case len(ex.Params) == 0:
	case json.Unmarshal(ex.Params, &arr) == nil:
		for j, v := range arr {
			name := "arg" + strconv.Itoa(j)
			if j < len(m.Params) {
				name = m.Params[j].Name
			}
			p.Params = append(p.Params, ExampleObject{Name: name, Value: v})
		}
	case json.Unmarshal(ex.Params, &obj) == nil:
		// In the order of the params, then the others.
		for _, cd := range m.Params {
			if v, ok := obj[cd.Name]; ok {
				p.Params = append(p.Params, ExampleObject{Name: cd.Name, Value: v})
				delete(obj, cd.Name)
			}
		}
		for name, v := range obj {
			p.Params = append(p.Params, ExampleObject{Name: name, Value: v})
		}
	}
	if ex.Result != nil {
		p.Result = &ExampleObject{Name: "result", Value: json.RawMessage(ex.Result)}
	}
	return p
}

func describeSubscriptions(g *Generator, s *jsonrpc.Subscriptions) *Subscription {
	_, unsub, notif := s.MethodNames()
	out := &Subscription{Unsubscribe: unsub, Notification: notif, Kinds: []SubscriptionKind{}}
	for _, k := range s.Kinds() {
		sk := SubscriptionKind{Name: k.Name, Event: g.SchemaOf(k.EventType)}
		if p := k.ParamsType; !(p.Kind() == reflect.Struct && p.NumField() == 0) {
			sk.Params = g.SchemaOf(p)
		}
		out.Kinds = append(out.Kinds, sk)
	}
	return out
}

// ParseDocument decodes an OpenRPC document, as returned by rpc.discover.
func ParseDocument(data []byte) (*Doc, error) {
	var d Doc
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, errors.New("openrpc: not an OpenRPC document: " + err.Error())
	}
	if d.OpenRPC == "" || d.Methods == nil {
		return nil, errors.New("openrpc: not an OpenRPC document: missing openrpc or methods")
	}
	restoreOrder(&d, data)
	return &d, nil
}

// ordered is a JSON value that keeps the order of object members.
type ordered struct {
	keys  []string
	vals  map[string]*ordered
	elems []*ordered
}

func decodeOrdered(dec *jsontext.Decoder) (*ordered, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		o := &ordered{vals: map[string]*ordered{}}
		for dec.PeekKind() != '}' {
			k, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := k.String()
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, name)
			o.vals[name] = v
		}
		_, err = dec.ReadToken()
		return o, err
	case '[':
		o := &ordered{}
		for dec.PeekKind() != ']' {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.elems = append(o.elems, v)
		}
		_, err = dec.ReadToken()
		return o, err
	}
	return &ordered{}, nil
}

func (o *ordered) get(path ...any) *ordered {
	for _, p := range path {
		if o == nil {
			return nil
		}
		switch p := p.(type) {
		case string:
			o = o.vals[p]
		case int:
			if p >= len(o.elems) {
				return nil
			}
			o = o.elems[p]
		}
	}
	return o
}

// restoreOrder sets the PropertyOrder of the document's schemas from the
// order of their properties in data (decoding into a Schema loses it).
func restoreOrder(d *Doc, data []byte) {
	root, err := decodeOrdered(jsontext.NewDecoder(bytes.NewReader(data)))
	if err != nil {
		return
	}
	for i, m := range d.Methods {
		om := root.get("methods", i)
		for j, p := range m.Params {
			schemaOrder(p.Schema, om.get("params", j, "schema"))
		}
		if m.Result != nil {
			schemaOrder(m.Result.Schema, om.get("result", "schema"))
		}
		schemaOrder(m.ParamsSchema, om.get("x-params-schema"))
	}
	if d.Components != nil {
		for name, s := range d.Components.Schemas {
			schemaOrder(s, root.get("components", "schemas", name))
		}
	}
}

func schemaOrder(s *Schema, o *ordered) {
	if s == nil || o == nil {
		return
	}
	if props := o.get("properties"); props != nil {
		s.PropertyOrder = props.keys
		for name, ps := range s.Properties {
			schemaOrder(ps, props.get(name))
		}
	}
	schemaOrder(s.Items, o.get("items"))
	schemaOrder(s.AdditionalProperties, o.get("additionalProperties"))
	schemaOrder(s.Not, o.get("not"))
	for kw, list := range map[string][]*Schema{"anyOf": s.AnyOf, "oneOf": s.OneOf, "allOf": s.AllOf} {
		for i, sub := range list {
			schemaOrder(sub, o.get(kw, i))
		}
	}
	for kw, defs := range map[string]map[string]*Schema{"$defs": s.Defs, "definitions": s.Definitions} {
		for name, sub := range defs {
			schemaOrder(sub, o.get(kw, name))
		}
	}
}

var rawJSONType = reflect.TypeFor[json.RawMessage]()
