package mcp

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Stateless is a server's rules for the requests of MCP's stateless
// revisions over Streamable HTTP (2026-07-28 on): each POST is checked
// against its headers and its _meta. Its methods may be called
// concurrently; it is not copied once used.
type Stateless struct {
	// Versions are the stateless revisions served; SessionVersions the
	// session era's (the MCP-Protocol-Version values accepted).
	Versions, SessionVersions []string
	// ToolInputSchema returns the inputSchema of a tool, for its
	// Mcp-Param-* headers (nil: they are not checked).
	ToolInputSchema func(tool string) json.RawMessage

	schemas ParamSchemas
}

// Serves reports whether a request whose MCP-Protocol-Version is v is
// served under the stateless revision: v names a stateless revision, or a
// revision the server does not speak at all (which gets
// UnsupportedVersion, a JSON-RPC error, as that revision asks).
func (s *Stateless) Serves(v string) bool {
	if len(s.Versions) == 0 || v == "" || slices.Contains(s.SessionVersions, v) {
		return false
	}
	return slices.Contains(s.Versions, v) || len(s.SessionVersions) > 0
}

// Check checks a stateless request's headers against its body and its
// _meta: -32022 for a revision the server does not speak, -32020 for a
// header missing, repeated or not matching, -32602 for _meta without its required
// fields; the methods of the session era are unknown (-32601, 404). A
// notification without _meta needs only a known revision (and its
// Mcp-Method, when sent, to match). It returns the
// request's _meta (its zero value, with no ProtocolVersion, for such a
// notification); with alias it may share params' memory, which must then
// never change.
func (s *Stateless) Check(hd http.Header, method string, params []byte, notification, alias bool) (meta Meta, refused *Error) {
	version := hd.Get(VersionHeader)
	if len(hd.Values(VersionHeader)) > 1 {
		return meta, &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + VersionHeader + " header repeated"}
	}
	if !slices.Contains(s.Versions, version) {
		return meta, UnsupportedVersion(version, s.Versions, s.SessionVersions)
	}
	p, ok := ParseParams(params)
	if !ok {
		return meta, &Error{Code: CodeInvalidParams, Message: "invalid params: params must be an object"}
	}
	if sessionEraMethods[method] {
		return meta, &Error{Code: CodeMethodNotFound, Message: "method not found: " + method + " is not part of MCP " + version + " (no sessions)"}
	}
	meta, present := p.RequestMeta(method, alias)
	// No header is required of a notification without _meta, but one sent must match.
	if !present && notification && len(hd.Values(MethodHeader)) == 0 {
		return meta, nil
	}
	if e := methodMatches(hd, method); e != nil || !present && notification {
		return meta, e
	}
	if e := s.checkNames(hd, method, &p); e != nil {
		return meta, e
	}
	if !present {
		return meta, &Error{Code: CodeInvalidParams, Message: "invalid params: _meta." + MetaProtocolVersion + " is required"}
	}
	if meta.ProtocolVersion != version {
		return meta, &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + VersionHeader + " " + strconv.Quote(version) + " does not match _meta." + MetaProtocolVersion + " " + strconv.Quote(meta.ProtocolVersion)}
	}
	return meta, meta.Check(s.Versions, s.SessionVersions)
}

// methodMatches checks Mcp-Method: present once and the body's method as
// it is. The revision gives Mcp-Method no base64 form (only Mcp-Name and
// Mcp-Param-* have one), so a sentinel is not decoded: an intermediary
// routes on what it reads.
func methodMatches(hd http.Header, method string) *Error {
	if vals := hd.Values(MethodHeader); len(vals) == 1 && vals[0] != method {
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + MethodHeader + " header value " + strconv.Quote(vals[0]) + " does not match body value " + strconv.Quote(method)}
	}
	return HeaderMatches(hd, MethodHeader, method, "")
}

// checkNames checks the headers that mirror what a request names:
// Mcp-Name (the tool, prompt or resource; a task's id, when sent) and a tool's Mcp-Param-*
// headers (ToolInputSchema).
func (s *Stateless) checkNames(hd http.Header, method string, p *Params) *Error {
	switch method {
	case "tools/call":
		if e := HeaderMatches(hd, NameHeader, p.Name, ""); e != nil {
			return e
		}
		if s.ToolInputSchema == nil || p.Name == "" {
			return nil
		}
		return CheckParamHeaders(hd, s.schemas.Of(s.ToolInputSchema(p.Name)), p.Arguments)
	case "prompts/get":
		return HeaderMatches(hd, NameHeader, p.Name, "")
	case "resources/read":
		return HeaderMatches(hd, NameHeader, p.URI, "")
	case "tasks/get", "tasks/update", "tasks/cancel":
		// The Tasks extension: Mcp-Name, when sent, mirrors the taskId.
		if len(hd.Values(NameHeader)) > 0 {
			return HeaderMatches(hd, NameHeader, p.TaskID, "")
		}
	}
	return nil
}

// VersionMatches checks, for a request of any era, that when params' _meta
// names a protocol version (which makes it a request of a stateless
// revision) the MCP-Protocol-Version header is present, single and the
// same: else HeaderMismatch (-32020), as the stateless revision asks
// whatever revision the header names.
func VersionMatches(hd http.Header, params []byte) *Error {
	p, ok := ParseParams(params)
	if !ok {
		return nil
	}
	var raw []byte
	wire.Members(p.Meta, func(name, v []byte) {
		if string(name) == MetaProtocolVersion {
			raw = v
		}
	})
	if raw == nil {
		return nil
	}
	want := jsonString(raw)
	switch vals := hd.Values(VersionHeader); {
	case len(vals) == 1 && vals[0] == want:
		return nil
	case len(vals) == 0:
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + VersionHeader + " header missing; _meta." + MetaProtocolVersion + " is " + strconv.Quote(want)}
	case len(vals) > 1:
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + VersionHeader + " header repeated"}
	default:
		return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + VersionHeader + " " + strconv.Quote(vals[0]) + " does not match _meta." + MetaProtocolVersion + " " + strconv.Quote(want)}
	}
}

// MethodString returns name as a string, without an allocation for the
// methods of the stateless revision that clients call most.
func MethodString(name []byte) string { return intern(name, commonMethods[:]) }

var commonMethods = [...]string{"tools/call", "tools/list", "resources/read", "resources/list", "prompts/get", "prompts/list", "completion/complete"}

// sessionEraMethods are the methods the stateless revision removed.
var sessionEraMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// HTTPStatus returns the HTTP status of a stateless revision's answer
// whose error has code: 404 for an unknown method, 400 for the
// revision's own errors, 0 (the transport's own) for the rest.
func HTTPStatus(code int64) int {
	switch code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeHeaderMismatch, CodeMissingClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return 0
}
