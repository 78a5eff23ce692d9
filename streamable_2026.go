package jsonrpc

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Streamable HTTP under MCP's stateless revision (2026-07-28): each POST
// carries one JSON-RPC message and the headers that mirror it
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name); it is served on its own,
// with no session, by any instance; closing the answer's event stream
// cancels the call; there is no GET stream and nothing resumes.

const (
	mcpMethodHeader = "Mcp-Method"
	mcpNameHeader   = "Mcp-Name"
)

// stateless reports whether r is served under the stateless revision: a
// POST or other request whose MCP-Protocol-Version names a stateless
// revision, or a revision the server does not speak at all (which gets
// UnsupportedProtocolVersionError, a JSON-RPC error, as that revision asks).
func (h *streamableHandler) stateless(r *http.Request) bool {
	if len(h.opts.StatelessVersions) == 0 {
		return false
	}
	v := r.Header.Get(versionHeader)
	if v == "" || slices.Contains(h.opts.ProtocolVersions, v) {
		return false
	}
	return slices.Contains(h.opts.StatelessVersions, v) || len(h.opts.ProtocolVersions) > 0
}

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
	setReadDeadline(w, time.Time{})
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
	meta, rpcErr := h.checkStateless(r.Header, method, paramsOf(data, e), id.IsZero())
	if rpcErr != nil {
		status := http.StatusBadRequest
		if rpcErr.Code == CodeMethodNotFound {
			status = http.StatusNotFound
		}
		writeStatelessError(w, status, id, rpcErr)
		return
	}
	pi := &peerInfo{peer: s.httpPeer(r, "http"), srv: s}
	ctx := context.WithValue(r.Context(), peerKey{}, pi)
	if meta != nil {
		ctx = context.WithValue(ctx, mcpMetaKey{}, meta)
	}
	client := clientKey(r, pi.peer.RemoteAddr, "", false)
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
	sw := &statusByError{ResponseWriter: w}
	if h.opts.SSE == SSENever || !acceptsEventStream(r.Header.Get("Accept")) {
		s.answerJSON(ctx, sw, data, pi)
		return
	}
	if ctx, ok = h.admitPOST(ctx, w, data, &m); !ok {
		return
	}
	h.serveStream(ctx, streamPOST{w: sw, data: data, client: client, requests: 1, pi: pi})
}

// checkStateless checks a stateless request's headers against its body
// and its _meta: -32022 for a revision the server does not speak, -32020
// for a header missing or not matching, -32602 for _meta without its
// required fields; the methods of the session era are unknown (-32601,
// 404). A notification without _meta needs only a known revision.
func (h *streamableHandler) checkStateless(hd http.Header, method string, params []byte, notification bool) (*MCPMeta, *Error) {
	version := hd.Get(versionHeader)
	if !slices.Contains(h.opts.StatelessVersions, version) {
		return nil, unsupportedVersion(version, h.opts.StatelessVersions, h.opts.ProtocolVersions)
	}
	p, ok := parseMCPParams(params)
	if !ok {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: params must be an object"}
	}
	if sessionEraMethods[method] {
		return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + method + " is not part of MCP " + version + " (no sessions)"}
	}
	meta, present := p.meta(method)
	if !present && notification {
		return nil, nil // no header rule covers notifications
	}
	if e := headerMatches(hd, mcpMethodHeader, method); e != nil {
		return nil, e
	}
	if e := h.checkNames(hd, method, &p); e != nil {
		return nil, e
	}
	if !present {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaProtocolVersion + " is required"}
	}
	if meta.ProtocolVersion != version {
		return nil, &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + versionHeader + " " + strconv.Quote(version) + " does not match _meta." + MetaProtocolVersion + " " + strconv.Quote(meta.ProtocolVersion)}
	}
	if e := meta.check(h.opts.StatelessVersions, h.opts.ProtocolVersions); e != nil {
		return nil, e
	}
	return meta, nil
}

// checkNames checks the headers that mirror what a request names:
// Mcp-Name (the tool, prompt or resource) and a tool's Mcp-Param-*
// headers (StreamableHTTPOptions.ToolInputSchema).
func (h *streamableHandler) checkNames(hd http.Header, method string, p *mcpParams) *Error {
	switch method {
	case "tools/call":
		if e := headerMatches(hd, mcpNameHeader, deref(p.Name)); e != nil {
			return e
		}
		if h.opts.ToolInputSchema == nil || p.Name == nil {
			return nil
		}
		return checkParamHeaders(hd, h.paramSchemas.of(*p.Name, h.opts.ToolInputSchema(*p.Name)), p.Arguments)
	case "prompts/get":
		return headerMatches(hd, mcpNameHeader, deref(p.Name))
	case "resources/read":
		return headerMatches(hd, mcpNameHeader, deref(p.URI))
	}
	return nil
}

// sessionEraMethods are the methods the stateless revision removed.
var sessionEraMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// headerMatches checks that header name is present, made of visible ASCII
// (after decoding MCP's base64 sentinel, =?base64?…?=), and equal to want.
func headerMatches(hd http.Header, name, want string) *Error {
	return headerMatchesBy(hd, name, want, func(got string) bool { return got == want })
}

// headerMatchesBy is headerMatches with a comparison of its own (of the
// decoded header value with the body's).
func headerMatchesBy(hd http.Header, name, want string, same func(got string) bool) *Error {
	vals := hd.Values(name)
	if len(vals) != 1 {
		what := "missing"
		if len(vals) > 1 {
			what = "repeated"
		}
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header " + what}
	}
	got, ok := decodeHeaderValue(vals[0])
	if !ok {
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header has invalid characters or encoding"}
	}
	if !same(got) {
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + name + " header value " + strconv.Quote(got) + " does not match body value " + strconv.Quote(want)}
	}
	return nil
}

// decodeHeaderValue decodes an Mcp-Name (or Mcp-Param-*) value: plain
// visible ASCII, space and tab, or =?base64?…?= holding UTF-8.
func decodeHeaderValue(v string) (string, bool) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	if b64, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b64, ok = strings.CutSuffix(b64, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(b64)
			return string(b), err == nil
		}
	}
	return v, true
}

// EncodeMCPHeaderValue returns s as an MCP request header value (Mcp-Name,
// Mcp-Param-*): as it is when it is plain visible ASCII without leading or
// trailing white space, else base64 in MCP's sentinel, =?base64?…?=.
func EncodeMCPHeaderValue(s string) string {
	plain := s == strings.TrimSpace(s) && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// writeStatelessError answers with a JSON-RPC error and an HTTP status.
func writeStatelessError(w http.ResponseWriter, status int, id ID, e *Error) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(appendResponse(nil, id, nil, e))
}

// statusByError gives a JSON answer of the stateless revision the HTTP
// status its error asks: 404 for an unknown method (-32601), 400 for the
// revision's own errors; 200 otherwise.
type statusByError struct {
	http.ResponseWriter
	wrote bool
}

func (w *statusByError) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusByError) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusByError) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote = true
		if isJSONMediaType(w.Header().Get("Content-Type"), false) {
			if status := errorStatus(b); status != 0 {
				w.ResponseWriter.WriteHeader(status)
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

// errorStatus returns the HTTP status of a single error response (0 for
// anything else).
func errorStatus(msg []byte) int {
	var sc wire.Scanner
	var m wire.Message
	m.Limit = 1
	if sc.Parse(msg, DefaultMaxDepth, &m) != nil || m.Batch || len(m.Elems) != 1 || !m.Elems[0].ErrObj.Present() {
		return 0
	}
	var e Error
	if wire.Unmarshal(m.Elems[0].ErrObj.Of(msg), &e) != nil {
		return 0
	}
	switch e.Code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeHeaderMismatch, CodeMissingClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return 0
}
