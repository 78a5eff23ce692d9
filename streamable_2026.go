package jsonrpc

import (
	"bytes"
	"cmp"
	"net/http"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Streamable HTTP under MCP's stateless revision (2026-07-28): each POST
// carries one message and the headers that mirror it, and is served on its
// own by any instance (no session, no GET stream, nothing resumes; closing
// the event stream cancels the call), by postSink with these checks.

// checkStateless applies the stateless revision's rules to the POST's
// message: one request or notification whose headers match its body.
func (p *postSink) checkStateless(data []byte, m *wire.Message) bool {
	if m.Batch {
		p.fail(http.StatusBadRequest, appendResponse(nil, ID{}, nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: MCP " + p.r.Header.Get(mcp.VersionHeader) + " takes one JSON-RPC message per POST, not a batch"}))
		return false
	}
	e := &m.Elems[0]
	if e.Kind != wire.KindRequest {
		msg := "invalid request: a POST carries a request or a notification"
		if e.Err != nil { // an invalid request says why
			msg = e.Err.Msg
		}
		p.fail(http.StatusBadRequest, appendResponse(nil, idOf(e, data), nil, &Error{Code: CodeInvalidRequest, Message: msg}))
		return false
	}
	meta, refused := p.h.rules.Check(p.r.Header, mcp.MethodString(e.MethodName(data)), paramsOf(data, e), !e.ID.Present(), p.lent)
	if refused != nil {
		p.fail(cmp.Or(mcp.HTTPStatus(refused.Code), http.StatusBadRequest), appendResponse(nil, idOf(e, data), nil, (*Error)(refused)))
		return false
	}
	p.ctx.setMeta(&meta)
	return true
}

// metaVersionKey is in the body of every stateless request unless written
// with escapes (\/, \uXXXX): a body with either is decoded too.
var metaVersionKey, escapedSolidus, escapedUnicode = []byte(mcp.MetaProtocolVersion), []byte(`\/`), []byte(`\u`)

// checkMetaVersion refuses (400, -32020), on a server of a stateless revision,
// a POST whose request's _meta names a protocol version its header does not
// match (a session-era-only server leaves _meta alone).
func (p *postSink) checkMetaVersion(data []byte, m *wire.Message) bool {
	if len(p.h.rules.Versions) == 0 ||
		!bytes.Contains(data, metaVersionKey) && !bytes.Contains(data, escapedSolidus) && !bytes.Contains(data, escapedUnicode) {
		return true
	}
	for i := range m.Elems {
		e := &m.Elems[i]
		if refused := mcp.VersionMatches(p.r.Header, paramsOf(data, e)); refused != nil && e.Kind == wire.KindRequest {
			p.fail(http.StatusBadRequest, appendResponse(nil, idOf(e, data), nil, (*Error)(refused)))
			return false
		}
	}
	return true
}

// EncodeMCPHeaderValue returns s as an MCP request header value (Mcp-Name,
// Mcp-Param-*): as it is when it is plain visible ASCII without leading or
// trailing white space, else base64 in MCP's sentinel, =?base64?…?=.
func EncodeMCPHeaderValue(s string) string { return mcp.EncodeHeaderValue(s) }
