package jsonrpc

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Handler answers JSON-RPC requests. ServeRPC returns the result (encoded
// as JSON by the server) or an error. For notifications the result and the
// error are discarded. A returned *Error (or an error wrapping one) is sent
// as is; any other error becomes an internal error (-32603).
type Handler interface {
	ServeRPC(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// ServeRPC calls f(ctx, req).
func (f HandlerFunc) ServeRPC(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Middleware wraps a Handler with behaviour of its own (logging, auth, metrics).
type Middleware func(Handler) Handler

// Chain wraps h in the middlewares, the first one outermost.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// MethodDoc describes a method for discovery (rpc.discover) and documentation.
// Every field is optional.
type MethodDoc struct {
	Summary     string
	Description string
	// ParamNames names positional parameters when the params type is not a
	// struct (struct params take their names from the fields).
	ParamNames []string
	// Deprecated marks a method that still works but should not be called
	// any more: rpc.discover says "deprecated": true, and each call is
	// counted (Mux.DeprecatedCalls), logged once per connection, and
	// answered over HTTP with the Deprecation header (RFC 9745).
	Deprecated bool
	// DeprecatedSince is when the method was (or will be) deprecated, the
	// date the Deprecation header carries; zero means when it was
	// registered.
	DeprecatedSince time.Time
	// Replacement names the method to call instead of a deprecated one.
	Replacement string
	// Sunset is when a deprecated method will be removed (sent as the
	// Sunset header, RFC 8594); zero when not decided.
	Sunset   time.Time
	Errors   []*Error  // errors the method may return
	Examples []Example // example calls
	Tags     []string
}

// Example is one example call of a method: params and the expected result, as JSON.
type Example struct {
	Name   string
	Params []byte // raw JSON (array or object), nil for none
	Result []byte // raw JSON
}

// MethodInfo is what a Mux knows of a registered method.
type MethodInfo struct {
	Name string
	Doc  MethodDoc
	// ParamsType and ResultType are the Go types of a method registered with
	// Register; they are nil for plain Handlers.
	ParamsType reflect.Type
	ResultType reflect.Type
	// Params lists the struct fields (in positional order) when ParamsType is
	// a struct; ByPosition and ByName tell which params shapes are accepted.
	Params     []ParamInfo
	ByPosition bool
	ByName     bool
	// Subscriptions is set on the subscribe method that NewSubscriptions
	// registers: its kinds, as they are when asked (Subscriptions.Kinds).
	Subscriptions *Subscriptions
}

// ParamInfo is one named parameter of a struct-typed method.
type ParamInfo struct {
	Name     string
	Type     reflect.Type
	Required bool
	Field    reflect.StructField
}

// Mux dispatches requests to handlers by method name. It is safe for
// concurrent use; methods may be added while it serves.
type Mux struct {
	mu      sync.RWMutex
	methods map[string]*methodEntry
	mws     []Middleware
}

type methodEntry struct {
	handler Handler // wrapped in the middlewares
	info    MethodInfo
	// deprecation notes the calls of a deprecated method (nil otherwise).
	deprecation *deprecation
	// resultSize is the size of the last large result (see sizeHint), so
	// that the next one is encoded into a buffer of the right size.
	resultSize atomic.Int64
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{methods: make(map[string]*methodEntry)} }

// Use adds middlewares that wrap every method registered after the call.
func (m *Mux) Use(mws ...Middleware) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mws = append(m.mws, mws...)
}

// Handle registers h for method. It panics if the name is empty, already
// registered, or reserved (names starting with "rpc." are for extensions:
// use HandleExtension).
func (m *Mux) Handle(method string, h Handler, doc ...MethodDoc) {
	if strings.HasPrefix(method, "rpc.") {
		panic("jsonrpc: method names starting with \"rpc.\" are reserved; use HandleExtension for " + method)
	}
	m.add(MethodInfo{Name: method, Doc: firstDoc(doc)}, h)
}

// HandleFunc registers f for method.
func (m *Mux) HandleFunc(method string, f func(ctx context.Context, req *Request) (any, error), doc ...MethodDoc) {
	m.Handle(method, HandlerFunc(f), doc...)
}

// HandleExtension registers a handler for a reserved "rpc." method, such as
// rpc.discover. It panics for other names.
func (m *Mux) HandleExtension(method string, h Handler, doc ...MethodDoc) {
	if !strings.HasPrefix(method, "rpc.") {
		panic("jsonrpc: HandleExtension is for \"rpc.\" methods, not " + method)
	}
	m.add(MethodInfo{Name: method, Doc: firstDoc(doc)}, h)
}

func firstDoc(doc []MethodDoc) MethodDoc {
	if len(doc) > 0 {
		return doc[0]
	}
	return MethodDoc{}
}

func (m *Mux) add(info MethodInfo, h Handler) {
	if info.Name == "" || h == nil {
		panic("jsonrpc: empty method name or nil handler")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.methods == nil {
		m.methods = make(map[string]*methodEntry)
	}
	if _, dup := m.methods[info.Name]; dup {
		panic("jsonrpc: method registered twice: " + info.Name)
	}
	e := &methodEntry{info: info}
	if info.Doc.Deprecated {
		e.deprecation = newDeprecation(info.Doc, time.Now())
		h = e.deprecation.wrap(info, h)
	}
	e.handler = Chain(h, m.mws...)
	m.methods[info.Name] = e
}

// lookup finds the entry for a method name given as bytes (no allocation).
func (m *Mux) lookup(method []byte) *methodEntry {
	m.mu.RLock()
	e := m.methods[string(method)]
	m.mu.RUnlock()
	return e
}

// ServeRPC dispatches req to the handler registered for req.Method, or
// returns a method-not-found error.
func (m *Mux) ServeRPC(ctx context.Context, req *Request) (any, error) {
	e := m.lookup([]byte(req.Method))
	if e == nil {
		return nil, methodNotFound(req.Method)
	}
	return e.handler.ServeRPC(ctx, req)
}

func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "method not found: " + truncate(method, 128)}
}

// truncate returns s as a string of at most n bytes (not splitting a UTF-8
// sequence), marked with "…" when cut.
func truncate[T ~string | ~[]byte](s T, n int) string {
	if len(s) <= n {
		return string(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]) + "…"
}

// Has reports whether a method of that name is registered.
func (m *Mux) Has(method string) bool {
	m.mu.RLock()
	_, ok := m.methods[method]
	m.mu.RUnlock()
	return ok
}

// Method returns what the Mux knows of the method with the given name.
func (m *Mux) Method(name string) (MethodInfo, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e := m.methods[name]; e != nil {
		return e.info, true
	}
	return MethodInfo{}, false
}

// Methods returns what the Mux knows of each registered method, sorted by name.
func (m *Mux) Methods() []MethodInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]MethodInfo, 0, len(m.methods))
	for _, e := range m.methods {
		out = append(out, e.info)
	}
	slices.SortFunc(out, func(a, b MethodInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}
