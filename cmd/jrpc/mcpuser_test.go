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

// TestMCPAskOnTerminal: on a terminal jrpc declares elicitation and
// sampling and answers the server's question itself, in both eras: the
// greet tool's elicitation becomes a prompt built from its schema (over
// the session under 2025-11-25, a multi round-trip under 2026-07-28).
// Without a terminal it declares neither (TestMCPNewUser: -32021).
func TestMCPAskOnTerminal(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		s := startPTY(t, "--streamable", "--mcp-version", v, "call", u, "tools/call", "name=greet", "arguments={}")
		at := s.waitFor(0, "[the server asks] What is your name?")
		at = s.waitFor(at, "name (string; Your name; required): ")
		s.typeKeys("\r") // required: asked again
		at = s.waitFor(at, "required: type a value")
		s.typeKeys("Ada\r")
		s.waitFor(at, "Hello, Ada!")
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", v, err, s.out.String())
		}
	}
}

// TestMCPFixtureSamplingOnTerminal: the fixture's test_sampling asks for a
// completion; on a terminal the user types it, in both eras; the
// SEP-1034 form keeps its defaults on Enter and checks the types.
func TestMCPFixtureSamplingOnTerminal(t *testing.T) {
	u := startServeN(t, 1, "--mcp-fixture", "-l", "http://127.0.0.1:0/mcp")["http"]
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		s := startPTY(t, "--streamable", "--mcp-version", v, "call", u, "tools/call", "name=test_sampling", `arguments={"prompt":"Say hi"}`)
		at := s.waitFor(0, "user: Say hi")
		at = s.waitFor(at, "assistant> ")
		s.typeKeys("hi there\r")
		s.waitFor(at, "LLM response: hi there")
		if err := s.cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", v, err, s.out.String())
		}
	}
	s := startPTY(t, "--streamable", "call", u, "tools/call", "name=test_elicitation_sep1034_defaults", "arguments={}")
	at := s.waitFor(0, "age (integer, default 30")
	s.typeKeys("old\r")
	at = s.waitFor(at, "an integer, please")
	s.typeKeys("41\r")
	for range 4 { // name, score, status, verified: the defaults
		s.typeKeys("\r")
	}
	s.waitFor(at, "Elicitation completed: action=accept, content={")
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, s.out.String())
	}
	for _, w := range []string{`\"age\":41`, `\"name\":\"John Doe\"`, `\"score\":95.5`, `\"status\":\"active\"`, `\"verified\":true`} { // in any order
		if !strings.Contains(s.out.String()[at:], w) {
			t.Errorf("the answer lacks %s:\n%s", w, s.out.String()[at:])
		}
	}
}

// TestMCPTaskFromTheCLI: jrpc declares the Tasks extension, so the
// fixture's task tools answer with a task; call waits for it (a status
// line per change on stderr) and prints its result; a failed task is its
// error; Ctrl-C cancels the task (tasks/cancel), which task get then
// shows; task get of an unknown id is -32602.
func TestMCPTaskFromTheCLI(t *testing.T) {
	u := startServeN(t, 1, "--mcp-fixture", "-l", "http://127.0.0.1:0/mcp")["http"]
	r := run(t, "", "--streamable", "call", u, "tools/call", "name=slow_compute", `arguments={"seconds":0.3}`)
	if r.code != 0 || !strings.Contains(r.stdout, "computed after 0.3s") || !strings.Contains(r.stderr, ": working (") || !strings.Contains(r.stderr, ": completed (") {
		t.Fatalf("slow_compute: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "--streamable", "call", u, "tools/call", "name=protocol_error_job")
	if r.code != exitRPCError || !strings.Contains(r.stderr, ": failed (") || !strings.Contains(r.stderr, `{"code":-32603,"message":"internal error: the job crashed"}`) {
		t.Fatalf("protocol_error_job: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", "--streamable", "task", "get", u, "nope")
	if r.code != exitRPCError || strings.TrimSpace(r.stderr) != `{"code":-32602,"message":"Unknown task: nope"}` {
		t.Fatalf("task get nope: exit %d %q", r.code, r.stderr)
	}

	s := startPTY(t, "--streamable", "call", u, "tools/call", "name=slow_compute", `arguments={"seconds":30}`)
	at := s.waitFor(0, "task ")
	end := s.waitFor(at, ": working (")
	id := s.out.String()[at : end-len(": working (")]
	s.typeKeys("\x03")
	s.waitFor(end, "task "+id+": cancel sent")
	r = run(t, "", "--streamable", "task", "get", u, id)
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"cancelled"`) {
		t.Fatalf("task get %s after Ctrl-C: exit %d\n%s\n%s", id, r.code, r.stdout, r.stderr)
	}
}
