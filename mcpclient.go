package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// The MCP client of Streamable HTTP (WithMCPVersion): it finds the era the
// server speaks and speaks it. Under a stateless revision (2026-07-28 on)
// every request carries the version, the client's info and capabilities in
// params._meta and the headers that mirror it; a result asking for input
// (multi round-trip) is answered by the connection's handler and the
// request sent again. Under 2025-11-25 the client opens a session with
// initialize, and the server's requests reach the same handler on it.

// MCPAuto is the WithMCPVersion value that finds the server's era: the
// newest stateless revision when the server speaks it, else 2025-11-25
// after an initialize handshake.
const MCPAuto = "auto"

// MCPVersion2025 is the last revision of MCP's session era.
const MCPVersion2025 = "2025-11-25"

// DefaultMaxInputRounds bounds how many times one call is sent again with
// the input a server asked for (WithMaxInputRounds).
const DefaultMaxInputRounds = 8

// ErrTooManyInputRounds is the error of a call whose server still asks
// for input after the rounds WithMaxInputRounds allows.
var ErrTooManyInputRounds = errors.New("jsonrpc: the server still asks for input after the rounds allowed (WithMaxInputRounds)")

// ErrToolRejected is returned, before sending, by a 2026-07-28 tools/call
// of a tool whose inputSchema (in tools/list) has an x-mcp-header
// annotation the revision forbids; the client leaves such a tool out of
// the tools/list results it returns, as the revision requires.
var ErrToolRejected = errors.New("jsonrpc: MCP tool rejected")

// WithMCPVersion makes a Streamable HTTP client (DialStreamableHTTP,
// WithStreamableHTTP) an MCP client of the revision version: MCPAuto, a
// stateless revision (MCPVersion2026: no session, per-request _meta and
// headers) or a session-era one (MCPVersion2025: initialize first). See
// docs/mcp.md. Other transports ignore it.
//
// MCPAuto asks server/discover under MCPVersion2026 before the first
// message: a result, or an UnsupportedProtocolVersionError naming a
// stateless revision the client speaks, settles the stateless era; an
// UnsupportedProtocolVersionError naming only session-era revisions, any
// other error (a 400 without an MCP error, -32601) falls back to
// initialize, as the revision's backward-compatibility rules ask. A first
// call of "initialize" chooses the session era without the probe (the
// caller handshakes itself). A server that refuses initialize too is no
// MCP server: messages then go as they are. The era found holds for the
// connection's life; Conn.MCPVersion names it.
func WithMCPVersion(version string) DialOption {
	return func(c *dialConfig) { c.mcpVersion = version }
}

// WithMCPClientInfo sets the clientInfo an MCP client sends (in _meta or
// initialize; default "seedhq-jsonrpc" with an empty version).
func WithMCPClientInfo(name, version string) DialOption {
	return func(c *dialConfig) { c.mcpInfo = [2]string{name, version} }
}

// WithMCPCapabilities sets the capabilities an MCP client declares (in
// _meta or initialize; default {}), e.g. {"elicitation": {}} when its
// handler (WithHandler) answers elicitation/create. caps must marshal to
// a JSON object.
func WithMCPCapabilities(caps any) DialOption { return func(c *dialConfig) { c.mcpCaps = caps } }

// WithMaxInputRounds bounds how many times an MCP client sends one call
// again with the input the server asked for (default
// DefaultMaxInputRounds); past it the call fails with
// ErrTooManyInputRounds.
func WithMaxInputRounds(n int) DialOption { return func(c *dialConfig) { c.maxInputRounds = n } }

// MCPVersion returns the MCP revision the connection speaks: "" before the
// era is found and on a connection that is no MCP client (WithMCPVersion),
// or whose server refused both eras.
func (c *Conn) MCPVersion() string {
	ch, ok := c.ch.(*streamableChannel)
	if !ok || ch.mcp == nil {
		return ""
	}
	ch.mcp.mu.Lock()
	defer ch.mcp.mu.Unlock()
	return ch.mcp.version
}

// isStatelessVersion reports whether an MCP revision is of the stateless
// era: revisions are dates, and the era begins with MCPVersion2026.
func isStatelessVersion(v string) bool {
	return len(v) == len(MCPVersion2026) && v[0] >= '0' && v[0] <= '9' && v >= MCPVersion2026
}

// mcpEra is what the client found of its server.
type mcpEra int

const (
	eraUnknown   mcpEra = iota
	eraStateless        // per-request _meta and headers
	eraSession          // initialize done, or done by the caller
	eraNone             // no MCP server: messages go as they are
)

// mcpClient is the Invoker of an MCP client, below its interceptors.
type mcpClient struct {
	next   Invoker // the connection's own sending
	conn   *Conn
	ch     *streamableChannel
	want   string // MCPAuto or a revision
	info   json.RawMessage
	caps   json.RawMessage
	rounds int

	settle      sync.Mutex // held while the era is found
	mu          sync.Mutex
	era         mcpEra
	version     string
	toolHeaders map[string][]paramHeader // x-mcp-header annotations, by tool (from tools/list)
	rejected    map[string]bool          // tools rejected for an invalid x-mcp-header (from tools/list)
	metas       map[string][]byte        // the client's _meta object, by revision (meta)
}

// newMCPClient returns the MCP client of conn, or an error for options
// that cannot be sent.
func newMCPClient(conn *Conn, ch *streamableChannel, cfg *dialConfig) (*mcpClient, error) {
	m := &mcpClient{next: connDirect{conn}, conn: conn, ch: ch, want: cfg.mcpVersion, rounds: cfg.maxInputRounds}
	if m.rounds <= 0 {
		m.rounds = DefaultMaxInputRounds
	}
	name := cfg.mcpInfo[0]
	if name == "" {
		name = "seedhq-jsonrpc"
	}
	m.info, _ = jsonv2.Marshal(struct { // a struct: its members always in this order
		Name    string `json:"name"`
		Version string `json:"version"`
	}{name, cfg.mcpInfo[1]})
	m.caps = json.RawMessage("{}")
	if cfg.mcpCaps != nil {
		caps, err := jsonv2.Marshal(cfg.mcpCaps)
		if err != nil || len(caps) == 0 || caps[0] != '{' {
			return nil, fmt.Errorf("jsonrpc: WithMCPCapabilities needs a JSON object (%v)", err)
		}
		m.caps = caps
	}
	if m.want != MCPAuto && m.want != "" {
		if err := checkHeaderValue(m.want); err != nil {
			return nil, fmt.Errorf("jsonrpc: WithMCPVersion %q: %w", m.want, err)
		}
	}
	return m, nil
}

// checkHeaderValue refuses what cannot be an MCP-Protocol-Version value.
func checkHeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] > '~' {
			return errors.New("not a protocol version")
		}
	}
	return nil
}

func (m *mcpClient) Call(ctx context.Context, method string, params, result any) error {
	era, version, err := m.eraFor(ctx, method)
	if err != nil {
		return err
	}
	if era != eraStateless {
		return m.next.Call(ctx, method, params, result)
	}
	return m.statelessCall(ctx, version, method, params, result)
}

func (m *mcpClient) Notify(ctx context.Context, method string, params any) error {
	era, version, err := m.eraFor(ctx, method)
	if err != nil {
		return err
	}
	if era != eraStateless {
		return m.next.Notify(ctx, method, params)
	}
	p, hctx, err := m.stateless(ctx, version, method, params)
	if err != nil {
		return err
	}
	return m.next.Notify(hctx, method, p)
}

func (m *mcpClient) Batch(ctx context.Context, b *Batch) error {
	era, version, err := m.eraFor(ctx, "")
	if err != nil {
		return err
	}
	if era == eraStateless {
		return errors.New("jsonrpc: MCP " + version + " has no batches: send each message on its own")
	}
	return m.next.Batch(ctx, b)
}

// eraFor returns the era of the server, finding it first when needed.
// Concurrent first messages wait for one finding; a failure to reach the
// server settles nothing (the next message tries again).
func (m *mcpClient) eraFor(ctx context.Context, method string) (mcpEra, string, error) {
	m.mu.Lock()
	era, version := m.era, m.version
	m.mu.Unlock()
	if era != eraUnknown {
		return era, version, nil
	}
	m.settle.Lock()
	defer m.settle.Unlock()
	m.mu.Lock()
	era, version = m.era, m.version
	m.mu.Unlock()
	if era != eraUnknown {
		return era, version, nil
	}
	switch {
	case method == "initialize":
		era, version = eraSession, "" // the caller's handshake; the channel keeps its version
	case isStatelessVersion(m.want):
		era, version = eraStateless, m.want
	case m.want == MCPAuto:
		var err error
		if era, version, err = m.probe(ctx); err != nil {
			return eraUnknown, "", err
		}
	default:
		era, version = eraSession, m.want
	}
	if era == eraSession && method != "initialize" {
		var err error
		if era, version, err = m.initialize(ctx, version); err != nil {
			return eraUnknown, "", err
		}
	}
	m.mu.Lock()
	m.era, m.version = era, version
	m.mu.Unlock()
	m.ch.holdGET(era == eraStateless)
	m.ch.srv.logger().Debug("jsonrpc: MCP era found", "version", version, "stateless", era == eraStateless)
	return era, version, nil
}

// probe asks server/discover under MCPVersion2026 and tells the era from
// the answer.
func (m *mcpClient) probe(ctx context.Context) (mcpEra, string, error) {
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	err := m.statelessCall(ctx, MCPVersion2026, "server/discover", nil, &d)
	if err == nil {
		if len(d.SupportedVersions) == 0 {
			return eraStateless, MCPVersion2026, nil
		}
		return eraAmong(d.SupportedVersions, err)
	}
	var e *Error
	var he *HTTPError
	switch {
	case !errors.As(err, &e) && !errors.As(err, &he):
		return eraUnknown, "", err // the server was not reached
	case e != nil && e.Code == CodeUnsupportedProtocolVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = e.DecodeData(&data)
		return eraAmong(data.Supported, err)
	case e != nil && (e.Code == CodeHeaderMismatch || e.Code == CodeMissingClientCapability):
		return eraUnknown, "", fmt.Errorf("jsonrpc: the MCP server refused server/discover: %w", err)
	}
	return eraSession, MCPVersion2025, nil // a 4xx without an MCP error, or -32601: no stateless server
}

// eraAmong picks the era of the revisions a server names (in its
// DiscoverResult, or in the UnsupportedProtocolVersionError err): the
// stateless one when MCPVersion2026 is among them, else the session era
// when one of its revisions is.
func eraAmong(supported []string, err error) (mcpEra, string, error) {
	switch {
	case slices.Contains(supported, MCPVersion2026):
		return eraStateless, MCPVersion2026, nil
	case slices.ContainsFunc(supported, func(v string) bool { return !isStatelessVersion(v) }):
		return eraSession, MCPVersion2025, nil
	}
	if err == nil {
		err = errors.New("server/discover: supportedVersions " + strconv.Quote(fmt.Sprint(supported)))
	}
	return eraUnknown, "", fmt.Errorf("jsonrpc: the MCP server speaks none of the revisions this client does (%s, %s): %w", MCPVersion2026, MCPVersion2025, err)
}

// initialize opens a session of revision version; a server that refuses
// it is no MCP server (eraNone).
func (m *mcpClient) initialize(ctx context.Context, version string) (mcpEra, string, error) {
	params := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}{version, m.caps, m.info}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	err := m.next.Call(ctx, "initialize", params, &res)
	var e *Error
	var he *HTTPError
	switch {
	case err == nil:
	case errors.As(err, &e) || errors.As(err, &he):
		m.ch.srv.logger().Debug("jsonrpc: the server refused initialize: no MCP server", "error", err)
		return eraNone, "", nil
	default:
		return eraUnknown, "", err
	}
	if err := m.next.Notify(ctx, "notifications/initialized", nil); err != nil {
		return eraUnknown, "", err
	}
	return eraSession, res.ProtocolVersion, nil
}

// statelessCall makes a call of a stateless revision. A tools/call
// refused with -32020 (its Mcp-Param-* headers missing or different: the
// tool was not listed yet, or its inputSchema changed) is sent again once
// after tools/list, as the revision advises.
func (m *mcpClient) statelessCall(ctx context.Context, version, method string, params, result any) error {
	err := m.statelessRounds(ctx, version, method, params, result)
	var e *Error
	if method != "tools/call" || !errors.As(err, &e) || e.Code != CodeHeaderMismatch {
		return err
	}
	if m.statelessRounds(ctx, version, "tools/list", nil, nil) != nil {
		return err
	}
	return m.statelessRounds(ctx, version, method, params, result)
}

// statelessRounds makes a call of a stateless revision, answering the
// server's requests for input with the connection's handler and sending
// the call again with them, as many rounds as allowed.
func (m *mcpClient) statelessRounds(ctx context.Context, version, method string, params, result any) error {
	p, hctx, err := m.stateless(ctx, version, method, params)
	if err != nil {
		return err
	}
	if err := m.refuseRejected(method, p); err != nil {
		return err
	}
	for round := 0; ; round++ {
		var raw json.RawMessage
		if err := m.next.Call(hctx, method, p, &raw); err != nil {
			return err
		}
		var ir struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			} `json:"inputRequests"`
			RequestState *string `json:"requestState"`
		}
		if !bytes.Contains(raw, inputRequired) || jsonv2.Unmarshal(raw, &ir) != nil || ir.ResultType != "input_required" {
			if method == "tools/list" {
				raw = m.learnTools(raw)
			}
			return decodeResult(method, raw, result, m.conn.strictResults)
		}
		if round == m.rounds {
			return fmt.Errorf("%w (%d rounds of %s)", ErrTooManyInputRounds, m.rounds, method)
		}
		answers := make(map[string]json.RawMessage, len(ir.InputRequests))
		for key, q := range ir.InputRequests {
			a, err := m.answer(ctx, q.Method, q.Params)
			if err != nil {
				return fmt.Errorf("jsonrpc: answering the server's %s (input %q of %s): %w", q.Method, key, method, err)
			}
			answers[key] = a
		}
		if p, err = withInput(p, answers, ir.RequestState); err != nil {
			return err
		}
	}
}

// inputRequired is in every InputRequiredResult (a complete result is not
// decoded twice when it lacks it).
var inputRequired = []byte(`"input_required"`)

// answer serves a server's request for input with the connection's
// handler, as under the session era it would serve the request itself.
func (m *mcpClient) answer(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	v, _, e := m.conn.srv.call(ctx, &Request{Method: method, Params: params}, []byte(method))
	if e != nil {
		return nil, e
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return wire.Marshal(v)
}

// stateless returns params with the request's _meta of revision version
// (the caller's _meta members kept) and a context carrying the headers
// that mirror them.
func (m *mcpClient) stateless(ctx context.Context, version, method string, params any) (json.RawMessage, context.Context, error) {
	raw := []byte("{}")
	if params != nil {
		var err error
		if raw, err = wire.Marshal(params); err != nil {
			return nil, ctx, err
		}
		if string(raw) == "null" {
			raw = []byte("{}")
		}
	}
	p, err := m.withMeta(raw, version)
	if err != nil {
		return nil, ctx, err
	}
	return p, ContextWithHeader(ctx, m.headers(headerFromContext(ctx), version, method, p)), nil
}

// meta returns the client's _meta members under revision version (the
// protocol version, clientInfo, clientCapabilities), encoded once.
func (m *mcpClient) meta(version string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.metas[version]; ok {
		return b
	}
	b, _ := jsonv2.Marshal(map[string]json.RawMessage{MetaProtocolVersion: json.RawMessage(strconv.Quote(version)), MetaClientInfo: m.info, MetaClientCapabilities: m.caps}, jsonv2.Deterministic(true))
	if m.metas == nil {
		m.metas = map[string][]byte{}
	}
	m.metas[version] = b
	return b
}

// withMeta returns the params object raw with the request's _meta: the
// client's members put in front when raw has no _meta (the common case,
// with no decoding), else merged into the caller's _meta.
func (m *mcpClient) withMeta(raw []byte, version string) ([]byte, error) {
	if len(raw) == 0 || raw[0] != '{' || !wire.Valid(raw) {
		return nil, errors.New("jsonrpc: MCP " + version + " params must be an object, not " + truncate(string(raw), 40))
	}
	members := 0
	hasMeta := false
	wire.Members(raw, func(name, _ []byte) {
		members++
		hasMeta = hasMeta || string(name) == "_meta"
	})
	if !hasMeta {
		meta := m.meta(version)
		p := make([]byte, 0, len(raw)+len(meta)+10)
		p = append(append(p, `{"_meta":`...), meta...)
		if members > 0 {
			p = append(p, ',')
		}
		return append(p, raw[1:]...), nil
	}
	obj := map[string]json.RawMessage{}
	meta := map[string]json.RawMessage{}
	if jsonv2.Unmarshal(raw, &obj) != nil || jsonv2.Unmarshal(obj["_meta"], &meta) != nil {
		return nil, errors.New("jsonrpc: params._meta must be an object")
	}
	if jsonv2.Unmarshal(m.meta(version), &meta) != nil {
		return nil, errors.New("jsonrpc: the client's _meta does not decode")
	}
	obj["_meta"], _ = jsonv2.Marshal(meta, jsonv2.Deterministic(true))
	return jsonv2.Marshal(obj, jsonv2.Deterministic(true))
}

// headers returns the caller's headers (h) with those a stateless request
// carries: the revision, Mcp-Method, Mcp-Name of what it names and, for a
// tools/call, the Mcp-Param-* headers of the arguments the tool's
// inputSchema (from tools/list) marks with x-mcp-header.
func (m *mcpClient) headers(h http.Header, version, method string, params []byte) http.Header {
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(versionHeader, version)
	h.Set(mcpMethodHeader, EncodeMCPHeaderValue(method))
	var named struct {
		Name      *string         `json:"name"`
		URI       *string         `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = jsonv2.Unmarshal(params, &named)
	switch {
	case (method == "tools/call" || method == "prompts/get") && named.Name != nil:
		h.Set(mcpNameHeader, EncodeMCPHeaderValue(*named.Name))
	case method == "resources/read" && named.URI != nil:
		h.Set(mcpNameHeader, EncodeMCPHeaderValue(*named.URI))
	}
	if method != "tools/call" || named.Name == nil {
		return h
	}
	m.mu.Lock()
	annotations := m.toolHeaders[*named.Name]
	m.mu.Unlock()
	for _, a := range annotations {
		if v, ok := valueAt(named.Arguments, a.path); ok {
			if text, ok := headerText(v, a.kind); ok {
				h.Set(mcpParamPrefix+a.name, EncodeMCPHeaderValue(text))
			}
		}
	}
	return h
}

// learnTools keeps the x-mcp-header annotations of the tools a tools/list
// result describes, for the Mcp-Param-* headers of their calls, and
// returns the result without the tools whose annotations the revision
// forbids: a client must reject those definitions.
func (m *mcpClient) learnTools(result []byte) []byte {
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if jsonv2.Unmarshal(result, &list) != nil {
		return result
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.toolHeaders == nil || len(m.toolHeaders) > 4096 {
		m.toolHeaders = map[string][]paramHeader{}
	}
	if m.rejected == nil || len(m.rejected) > 4096 {
		m.rejected = map[string]bool{}
	}
	var rejected []string
	for _, t := range list.Tools {
		a, valid := paramHeadersOf(t.InputSchema)
		delete(m.toolHeaders, t.Name)
		delete(m.rejected, t.Name)
		switch {
		case !valid:
			m.rejected[t.Name] = true
			rejected = append(rejected, t.Name)
		case a != nil:
			m.toolHeaders[t.Name] = a
		}
	}
	if len(rejected) == 0 {
		return result
	}
	m.ch.srv.logger().Warn("jsonrpc: MCP tools left out of tools/list: invalid x-mcp-header annotation", "tools", rejected)
	return withoutTools(result, m.rejected)
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

// refuseRejected refuses, before sending, a tools/call of a tool that
// tools/list showed with an invalid x-mcp-header annotation.
func (m *mcpClient) refuseRejected(method string, params []byte) error {
	if method != "tools/call" {
		return nil
	}
	var named struct {
		Name string `json:"name"`
	}
	_ = jsonv2.Unmarshal(params, &named)
	m.mu.Lock()
	rejected := m.rejected[named.Name]
	m.mu.Unlock()
	if rejected {
		return fmt.Errorf("%w: tool %q: its inputSchema has an x-mcp-header annotation that MCP 2026-07-28 forbids", ErrToolRejected, named.Name)
	}
	return nil
}

// withInput returns params with the client's answers and the server's
// requestState, for the call's next round.
func withInput(params json.RawMessage, answers map[string]json.RawMessage, state *string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if err := jsonv2.Unmarshal(params, &obj); err != nil {
		return nil, err
	}
	obj["inputResponses"], _ = jsonv2.Marshal(answers)
	delete(obj, "requestState")
	if state != nil {
		obj["requestState"], _ = jsonv2.Marshal(*state)
	}
	return jsonv2.Marshal(obj, jsonv2.Deterministic(true))
}
