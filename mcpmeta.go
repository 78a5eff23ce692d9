package jsonrpc

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
)

// MCP's stateless revision (2026-07-28 on): no initialize and no session;
// each request's params._meta names its revision and the client's
// capabilities. A server can serve both eras: see
// StreamableHTTPOptions.StatelessVersions (HTTP) and MCPStateless (any transport).

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
	Raw                json.RawMessage // the whole _meta object (progressToken, traceparent, …); read only

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
	return mcp.HasCapability(m.ClientCapabilities, name)
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

// metaContext holds, with its context in one allocation, a request's
// MCPMeta (once it has a ProtocolVersion) and, for a Streamable HTTP POST,
// its peer (once pi.srv is set) and, while it serves at once, the POST
// whose connection ConnFromContext opens (open).
type metaContext struct {
	context.Context
	pi   peerInfo
	meta MCPMeta

	mu   sync.Mutex
	post *postSink // the POST serving at once (nil: none, or it is answered)
}

func (c *metaContext) Value(key any) any {
	switch {
	case key == (mcpMetaKey{}) && c.meta.ProtocolVersion != "":
		return &c.meta
	case key == (peerKey{}) && c.pi.srv != nil:
		return &c.pi
	case key == (connKey{}) && c.pi.srv != nil:
		return c
	}
	return c.Context.Value(key)
}

// detached is a metaContext without its cancellation and deadline (WithoutCancel's, unallocated).
type detached struct{ *metaContext }

func (detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (detached) Done() <-chan struct{}       { return nil }
func (detached) Err() error                  { return nil }

func (c *metaContext) setMeta(m *mcp.Meta) *metaContext {
	c.meta = MCPMeta{ProtocolVersion: m.ProtocolVersion, ClientInfo: m.ClientInfo, ClientCapabilities: m.ClientCapabilities, LogLevel: m.LogLevel,
		Raw: m.Raw, InputResponses: m.InputResponses, RequestState: m.RequestState, Method: m.Method, target: m.Target, arguments: m.Arguments}
	return c
}

// MCPStateless returns a Server middleware that serves MCP's stateless
// revisions on every transport: a request whose params._meta names a
// protocol version is checked (one of versions, else -32022; clientCapabilities
// present, else -32602), its handler finds the _meta with MCPMetaFromContext.
// Other requests pass; an initialize's capabilities are kept for its session
// (MCPClientCapability). Streamable HTTP with StatelessVersions checks its own.
func MCPStateless(versions ...string) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if MCPMetaFromContext(ctx) != nil {
				return next.ServeRPC(ctx, req)
			}
			if req.Method == "initialize" {
				rememberMCPClient(ctx, req.Params)
			}
			p, ok := mcp.ParseParams(req.Params)
			m, present := p.RequestMeta(req.Method, false)
			if !ok || !present {
				return next.ServeRPC(ctx, req)
			}
			if e := m.Check(versions, nil); e != nil {
				return nil, (*Error)(e)
			}
			return next.ServeRPC((&metaContext{Context: ctx}).setMeta(&m), req)
		})
	}
}
