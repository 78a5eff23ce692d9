package main

import (
	"strings"
	"testing"
)

// TestMCPFromTheCLI: an MCP endpoint called without --streamable says how
// to call it; --streamable -v shows the envelopes and the era reached
// (auto: 2026-07-28; pinned: 2025-11-25, with a session); a tool result with
// isError exits 1 with its content printed (issue 28, point 5).
func TestMCPFromTheCLI(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	for _, args := range [][]string{{"call", u, "tools/list"}, {"list", u}, {"call", "-v", u, "tools/list"}} {
		r := run(t, "", args...)
		if r.code != exitTransport || !strings.Contains(r.stderr, "Mcp-Session-Id") || !strings.Contains(r.stderr, "try: this is an MCP server speaking Streamable HTTP: add --streamable") {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// auto: the demo speaks 2026-07-28, so no session; -v shows the probe,
	// the mirrored headers and the era reached.
	r := run(t, "", "--streamable", "call", "-v", u, "tools/call", "name=add", `arguments={"a":1,"b":2}`)
	expect(t, r, 0, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"jrpc-demo","title":"jsonrpc demo service","version":"1.0.0"}},"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"isError":false}`+"\n")
	for _, w := range []string{`"method":"server/discover"`, "> Mcp-Method: tools/call\n", "> Mcp-Name: add\n", "> Mcp-Protocol-Version: 2026-07-28\n", `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, "* MCP 2026-07-28 (stateless"} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("--streamable -v: stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "Mcp-Session-Id") || strings.Contains(r.stderr, `"initialize"`) {
		t.Fatalf("--streamable -v (2026-07-28): a session:\n%s", r.stderr)
	}
	// echo's text goes in Mcp-Param-Text: refused (-32020) before the
	// client knows it, then sent again after tools/list with the header.
	r = run(t, "", "--streamable", "call", "-v", u, "tools/call", "name=echo", `arguments={"text":"héllo"}`)
	if r.code != 0 || !strings.Contains(r.stdout, `"text":"héllo"`) || !strings.Contains(r.stderr, `"code":-32020`) || !strings.Contains(r.stderr, "> Mcp-Param-Text: =?base64?aMOpbGxv?=\n") {
		t.Fatalf("echo under 2026-07-28: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Pinned to the session era: initialize, the session, a plain result.
	r = run(t, "", "--streamable", "--mcp-version", "2025-11-25", "call", "-v", u, "tools/call", "name=add", `arguments={"a":1,"b":2}`)
	expect(t, r, 0, `{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"isError":false}`+"\n")
	for _, w := range []string{`"method":"initialize"`, "< Mcp-Session-Id: ", `"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`, `<-- {"jsonrpc":"2.0","id":`, "* MCP 2025-11-25 (session era"} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("--streamable --mcp-version 2025-11-25 -v: stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "server/discover") || strings.Contains(r.stderr, "Mcp-Method") {
		t.Fatalf("--mcp-version 2025-11-25 -v: a 2026-07-28 request:\n%s", r.stderr)
	}
	r = run(t, "", "--streamable", "call", u, "tools/call", "name=add", `arguments={"a":"x","b":2}`)
	if r.code != exitRPCError || !strings.Contains(r.stdout, `"isError":true`) || !strings.Contains(r.stdout, "expected number") {
		t.Fatalf("isError: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "--streamable", "call", "--raw", u, "tools/list")
	if r.code != exitUsage || !strings.Contains(r.stderr, "-v shows a Streamable HTTP exchange") {
		t.Fatalf("--raw: exit %d, stderr %q", r.code, r.stderr)
	}
}
