package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := run(t, "", args...)
		expect(t, r, 0, "")
		if !strings.HasPrefix(r.stdout, "jrpc ") || !strings.Contains(r.stdout, " go1.") || strings.Contains(r.stdout, "jrpc jrpc") {
			t.Fatalf("%v: %q", args, r.stdout)
		}
	}
	r := run(t, "", "version")
	if !strings.Contains(r.stdout, "github.com/seedhq/jsonrpc/cmd/jrpc") || !strings.Contains(r.stdout, "library github.com/seedhq/jsonrpc") {
		t.Fatalf("version lacks the modules: %q", r.stdout)
	}
	// A flag error names the command once.
	r = run(t, "", "--nope")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "see 'jrpc --help'") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestDefaultEndpointAndNamedEndpoints(t *testing.T) {
	// JRPC_URL stands in for the URL; a URL given still wins.
	env := []string{"JRPC_URL=" + urls["tcp"]}
	expect(t, runEnv(t, env, "", "call", "subtract", "[42,23]"), 0, "19\n")
	expect(t, runEnv(t, env, "", "call", urls["http"], "subtract", "[1,2]"), 0, "-1\n")
	expect(t, runEnv(t, env, "", "list"), 0, "")

	dir := t.TempDir()
	cfg := filepath.Join(dir, "jrpc", "config")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte(`# test endpoints
[local]
url = `+urls["tcp"]+`

[web]   # with a header
url = `+urls["http"]+`
header = X-Trace: abc

[spawn]
exec = `+execCmd+`
`), 0o600)
	env = []string{"XDG_CONFIG_HOME=" + dir, "JRPC_CONFIG="}
	expect(t, runEnv(t, env, "", "call", "@local", "subtract", "[42,23]"), 0, "19\n")
	expect(t, runEnv(t, env, "", "call", "@spawn", "get_data"), 0, `["hello",5]`+"\n")
	r := runEnv(t, env, "", "call", "-v", "@web", "get_data")
	expect(t, r, 0, `["hello",5]`+"\n")
	if !strings.Contains(r.stderr, "> X-Trace: abc") {
		t.Fatalf("the endpoint's header was not sent: %q", r.stderr)
	}
	expect(t, runEnv(t, append(env, "JRPC_URL=@local"), "", "call", "sum", "[1,2]"), 0, "3\n")
	r = runEnv(t, env, "", "call", "@nope", "x")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "no endpoint @nope") || !strings.Contains(r.stderr, "@local, @spawn, @web") {
		t.Fatalf("stderr %q", r.stderr)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("[a]\nurl = tcp://x:1\nproxy = y\n"), 0o600)
	r = runEnv(t, []string{"JRPC_CONFIG=" + bad}, "", "call", "@a", "x")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, bad+`:3: unknown key "proxy"`) {
		t.Fatalf("stderr %q", r.stderr)
	}
	r = runEnv(t, []string{"JRPC_CONFIG=" + filepath.Join(dir, "none")}, "", "call", "@a", "x")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "there is no endpoints file") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

// cleanStderr checks that every line of stderr is a "jrpc:" message or its
// "try:" hint: no Go error chain spilling over lines.
func cleanStderr(t *testing.T, stderr string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if !strings.HasPrefix(l, "jrpc: ") && !strings.HasPrefix(l, "  try: ") {
			t.Fatalf("stray line %q in stderr %q", l, stderr)
		}
	}
}

func TestErrorsSayWhatHappened(t *testing.T) {
	tcpPort := strings.TrimPrefix(urls["tcp"], "tcp://")
	httpHost := strings.TrimSuffix(strings.TrimPrefix(urls["http"], "http://"), "/rpc")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
		not  string
	}{
		{"ws refused", []string{"call", "ws://127.0.0.1:1/", "x"}, exitTransport, []string{"cannot connect to ws://127.0.0.1:1/: connection refused", "try: check the host and port"}, "failed to WebSocket dial"},
		{"ws timeout", []string{"call", "--timeout", "100ms", urls["ws"], "sleep", "ms=2000"}, exitTransport, []string{"no answer from " + urls["ws"] + " within 100ms", "try: a larger --timeout"}, "context"},
		{"tcp to http port", []string{"call", "tcp://" + httpHost, "get_data"}, exitTransport, []string{"this port speaks HTTP, not a JSON-RPC stream", "try: call it over HTTP: http://" + httpHost + "/"}, "broken pipe"},
		{"tcp to http port raw", []string{"call", "-v", "tcp://" + httpHost, "get_data"}, exitTransport, []string{"this port speaks HTTP, not a JSON-RPC stream"}, ""},
		{"http to tcp port", []string{"call", "http://" + tcpPort + "/", "get_data"}, exitTransport, []string{"this port speaks something else (a JSON-RPC stream?), not HTTP", "try: talk to it as a stream: tcp://" + tcpPort}, "malformed"},
		{"ws to tcp port", []string{"call", "ws://" + tcpPort + "/", "get_data"}, exitTransport, []string{"not HTTP"}, "malformed"},
		{"ws to http endpoint", []string{"call", "ws://" + httpHost + "/rpc", "get_data"}, exitTransport, []string{"this port speaks HTTP, not WebSocket", "try: call it over HTTP: http://" + httpHost + "/rpc"}, ""},
		{"missing port", []string{"call", "tcp://127.0.0.1", "get_data"}, exitUsage, []string{"tcp://127.0.0.1 names no port", "try: tcp://127.0.0.1:9090"}, ""},
		{"exec and URL", []string{"--exec", execCmd, "call", urls["tcp"], "get_data"}, exitUsage, []string{"--exec and the URL " + urls["tcp"] + " given together"}, "key=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if tc.args[1] != "-v" {
				cleanStderr(t, r.stderr)
			}
			expect(t, r, tc.code, "")
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr %q lacks %q", r.stderr, w)
				}
			}
			if tc.not != "" && strings.Contains(r.stderr, tc.not) {
				t.Fatalf("stderr %q has %q", r.stderr, tc.not)
			}
		})
	}
	// A message with an embedded newline stays on one line.
	if got := oneLine("a\nb\n    caret"); got != "a; b\n    caret" {
		t.Fatalf("oneLine = %q", got)
	}
}

func TestServeHelpListsServeFlags(t *testing.T) {
	r := run(t, "", "serve", "--help")
	expect(t, r, 0, "")
	for _, w := range []string{"--listen", "--shutdown-timeout", "--framing"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("serve --help lacks %s:\n%s", w, r.stdout)
		}
	}
	for _, w := range []string{"--exec", "--timeout ", "--header", "--color"} {
		if strings.Contains(r.stdout, w) {
			t.Fatalf("serve --help lists %s:\n%s", w, r.stdout)
		}
	}
	// Other commands still list the global flags.
	if r := run(t, "", "call", "--help"); !strings.Contains(r.stdout, "--exec") {
		t.Fatalf("call --help lacks --exec")
	}
}

func TestBenchFlagsAndFailures(t *testing.T) {
	// -d is the data, as in call; -t the duration.
	r := run(t, "", "bench", urls["tcp"], "sum", "-d", "[1,2]", "-t", "200ms")
	expect(t, r, 0, "")
	// Any failed call: non-zero, with the breakdown.
	r = run(t, "", "bench", urls["tcp"], "sleep", "ms=x", "-n", "10")
	expect(t, r, exitRPCError, "")
	if !strings.Contains(r.stdout, "errors      10 (-32602 ×10)") || !strings.Contains(r.stderr, "10 of 10 calls failed (-32602 ×10)") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}
