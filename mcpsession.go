package jsonrpc

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/streamable"
	"github.com/seedhq/jsonrpc/state"
)

// mcpClients maps a stream transport's connection to the capabilities its
// session-era client declared in initialize (MCPStateless records them,
// MCPClientCapability reads them); a Streamable HTTP session keeps its own
// (streamable.Session.Declared). Weak keys: the table holds nothing alive.
var mcpClients sync.Map // weak.Pointer[Conn] -> json.RawMessage

// mcpSession returns the Streamable HTTP session of the request ctx
// belongs to, or else its connection, whose entry in mcpClients is by
// weak.Make(c); both nil without a session (plain HTTP, Streamable HTTP
// without sessions or standalone stream).
func mcpSession(ctx context.Context) (*streamable.Session, *Conn) {
	if ss, ok := ctx.Value(sessionKey{}).(*streamable.Session); ok {
		return ss, nil
	}
	return nil, connFromContext(ctx)
}

// rememberMCPClient records the capabilities of an initialize request's
// params for the session ctx belongs to.
func rememberMCPClient(ctx context.Context, params json.RawMessage) {
	ss, c := mcpSession(ctx)
	caps := streamable.DeclaredCapabilities(params)
	switch {
	case ss != nil:
		ss.SetCapabilities(caps)
	case c != nil:
		if _, loaded := mcpClients.Swap(weak.Make(c), caps); !loaded {
			runtime.AddCleanup(c, func(k weak.Pointer[Conn]) { mcpClients.Delete(k) }, weak.Make(c))
		}
	}
}

// MCPClientCapability reports whether the MCP client of the request ctx
// belongs to declared capability name (e.g. "elicitation") as an object, in
// the request's _meta or its session's initialize (recorded by MCPStateless
// or a SessionStore); known is false when neither tells.
func MCPClientCapability(ctx context.Context, name string) (has, known bool) {
	if m := MCPMetaFromContext(ctx); m != nil {
		return m.HasCapability(name), true
	}
	var caps json.RawMessage
	switch ss, c := mcpSession(ctx); {
	case ss != nil:
		caps = ss.Declared().ClientCapabilities
	case c != nil:
		v, _ := mcpClients.Load(weak.Make(c))
		caps, _ = v.(json.RawMessage)
	}
	if caps == nil {
		return false, false
	}
	return mcp.HasCapability(caps, name), true
}

// MCPSessionValues returns the Values of the Streamable HTTP session of the
// request ctx belongs to, kept in its SessionStore; nil without one.
func MCPSessionValues(ctx context.Context) state.SessionValues {
	if ss, _ := ctx.Value(sessionKey{}).(*streamable.Session); ss.Shared() {
		return ss
	}
	return nil
}

// missingMCPCapability is -32021 when the request's client is known not to
// have declared the capability a request for input of method needs.
func missingMCPCapability(ctx context.Context, method string) *Error {
	return (*Error)(mcp.MissingCapability(method, func(name string) bool {
		has, known := MCPClientCapability(ctx, name)
		return has || !known
	}))
}
