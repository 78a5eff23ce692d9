package main

import (
	"strings"
	"testing"
)

// TestMCPNewUser: what a new user of `jrpc serve --mcp` met (issue 38,
// point 5), through the real binary. A session-era client whose initialize
// declared no elicitation capability is never sent elicitation/create: the
// tool that needs it answers -32021, as the stateless era does. An unknown
// tool is -32602 "Unknown tool: NAME" in both eras. Over stdio (--exec)
// with --mcp-version the era is negotiated as over Streamable HTTP. The
// REPL's .methods lists an MCP server's tools, prompts and resources, and
// a tool's name calls it.
func TestMCPNewUser(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	missing := `{"code":-32021,"message":"Missing required client capability: elicitation","data":{"requiredCapabilities":{"elicitation":{}}}}`
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		r := run(t, "", "--streamable", "--mcp-version", v, "call", u, "tools/call", "name=greet", "arguments={}")
		if r.code != exitRPCError || strings.TrimSpace(r.stderr) != missing || strings.Contains(r.stderr, "elicitation/create") {
			t.Errorf("%s: greet without the capability: exit %d\n%s\n%s", v, r.code, r.stdout, r.stderr)
		}
		r = run(t, "", "--streamable", "--mcp-version", v, "call", u, "tools/call", "name=nope", "arguments={}")
		if r.code != exitRPCError || strings.TrimSpace(r.stderr) != `{"code":-32602,"message":"Unknown tool: nope"}` {
			t.Errorf("%s: unknown tool: exit %d %q", v, r.code, r.stderr)
		}
	}

	// stdio: the era negotiated; the 2025-11-25 client is not asked either.
	exec := bin + " serve --mcp --listen stdio:"
	r := run(t, "", "--mcp-version", "auto", "--exec", exec, "call", "tools/call", "name=add", `arguments={"a":1,"b":2}`)
	if r.code != 0 || !strings.HasPrefix(r.stdout, `{"resultType":"complete",`) {
		t.Errorf("stdio, auto: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "--mcp-version", "2025-11-25", "--exec", exec, "call", "tools/call", "name=greet")
	if r.code != exitRPCError || strings.TrimSpace(r.stderr) != missing {
		t.Errorf("stdio, 2025-11-25: greet: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	// The REPL of an MCP server, in both eras.
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		r = run(t, ".methods\nadd a=2 b=3\n", "--streamable", "--mcp-version", v, "repl", u)
		for _, w := range []string{"MCP " + v + " server: its tools, prompts and resources\n", "  add(a, b)", "Adds two numbers.", "prompts (prompts/get name=NAME): none", `"structuredContent":{"sum":5}`} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: repl: stdout lacks %q:\n%s\n%s", v, w, r.stdout, r.stderr)
			}
		}
		if r.code != 0 || strings.Contains(r.stderr, "rpc.discover") {
			t.Errorf("%s: repl: exit %d\n%s", v, r.code, r.stderr)
		}
	}
}

// TestMCPREPLTerminal: on a terminal, Tab completes an MCP server's tool
// names and then their arguments, and .methods lists the tools.
func TestMCPREPLTerminal(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	s := startPTY(t, "--streamable", "repl", u)
	at := s.waitFor(0, "jrpc> ")
	s.typeKeys("ech\t")
	at = s.waitFor(at, "echo")
	s.typeKeys(" te\t")
	at = s.waitFor(at, "text=")
	s.typeKeys("hi\r")
	at = s.waitFor(at, `"text": "hi"`)
	s.typeKeys(".methods\r")
	at = s.waitFor(at, "tools (call as NAME key=value..., or tools/call):")
	s.waitFor(at, "greet()")
	s.typeKeys("\x04")
}
