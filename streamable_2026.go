package jsonrpc

import (
	"context"
	"net/http"
	"time"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/streamable"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Streamable HTTP under MCP's stateless revision (2026-07-28): each POST
// carries one JSON-RPC message and the headers that mirror it
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name); it is served on its own,
// with no session, by any instance; closing the answer's event stream
// cancels the call; there is no GET stream and nothing resumes.

// serveStateless serves one request of the stateless revision.
func (h *streamableHandler) serveStateless(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "jsonrpc: method "+r.Method+" not allowed: MCP "+r.Header.Get(versionHeader)+" has no GET stream and no sessions; POST each message", http.StatusMethodNotAllowed)
		return
	}
	s := h.srv
	data, ok := s.readPOST(w, r, nil)
	if !ok {
		return
	}
	httpx.SetReadDeadline(w, time.Time{})
	var sc wire.Scanner
	var m wire.Message
	m.Limit = 1
	if err := sc.Parse(data, s.maxDepth(), &m); err != nil {
		writeStatelessError(w, http.StatusBadRequest, ID{}, parseError(err))
		return
	}
	if m.Batch || len(m.Elems) != 1 {
		writeStatelessError(w, http.StatusBadRequest, ID{}, &Error{Code: CodeInvalidRequest, Message: "invalid request: MCP " + r.Header.Get(versionHeader) + " takes one JSON-RPC message per POST, not a batch"})
		return
	}
	e := &m.Elems[0]
	if e.Kind != wire.KindRequest {
		writeStatelessError(w, http.StatusBadRequest, idOf(e, data), &Error{Code: CodeInvalidRequest, Message: "invalid request: a POST carries a request or a notification"})
		return
	}
	id := idOf(e, data)
	method := string(e.MethodName(data))
	meta, refused := h.rules.Check(r.Header, method, paramsOf(data, e), id.IsZero())
	if refused != nil {
		status := http.StatusBadRequest
		if refused.Code == CodeMethodNotFound {
			status = http.StatusNotFound
		}
		writeStatelessError(w, status, id, mcpError(refused))
		return
	}
	pi := &peerInfo{peer: s.httpPeer(r, "http"), srv: s}
	ctx := context.WithValue(r.Context(), peerKey{}, pi)
	if meta.ProtocolVersion != "" {
		ctx = context.WithValue(ctx, mcpMetaKey{}, newMCPMeta(&meta))
	}
	client := streamable.ClientKey(r, pi.peer.RemoteAddr, "", false)
	if s.Convention != ConventionNone {
		ctx = context.WithValue(ctx, cancelRouterKey{}, func(id ID) bool { return h.cancel(client, id) })
	}
	if id.IsZero() {
		h.notifications(ctx, data)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// The call lives as long as the POST: a client that closes the answer
	// (its event stream) cancels it.
	sw := &streamable.StatusByError{ResponseWriter: w}
	if h.opts.SSE == SSENever || !streamable.AcceptsEventStream(r.Header.Get("Accept")) {
		s.answerJSON(ctx, sw, data, pi)
		return
	}
	if ctx, ok = h.admitPOST(ctx, w, data, &m); !ok {
		return
	}
	h.serveStream(ctx, streamPOST{w: sw, data: data, client: client, requests: 1, pi: pi})
}

// EncodeMCPHeaderValue returns s as an MCP request header value (Mcp-Name,
// Mcp-Param-*): as it is when it is plain visible ASCII without leading or
// trailing white space, else base64 in MCP's sentinel, =?base64?…?=.
func EncodeMCPHeaderValue(s string) string { return mcp.EncodeHeaderValue(s) }

// writeStatelessError answers with a JSON-RPC error and an HTTP status.
func writeStatelessError(w http.ResponseWriter, status int, id ID, e *Error) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(appendResponse(nil, id, nil, e))
}
