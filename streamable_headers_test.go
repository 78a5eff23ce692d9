package jsonrpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// headersServer serves both eras on one endpoint, as a dual-era MCP server
// does: sessions for 2025-11-25 and 2025-06-18, per request for
// 2026-07-28. The tool "geo" mirrors its argument "region" in the header
// Mcp-Param-Region.
func headersServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	answer := func(ctx context.Context, p map[string]any) (string, error) {
		target, _ := p["name"].(string)
		if uri, ok := p["uri"].(string); ok {
			target = uri
		}
		if m := jsonrpc.MCPMetaFromContext(ctx); m != nil {
			return target + "@" + m.ProtocolVersion, nil
		}
		return target + "@session", nil
	}
	jsonrpc.Register(mux, "tools/call", answer)
	jsonrpc.Register(mux, "resources/read", answer)
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, SSE: jsonrpc.SSENever,
		ProtocolVersions:  []string{"2025-11-25", "2025-06-18"},
		StatelessVersions: []string{jsonrpc.MCPVersion2026},
		ToolInputSchema: func(tool string) json.RawMessage {
			if tool != "geo" {
				return nil
			}
			return json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
		},
	}))
	t.Cleanup(ts.Close)
	return ts
}

// postHeaders posts body with exactly the headers given (each value of a
// name sent as its own header line).
func postHeaders(t *testing.T, url, body string, hd http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range hd {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readAll(t, resp)
}

// Every mismatch between a Streamable HTTP request's headers and its body
// is answered as the MCP revision says, whichever era the header names:
// 2026-07-28 (Streamable HTTP, "Request Metadata" and "Server Validation":
// 400 with HeaderMismatch, -32020; an unsupported revision 400 with
// -32022; an Mcp-Session-Id ignored) and 2025-11-25 (an invalid or
// unsupported MCP-Protocol-Version 400; a missing session 400, an unknown
// one 404; the 2026 headers are not part of it). A request whose _meta
// names a protocol version is a modern request whatever its header says.
func TestStreamableHeaderMismatches(t *testing.T) {
	ts := headersServer(t)
	resp, _ := postHeaders(t, ts.URL, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, nil)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	metaOf := func(version string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}`
	}
	call := func(name, version string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `",` + metaOf(version) + `}}`
	}
	geo := func(region string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"geo","arguments":{"region":"` + region + `"},` + metaOf("2026-07-28") + `}}`
	}
	read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a",` + metaOf("2026-07-28") + `}}`
	plain := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}` // a session-era call
	// hd builds headers from name, value pairs; a name given twice is sent twice.
	hd := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	const (
		pv     = "MCP-Protocol-Version"
		method = "Mcp-Method"
		name   = "Mcp-Name"
		sess   = "Mcp-Session-Id"
	)
	for _, tc := range []struct {
		name    string
		body    string
		headers http.Header
		status  int
		code    int64  // the JSON-RPC error's (0: none checked)
		result  string // the result, for a 200
	}{
		// 2026-07-28: every header mirrors the body.
		{"2026 all match", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/call", name, "echo"), 200, 0, "echo@2026-07-28"},
		{"2026 version header missing", call("echo", "2026-07-28"), hd(method, "tools/call", name, "echo"), 400, -32020, ""},
		{"2026 version header differs from _meta", call("echo", "2025-11-25"), hd(pv, "2026-07-28", method, "tools/call", name, "echo"), 400, -32020, ""},
		{"2026 version header repeated", call("echo", "2026-07-28"), hd(pv, "2026-07-28", pv, "2025-11-25", method, "tools/call", name, "echo"), 400, -32020, ""},
		{"2026 version header unsupported", call("echo", "2026-07-28"), hd(pv, "2099-01-01", method, "tools/call", name, "echo"), 400, -32022, ""},
		{"2026 method header differs", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/list", name, "echo"), 400, -32020, ""},
		{"2026 method header differs in case", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "Tools/Call", name, "echo"), 400, -32020, ""},
		{"2026 method header in base64 (Mcp-Name only has it)", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "=?base64?dG9vbHMvY2FsbA==?=", name, "echo"), 400, -32020, ""},
		{"2026 method header repeated", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/call", method, "tools/call", name, "echo"), 400, -32020, ""},
		{"2026 name header differs", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/call", name, "add"), 400, -32020, ""},
		{"2026 name header missing for resources/read", read, hd(pv, "2026-07-28", method, "resources/read"), 400, -32020, ""},
		{"2026 name header matches the uri", read, hd(pv, "2026-07-28", method, "resources/read", name, "file:///a"), 200, 0, "file:///a@2026-07-28"},
		{"2026 param header matches", geo("eu"), hd(pv, "2026-07-28", method, "tools/call", name, "geo", "Mcp-Param-Region", "eu"), 200, 0, "geo@2026-07-28"},
		{"2026 param header differs", geo("eu"), hd(pv, "2026-07-28", method, "tools/call", name, "geo", "Mcp-Param-Region", "us"), 400, -32020, ""},
		{"2026 param header missing", geo("eu"), hd(pv, "2026-07-28", method, "tools/call", name, "geo"), 400, -32020, ""},
		{"2026 session header ignored", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/call", name, "echo", sess, "no-such-session"), 200, 0, "echo@2026-07-28"},
		{"2026 live session header ignored", call("echo", "2026-07-28"), hd(pv, "2026-07-28", method, "tools/call", name, "echo", sess, session), 200, 0, "echo@2026-07-28"},
		{"2026 notification method header differs", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, hd(pv, "2026-07-28", method, "notifications/progress"), 400, -32020, ""},
		{"2026 notification method header matches", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, hd(pv, "2026-07-28", method, "notifications/cancelled"), 202, 0, ""},
		// A 2026 request under a session era's header: the header does not match _meta.
		{"session-era header on a 2026 request", call("echo", "2026-07-28"), hd(pv, "2025-11-25", method, "tools/call", name, "echo", sess, session), 400, -32020, ""},
		{"session-era header on a 2026 request, no session", call("echo", "2026-07-28"), hd(pv, "2025-06-18", method, "tools/call", name, "echo"), 400, -32020, ""},
		{"session-era header on a 2026 request, _meta key escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, hd(pv, "2025-11-25", sess, session), 400, -32020, ""},
		{"session-era header on a 2026 request, _meta key in \\u escapes", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, hd(pv, "2025-11-25", sess, session), 400, -32020, ""},
		// 2025-11-25: the session and the version header; the 2026 headers are not part of it.
		{"2025 all match", plain, hd(pv, "2025-11-25", sess, session), 200, 0, "echo@session"},
		{"2025 version header absent", plain, hd(sess, session), 200, 0, "echo@session"},
		{"2025 version header unsupported", plain, hd(pv, "2024-01-01", sess, session), 400, 0, ""},
		{"2025 version header malformed", plain, hd(pv, "not a version", sess, session), 400, 0, ""},
		{"2025 version header repeated", plain, hd(pv, "2025-11-25", pv, "2025-06-18", sess, session), 400, 0, ""},
		{"2025 session header missing", plain, hd(pv, "2025-11-25"), 400, 0, ""},
		{"2025 session header unknown", plain, hd(pv, "2025-11-25", sess, "no-such-session"), 404, 0, ""},
		{"2025 ignores the 2026 headers", plain, hd(pv, "2025-11-25", sess, session, method, "tools/list", name, "other"), 200, 0, "echo@session"},
		{"2025 _meta naming its own version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + metaOf("2025-11-25") + `}}`, hd(pv, "2025-11-25", sess, session), 200, 0, "echo@session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := postHeaders(t, ts.URL, tc.body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if got := resp.Header.Get("Mcp-Session-Id"); got != "" {
				t.Fatalf("answer carries Mcp-Session-Id %q", got)
			}
			var r struct {
				Result json.RawMessage
				Error  *jsonrpc.Error
			}
			switch {
			case tc.status == 202:
				if body != "" {
					t.Fatalf("202 with a body: %s", body)
				}
			case tc.code != 0:
				if resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &r) != nil || r.Error == nil || int64(r.Error.Code) != tc.code {
					t.Fatalf("reply %s (%s): want error %d", body, resp.Header.Get("Content-Type"), tc.code)
				}
			case tc.status == 200:
				if json.Unmarshal([]byte(body), &r) != nil || string(r.Result) != `"`+tc.result+`"` {
					t.Fatalf("reply %s: want result %q", body, tc.result)
				}
			}
		})
	}
}

// A server of the session era only does not read _meta's protocol version:
// a modern request sent to it gets no modern error (HeaderMismatch would
// tell a dual-era client the server is modern); it is refused as that era
// refuses a POST without a session, and the client falls back to
// initialize.
func TestStreamableSessionOnlyLeavesMeta(t *testing.T) {
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true}))
	t.Cleanup(ts.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp, reply := postHeaders(t, ts.URL, body, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}})
	if resp.StatusCode != 400 || strings.Contains(reply, "-32020") {
		t.Fatalf("%d %s: want 400 without HeaderMismatch", resp.StatusCode, reply)
	}
}

// A server without sessions serves a client that takes JSON only as
// ServeHTTP does; with StatelessVersions its requests' _meta is checked
// against the header all the same.
func TestStreamableJSONOnlyClientMetaChecked(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/call", func(context.Context, map[string]any) (string, error) { return "ok", nil })
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}}))
	t.Cleanup(ts.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range []struct {
		name    string
		body    string
		headers http.Header
		status  int
		reply   string
	}{
		{"version header missing", body, http.Header{}, 400, `-32020`},
		{"session era's version", body, http.Header{"Mcp-Protocol-Version": {"2025-11-25"}}, 400, `-32020`},
		{"all match", body, http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}, 200, `{"jsonrpc":"2.0","id":1,"result":"ok"}`},
		// A plain JSON-RPC call, no MCP at all, is served as ServeHTTP serves it.
		{"plain JSON-RPC", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`, http.Header{}, 200, `{"jsonrpc":"2.0","id":2,"result":"ok"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(tc.body))
			req.Header = tc.headers
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if reply := readAll(t, resp); resp.StatusCode != tc.status || !strings.Contains(reply, tc.reply) {
				t.Fatalf("%d %s: want %d with %s", resp.StatusCode, reply, tc.status, tc.reply)
			}
		})
	}
}
