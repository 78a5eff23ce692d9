package jsonrpc

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/streamable"
)

// mcpClients maps a session (a Streamable HTTP session, or the connection
// of a stream transport) to the capabilities its session-era client
// declared in initialize (MCPStateless records them; InputRounds.Ask and
// MCPClientCapability read them), so the server asks only what they cover.
// Keys are weak pointers: the table holds nothing alive.
var mcpClients sync.Map // weak.Pointer[streamable.Session] | weak.Pointer[Conn] -> json.RawMessage

// mcpSessionKey names the session of the request ctx belongs to, with the
// value that keeps it alive (for the cleanup); nil without a session
// (plain HTTP, Streamable HTTP without sessions or standalone stream).
func mcpSessionKey(ctx context.Context) (key any, owner any) {
	if ss, ok := ctx.Value(sessionKey{}).(*streamable.Session); ok {
		return weak.Make(ss), ss
	}
	if c := connFromContext(ctx); c != nil && !c.callScoped() {
		return weak.Make(c), c
	}
	return nil, nil
}

// rememberMCPClient records the capabilities of an initialize request's
// params for the session ctx belongs to.
func rememberMCPClient(ctx context.Context, params json.RawMessage) {
	key, owner := mcpSessionKey(ctx)
	if key == nil {
		return
	}
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	caps := p.Capabilities
	if len(caps) == 0 || caps[0] != '{' {
		caps = json.RawMessage(`{}`)
	}
	if _, loaded := mcpClients.Swap(key, caps); !loaded {
		switch o := owner.(type) {
		case *streamable.Session:
			runtime.AddCleanup(o, func(k any) { mcpClients.Delete(k) }, key)
		case *Conn:
			runtime.AddCleanup(o, func(k any) { mcpClients.Delete(k) }, key)
		}
	}
}

// MCPClientCapability reports whether the MCP client of the request ctx
// belongs to declared capability name (e.g. "elicitation", "sampling",
// "roots") as an object: from the request's _meta under a stateless
// revision, from its session's initialize request under the session era
// (recorded by MCPStateless). known is false when nothing tells: no
// _meta, and no initialize seen on this session.
func MCPClientCapability(ctx context.Context, name string) (has, known bool) {
	if m := MCPMetaFromContext(ctx); m != nil {
		return m.HasCapability(name), true
	}
	key, _ := mcpSessionKey(ctx)
	if key == nil {
		return false, false
	}
	v, ok := mcpClients.Load(key)
	if !ok {
		return false, false
	}
	return mcp.HasCapability(v.(json.RawMessage), name), true
}

// missingMCPCapability is -32021 when the client of the request ctx
// belongs to is known not to have declared the capability a request for
// input of method needs; nil otherwise.
func missingMCPCapability(ctx context.Context, method string) *Error {
	return mcpError(mcp.MissingCapability(method, func(name string) bool {
		has, known := MCPClientCapability(ctx, name)
		return has || !known
	}))
}
