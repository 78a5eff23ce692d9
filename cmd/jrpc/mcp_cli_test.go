package main

import (
	"strings"
	"testing"
)

// TestMCPFromTheCLI: an MCP endpoint called without --streamable says how
// to call it; --streamable -v shows the envelopes; a tool result with
// isError exits 1 with its content printed (issue 28, point 5).
func TestMCPFromTheCLI(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	for _, args := range [][]string{{"call", u, "tools/list"}, {"list", u}, {"call", "-v", u, "tools/list"}} {
		r := run(t, "", args...)
		if r.code != exitTransport || !strings.Contains(r.stderr, "Mcp-Session-Id") || !strings.Contains(r.stderr, "try: this is an MCP server speaking Streamable HTTP: add --streamable") {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := run(t, "", "--streamable", "call", "-v", u, "tools/call", "name=add", `arguments={"a":1,"b":2}`)
	expect(t, r, 0, `{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"isError":false}`+"\n")
	for _, w := range []string{`"method":"initialize"`, "< Mcp-Session-Id: ", `"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`, `<-- {"jsonrpc":"2.0","id":`} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("--streamable -v: stderr lacks %q:\n%s", w, r.stderr)
		}
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
