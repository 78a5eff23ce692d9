package jsonrpc

import (
	"context"
	"encoding/json"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
)

// MCP's stateless revision (2026-07-28 on): no initialize handshake and no
// session; every request names its protocol version and the client's
// capabilities in params._meta, and the server serves it on its own. A
// server can serve both eras: a request whose _meta names a stateless
// revision is served statelessly, the rest as before (initialize, then the
// session). See StreamableHTTPOptions.StatelessVersions (HTTP, with its
// header rules) and MCPStateless (every transport).

// Error codes of MCP's stateless revision (its -32020 to -32099 range).
const (
	// CodeHeaderMismatch: the HTTP headers (MCP-Protocol-Version,
	// Mcp-Method, Mcp-Name) are missing or do not match the body.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability the
	// client did not declare (data: {"requiredCapabilities": {...}}).
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the server does not speak the
	// requested revision (data: {"supported": [...], "requested": "..."}).
	CodeUnsupportedProtocolVersion = -32022
)

// MCPVersion2026 is the first stateless revision of MCP.
const MCPVersion2026 = "2026-07-28"

// Keys of MCP's per-request _meta.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// MCPMeta is the _meta of a request of MCP's stateless revision: what
// the request says of its client, since no session remembers it.
type MCPMeta struct {
	ProtocolVersion    string          // the revision the request speaks
	ClientInfo         json.RawMessage // {"name","version"}, nil when absent
	ClientCapabilities json.RawMessage // the client's capabilities (an object)
	LogLevel           string          // the least severe log level wanted; "" for no logs
	Raw                json.RawMessage // the whole _meta object (progressToken, traceparent, …)

	// Of a request sent again with the input a server asked for (multi
	// round-trip, see InputRounds): the client's answers, by key, and the
	// requestState the server gave, as the client sent them (unverified).
	InputResponses map[string]json.RawMessage
	RequestState   string

	Method    string // the request's method
	target    string // params.name or params.uri
	arguments []byte // params.arguments, compacted
}

// HasCapability reports whether the client declared capability name
// (e.g. "elicitation", "sampling") as an object in its capabilities.
func (m *MCPMeta) HasCapability(name string) bool {
	var caps map[string]json.RawMessage
	if jsonv2.Unmarshal(m.ClientCapabilities, &caps) != nil {
		return false
	}
	v, ok := caps[name]
	return ok && len(v) > 0 && v[0] == '{'
}

type mcpMetaKey struct{}

// MCPMetaFromContext returns the _meta of the MCP request ctx belongs to
// when the request speaks a stateless revision (2026-07-28 on), nil when
// it is served under the session era (initialize first) or is no MCP
// request. A handler serving both eras branches on it.
func MCPMetaFromContext(ctx context.Context) *MCPMeta {
	m, _ := ctx.Value(mcpMetaKey{}).(*MCPMeta)
	return m
}

// mcpParams is what the transport reads of a request's params: the _meta
// and the fields mirrored in HTTP headers.
type mcpParams struct {
	Name           *string                    `json:"name"`
	URI            *string                    `json:"uri"`
	Meta           map[string]json.RawMessage `json:"_meta"`
	Arguments      json.RawMessage            `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   string                     `json:"requestState"`
}

// parseMCPParams reads params; ok is false when they are not an object.
func parseMCPParams(params []byte) (p mcpParams, ok bool) {
	if len(params) == 0 {
		return p, true
	}
	err := jsonv2.Unmarshal(params, &p)
	return p, err == nil
}

// meta returns the request's MCP _meta; present is false when _meta does
// not name a protocol version (a session-era request).
func (p *mcpParams) meta(method string) (m *MCPMeta, present bool) {
	raw, ok := p.Meta[MetaProtocolVersion]
	if !ok {
		return nil, false
	}
	m = &MCPMeta{ClientInfo: p.Meta[MetaClientInfo], ClientCapabilities: p.Meta[MetaClientCapabilities],
		InputResponses: p.InputResponses, RequestState: p.RequestState,
		Method: method, target: deref(p.Name) + deref(p.URI), arguments: compactJSON(p.Arguments)}
	_ = jsonv2.Unmarshal(raw, &m.ProtocolVersion)
	if lv, ok := p.Meta[MetaLogLevel]; ok {
		_ = jsonv2.Unmarshal(lv, &m.LogLevel)
	}
	m.Raw, _ = jsonv2.Marshal(p.Meta)
	return m, true
}

// check validates a stateless request's _meta: a revision the server
// speaks (-32022) and the required fields (-32602).
func (m *MCPMeta) check(supported []string, also []string) *Error {
	if m.ProtocolVersion == "" {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaProtocolVersion + " must be a protocol version"}
	}
	if !slices.Contains(supported, m.ProtocolVersion) {
		return unsupportedVersion(m.ProtocolVersion, supported, also)
	}
	if len(m.ClientCapabilities) == 0 || m.ClientCapabilities[0] != '{' {
		return &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaClientCapabilities + " is required (an object)"}
	}
	return nil
}

// unsupportedVersion is MCP's UnsupportedProtocolVersionError: the
// supported revisions are the stateless ones, then the session era's.
func unsupportedVersion(requested string, supported, also []string) *Error {
	all := append(slices.Clone(supported), also...)
	return (&Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version"}).WithData(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{all, requested})
}

// MCPStateless returns a Server middleware (Server.Middleware) that serves
// MCP's stateless revisions on every transport (stdio, sockets, WebSocket):
// a request whose params._meta names a protocol version is checked (a
// revision among versions, else -32022 with the supported and requested
// ones; clientCapabilities present, else -32602) and its handler finds the
// _meta with MCPMetaFromContext. Other requests (initialize, the session
// era) pass as they are. Streamable HTTP with StatelessVersions does these
// checks itself (with its header rules and HTTP statuses); there the
// middleware lets its requests through.
func MCPStateless(versions ...string) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if MCPMetaFromContext(ctx) != nil {
				return next.ServeRPC(ctx, req)
			}
			p, ok := parseMCPParams(req.Params)
			if !ok {
				return next.ServeRPC(ctx, req)
			}
			m, present := p.meta(req.Method)
			if !present {
				return next.ServeRPC(ctx, req)
			}
			if e := m.check(versions, nil); e != nil {
				return nil, e
			}
			return next.ServeRPC(context.WithValue(ctx, mcpMetaKey{}, m), req)
		})
	}
}
