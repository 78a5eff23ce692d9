package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Era is what a client found of its server.
type Era int

const (
	EraUnknown   Era = iota
	EraStateless     // per-request _meta and headers
	EraSession       // initialize done, or done by the caller
	EraNone          // no MCP server: messages go as they are
)

// EraAmong picks the era of the revisions a server names (in its
// DiscoverResult, or in the UnsupportedProtocolVersionError err): the
// stateless one when Version2026 is among them, else the session era
// when one of its revisions is; with neither, an error wrapping err.
func EraAmong(supported []string, err error) (Era, string, error) {
	switch {
	case slices.Contains(supported, Version2026):
		return EraStateless, Version2026, nil
	case slices.ContainsFunc(supported, func(v string) bool { return !IsStatelessVersion(v) }):
		return EraSession, Version2025, nil
	}
	if err == nil {
		err = errors.New("server/discover: supportedVersions " + strconv.Quote(fmt.Sprint(supported)))
	}
	return EraUnknown, "", fmt.Errorf("jsonrpc: the MCP server speaks none of the revisions this client does (%s, %s): %w", Version2026, Version2025, err)
}

// EraOfDiscover tells the era of a server from its answer to
// server/discover under Version2026: its supportedVersions (err nil: a
// stateless server when it names none), or err, the call's error; reached
// reports that err came from the server (a JSON-RPC error, rpcErr when
// there is one, or an HTTP error status), not from the way to it. An
// UnsupportedProtocolVersionError picks among the revisions it names; a
// refusal of the request's headers or capabilities is an error; any other
// answer (a 4xx without an MCP error, -32601) means no stateless server:
// the session era, after initialize.
func EraOfDiscover(supported []string, err error, reached bool, rpcErr *Error) (Era, string, error) {
	switch {
	case err == nil && len(supported) == 0:
		return EraStateless, Version2026, nil
	case err == nil:
		return EraAmong(supported, nil)
	case !reached:
		return EraUnknown, "", err
	case rpcErr != nil && rpcErr.Code == CodeUnsupportedProtocolVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = codec.UnmarshalResult(rpcErr.Data, &data, false) // members it does not name ignored
		return EraAmong(data.Supported, err)
	case rpcErr != nil && (rpcErr.Code == CodeHeaderMismatch || rpcErr.Code == CodeMissingClientCapability):
		return EraUnknown, "", fmt.Errorf("jsonrpc: the MCP server refused server/discover: %w", err)
	}
	return EraSession, Version2025, nil
}

// ErrToolRejected is returned, before sending, by a stateless tools/call
// of a tool whose inputSchema has an x-mcp-header annotation the revision
// forbids; the root package sets it to its own in init.
var ErrToolRejected = errors.New("jsonrpc: MCP tool rejected")

// ClientState is what an MCP client keeps to write the requests of a
// stateless revision: its _meta members, and the x-mcp-header annotations
// of the tools tools/list described. Its methods may be called
// concurrently.
type ClientState struct {
	Info, Caps json.RawMessage // clientInfo and clientCapabilities, encoded

	mu          sync.Mutex
	toolHeaders map[string][]ParamHeader // x-mcp-header annotations, by tool (from tools/list)
	rejected    map[string]bool          // tools rejected for an invalid x-mcp-header (from tools/list)
	metas       map[string][]byte        // the client's _meta object, by revision (meta)
	headers     map[string]http.Header   // the fixed headers, by revision, method and name (Headers)
}

// NewClientState returns the state of a client named name and version
// that declares caps (nil: {}) and, with tasks, the Tasks extension; caps
// must marshal to a JSON object.
func NewClientState(name, version string, caps any, tasks bool) (*ClientState, error) {
	cs := &ClientState{Caps: json.RawMessage("{}"), metas: map[string][]byte{}}
	cs.Info, _ = jsonv2.Marshal(struct { // a struct: its members always in this order
		Name    string `json:"name"`
		Version string `json:"version"`
	}{name, version})
	if caps != nil {
		b, err := jsonv2.Marshal(caps)
		if err != nil || len(b) == 0 || b[0] != '{' {
			return nil, fmt.Errorf("jsonrpc: WithMCPCapabilities needs a JSON object (%v)", err)
		}
		cs.Caps = b
	}
	if tasks {
		return cs, cs.declareExtension(TasksExtension)
	}
	return cs, nil
}

// meta returns the client's _meta members under revision version (the
// protocol version, clientInfo, clientCapabilities), encoded once.
func (cs *ClientState) meta(version string) []byte {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if b, ok := cs.metas[version]; ok {
		return b
	}
	b, _ := jsonv2.Marshal(map[string]json.RawMessage{MetaProtocolVersion: json.RawMessage(strconv.Quote(version)), MetaClientInfo: cs.Info, MetaClientCapabilities: cs.Caps}, jsonv2.Deterministic(true))
	cs.metas[version] = b
	return b
}

// WithMeta appends to b params (nil: {}) encoded as an object with the
// request's _meta: the client's members put in front, in the same buffer,
// when it has no _meta (the common case, with no decoding), else merged
// into the caller's _meta.
func (cs *ClientState) WithMeta(b []byte, params any, version string) ([]byte, error) {
	meta := cs.meta(version)
	head := len(b) + len(`{"_meta":`) + len(meta)
	p := append(append(b, `{"_meta":`...), meta...)
	p, err := codec.AppendJSON(p, params, nil)
	if err != nil {
		return nil, err
	}
	raw, members, hasMeta := p[head:], 0, false
	if string(raw) != "null" && (raw[0] != '{' || !wire.Valid(raw)) {
		return nil, fmt.Errorf("jsonrpc: MCP %s params must be an object, not %.40s", version, raw)
	}
	wire.Members(raw, func(name, _ []byte) { // none for null
		members++
		hasMeta = hasMeta || string(name) == "_meta"
	})
	switch {
	case members == 0:
		return append(p[:head], '}'), nil
	case !hasMeta:
		p[head] = ','
		return p, nil
	}
	var obj, merged map[string]json.RawMessage // the client's meta (its own encoding) decodes
	if jsonv2.Unmarshal(raw, &obj) != nil || jsonv2.Unmarshal(obj["_meta"], &merged) != nil || jsonv2.Unmarshal(meta, &merged) != nil {
		return nil, errors.New("jsonrpc: params._meta must be an object")
	}
	obj["_meta"], _ = jsonv2.Marshal(merged, jsonv2.Deterministic(true))
	return jsonv2.Marshal(obj, jsonv2.Deterministic(true))
}

// Headers returns the caller's headers (h) with those a stateless request
// carries: the revision, Mcp-Method, Mcp-Name of what it names and, for a
// tools/call, the Mcp-Param-* headers of the arguments the tool's
// inputSchema (from tools/list) marks with x-mcp-header. The result is read
// only: without h and annotations, it is shared by the calls alike.
func (cs *ClientState) Headers(h http.Header, version, method string, params []byte) http.Header {
	nameKey := "name"
	if method == "resources/read" {
		nameKey = "uri"
	}
	var name, args []byte
	wire.Members(params, func(k, v []byte) {
		switch string(k) {
		case nameKey:
			name = v
		case "arguments":
			args = v
		}
	})
	var buf [128]byte
	key := append(append(append(append(buf[:0], version...), 0), method...), name...)
	cs.mu.Lock()
	fixed, ok := cs.headers[string(key)]
	if !ok {
		fixed = fixedHeaders(version, method, name)
		if cs.headers == nil || len(cs.headers) > 1024 {
			cs.headers = map[string]http.Header{}
		}
		cs.headers[string(key)] = fixed
	}
	var annotations []ParamHeader
	if method == "tools/call" && len(name) > 1 && name[0] == '"' {
		annotations = cs.toolHeaders[string(wire.Unquote(name[1:len(name)-1]))]
	}
	cs.mu.Unlock()
	if len(h) == 0 && len(annotations) == 0 {
		return fixed
	}
	out := make(http.Header, len(h)+len(fixed)+len(annotations))
	maps.Copy(out, h) // the values are shared, read only
	maps.Copy(out, fixed)
	for _, a := range annotations {
		if v, ok := ValueAt(args, a.Path); ok {
			if text, ok := HeaderText(v, a.Kind); ok {
				out.Set(ParamPrefix+a.Name, EncodeHeaderValue(text))
			}
		}
	}
	return out
}

// fixedHeaders returns the headers of a stateless request of one method
// and name (the raw JSON value of params.name or params.uri) that no
// argument changes: the revision, Mcp-Method, Mcp-Name.
func fixedHeaders(version, method string, name []byte) http.Header {
	fixed := http.Header{VersionHeader: {version}, MethodHeader: {EncodeHeaderValue(method)}}
	if len(name) > 0 && name[0] == '"' && (method == "tools/call" || method == "prompts/get" || method == "resources/read") {
		fixed[NameHeader] = []string{EncodeHeaderValue(strings.Clone(jsonString(name)))} // kept: not params' memory
	}
	return fixed
}

// LearnTools keeps the x-mcp-header annotations of the tools a tools/list
// result describes, for the Mcp-Param-* headers of their calls, and
// returns the result without the tools whose annotations the revision
// forbids (a client must reject those definitions), and their names.
func (cs *ClientState) LearnTools(result []byte) (out []byte, rejected []string) {
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if jsonv2.Unmarshal(result, &list) != nil {
		return result, nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.toolHeaders == nil || len(cs.toolHeaders) > 4096 {
		cs.toolHeaders = map[string][]ParamHeader{}
	}
	if cs.rejected == nil || len(cs.rejected) > 4096 {
		cs.rejected = map[string]bool{}
	}
	for _, t := range list.Tools {
		a, valid := ParamHeadersOf(t.InputSchema)
		delete(cs.toolHeaders, t.Name)
		delete(cs.rejected, t.Name)
		switch {
		case !valid:
			cs.rejected[t.Name] = true
			rejected = append(rejected, t.Name)
		case a != nil:
			cs.toolHeaders[t.Name] = a
		}
	}
	if len(rejected) == 0 {
		return result, nil
	}
	return withoutTools(result, cs.rejected), rejected
}

// withoutTools returns a tools/list result without the tools named in drop.
func withoutTools(result []byte, drop map[string]bool) []byte {
	var obj map[string]json.RawMessage
	var tools []json.RawMessage
	if jsonv2.Unmarshal(result, &obj) != nil || jsonv2.Unmarshal(obj["tools"], &tools) != nil {
		return result
	}
	kept := tools[:0]
	for _, t := range tools {
		var named struct {
			Name string `json:"name"`
		}
		if jsonv2.Unmarshal(t, &named) != nil || !drop[named.Name] {
			kept = append(kept, t)
		}
	}
	obj["tools"], _ = jsonv2.Marshal(kept)
	out, err := jsonv2.Marshal(obj, jsonv2.Deterministic(true))
	if err != nil {
		return result
	}
	return out
}

// RefuseRejected refuses, before sending, a tools/call of a tool that
// tools/list showed with an invalid x-mcp-header annotation
// (ErrToolRejected).
func (cs *ClientState) RefuseRejected(method string, params []byte) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if method != "tools/call" || len(cs.rejected) == 0 {
		return nil
	}
	if named, _ := ParseParams(params); cs.rejected[named.Name] {
		return fmt.Errorf("%w: tool %q: its inputSchema has an x-mcp-header annotation that MCP 2026-07-28 forbids", ErrToolRejected, named.Name)
	}
	return nil
}

// EraFinder holds the era a client found of its server, found once:
// concurrent first messages wait for one finding, and a failure settles
// nothing (the next message tries again). Its methods may be called
// concurrently.
type EraFinder struct {
	settle sync.Mutex // held while the era is found
	found  atomic.Pointer[eraFound]
}

type eraFound struct {
	era     Era
	version string
}

// Get returns the era found (EraUnknown before) and its revision.
func (f *EraFinder) Get() (Era, string) {
	if e := f.found.Load(); e != nil {
		return e.era, e.version
	}
	return EraUnknown, ""
}

// Find returns the era, found with find while it is unknown.
func (f *EraFinder) Find(find func() (Era, string, error)) (Era, string, error) {
	if era, version := f.Get(); era != EraUnknown {
		return era, version, nil
	}
	f.settle.Lock()
	defer f.settle.Unlock()
	if era, version := f.Get(); era != EraUnknown {
		return era, version, nil
	}
	era, version, err := find()
	if err != nil {
		return EraUnknown, "", err
	}
	f.found.Store(&eraFound{era, version})
	return era, version, nil
}

// InputQuery is one request for input of an InputRequiredResult, as a
// client reads it.
type InputQuery struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// inputRequired is in every InputRequiredResult (a complete result is not
// decoded twice when it lacks it).
var inputRequired = []byte(`"input_required"`)

// InputRequired returns the requests for input and the requestState of a
// result that asks for input (multi round-trip); ok is false for a
// complete result.
func InputRequired(result []byte) (queries map[string]InputQuery, state *string, ok bool) {
	if !bytes.Contains(result, inputRequired) {
		return nil, nil, false // before ir, which escapes: a complete result allocates nothing
	}
	var ir struct {
		ResultType    string                `json:"resultType"`
		InputRequests map[string]InputQuery `json:"inputRequests"`
		RequestState  *string               `json:"requestState"`
	}
	if jsonv2.Unmarshal(result, &ir) != nil || ir.ResultType != "input_required" {
		return nil, nil, false
	}
	return ir.InputRequests, ir.RequestState, true
}

// ErrTooManyInputRounds is the error of a call whose server still asks
// for input after the rounds allowed; the root package sets it to its own
// in init.
var ErrTooManyInputRounds = errors.New("jsonrpc: the server still asks for input after the rounds allowed (WithMaxInputRounds)")

// Rounds makes a call of a stateless revision (call, with params) and,
// while its result asks for input (multi round-trip), answers each request
// for input with answer and makes the call again with the answers and the
// server's requestState, at most rounds times more (then
// ErrTooManyInputRounds). It returns the complete result.
func Rounds(method string, params json.RawMessage, rounds int, call func(params json.RawMessage) (json.RawMessage, error), answer func(method string, params json.RawMessage) (json.RawMessage, error)) (json.RawMessage, error) {
	for round := 0; ; round++ {
		raw, err := call(params)
		if err != nil {
			return nil, err
		}
		queries, state, asked := InputRequired(raw)
		if !asked {
			return raw, nil
		}
		if round == rounds {
			return nil, fmt.Errorf("%w (%d rounds of %s)", ErrTooManyInputRounds, rounds, method)
		}
		answers := make(map[string]json.RawMessage, len(queries))
		for key, q := range queries {
			a, err := answer(q.Method, q.Params)
			if err != nil {
				return nil, fmt.Errorf("jsonrpc: answering the server's %s (input %q of %s): %w", q.Method, key, method, err)
			}
			answers[key] = a
		}
		obj := map[string]json.RawMessage{} // the next round's params
		if err := jsonv2.Unmarshal(params, &obj); err != nil {
			return nil, err
		}
		obj["inputResponses"], _ = jsonv2.Marshal(answers)
		delete(obj, "requestState")
		if state != nil {
			obj["requestState"], _ = jsonv2.Marshal(*state)
		}
		if params, err = jsonv2.Marshal(obj, jsonv2.Deterministic(true)); err != nil {
			return nil, err
		}
	}
}
