package main

import (
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := run(t, "", args...)
		expect(t, r, 0, "")
		if !strings.HasPrefix(r.stdout, "jrpc ") || !strings.Contains(r.stdout, " go1.") || strings.Contains(r.stdout, "jrpc jrpc") {
			t.Fatalf("%v: %q", args, r.stdout)
		}
	}
	// Both print the module, library and Go versions (issue 39 point 2:
	// --version printed the first line only).
	r := run(t, "", "version")
	for _, w := range []string{"module  github.com/seedhq/jsonrpc/cmd/jrpc", "library github.com/seedhq/jsonrpc", "\n  go      go1."} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("version lacks %q: %q", w, r.stdout)
		}
	}
	if f := run(t, "", "--version"); f.stdout != r.stdout {
		t.Fatalf("--version printed %q, version %q", f.stdout, r.stdout)
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
	// The shell completes the target with the endpoints' names.
	if r := runEnv(t, env, "", "__complete", "call", "@"); !strings.HasPrefix(r.stdout, "@local\t"+urls["tcp"]+"\n@spawn\t"+execCmd+"\n@web\t") {
		t.Fatalf("endpoint completion %q", r.stdout)
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
	r = run(t, "", "bench", urls["tcp"], "sum", `["x"]`, "-n", "10")
	expect(t, r, exitRPCError, "")
	if !strings.Contains(r.stdout, "errors      10 (-32602 ×10)") || !strings.Contains(r.stderr, "10 of 10 calls failed (-32602 ×10)") {
		t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestOutputRawVerboseListDescribe(t *testing.T) {
	// --raw: the whole envelope, on every transport.
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			expect(t, run(t, "", with(tgt, "call", "--raw", "subtract", "[5,1]")...), 0, `{"jsonrpc":"2.0","id":1,"result":4}`+"\n")
			expect(t, run(t, "", with(tgt, "call", "--raw", "--id", `"x"`, "nope")...), exitRPCError, `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"method not found: nope"}}`+"\n")
		})
	}
	// -v over HTTP: request and status lines, headers both ways.
	r := run(t, "", "call", "-v", "-H", "X-Trace: 7", urls["http"], "get_data")
	expect(t, r, 0, `["hello",5]`+"\n")
	for _, w := range []string{"> POST /rpc HTTP/1.1\n", "> Host: 127.0.0.1:", "> Content-Type: application/json\n", "> X-Trace: 7\n",
		"--> {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get_data\"}\n", "< HTTP/1.1 200 OK\n", "< Content-Type: application/json", "<-- {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"hello\",5]}"} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("-v stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if strings.Index(r.stderr, "> POST") > strings.Index(r.stderr, "-->") || strings.Index(r.stderr, "< HTTP/1.1") > strings.Index(r.stderr, "<--") {
		t.Fatalf("headers not before their bodies:\n%s", r.stderr)
	}
	// list --json.
	r = run(t, "", "list", "--json", urls["tcp"])
	expect(t, r, 0, "")
	var items []struct{ Name, Signature, Summary string }
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil || len(items) < 10 {
		t.Fatalf("list --json: %v %q", err, r.stdout)
	}
	for _, it := range items {
		if it.Name == "subtract" && it.Signature != "subtract(minuend number, subtrahend number) number" {
			t.Fatalf("%+v", it)
		}
	}
	if got := fitWidth("abcdef", 4); got != "abc…" {
		t.Fatalf("fitWidth = %q", got)
	}
	// describe: a command line to try, built from the example or the schema.
	for method, want := range map[string]string{
		"sum":      "try: jrpc call " + urls["tcp"] + " sum '[1,2,4]'\n",
		"subtract": "try: jrpc call " + urls["tcp"] + " subtract minuend=42 subtrahend=23\n",
		"sleep":    "try: jrpc call " + urls["tcp"] + " sleep ms=0\n",
	} {
		r := run(t, "", "describe", urls["tcp"], method)
		expect(t, r, 0, "")
		if !strings.HasSuffix(r.stdout, want) || strings.Contains(r.stdout, "arg1=") {
			t.Fatalf("describe %s:\n%s", method, r.stdout)
		}
	}
	r = run(t, "", "--exec", execCmd, "describe", "sum")
	if !strings.Contains(r.stdout, "example \"three\": (1, 2, 4) → 7") || !strings.Contains(r.stdout, "try: jrpc --exec '"+execCmd+"' call sum '[1,2,4]'") {
		t.Fatalf("describe sum over --exec:\n%s", r.stdout)
	}
}

func TestSampler(t *testing.T) {
	min3 := 3.0
	two := 2
	s := &openrpc.Schema{Type: "object", Required: []string{"n", "tags", "when", "ref"}, Properties: map[string]*openrpc.Schema{
		"n":     {Type: "integer", Minimum: &min3},
		"tags":  {Type: "array", Items: &openrpc.Schema{Type: "string"}, MinItems: &two},
		"when":  {Type: "string", Format: "date-time"},
		"color": {Enum: []any{"red", "green"}},
		"ref":   {Ref: "#/components/schemas/Point"},
	}}
	defs := map[string]*openrpc.Schema{"Point": {Type: "object", Required: []string{"x"}, Properties: map[string]*openrpc.Schema{"x": {Types: []string{"null", "number"}}}}}
	got := string(sampler{defs: defs}.sample(s))
	if want := `{"n":3,"ref":{"x":1},"tags":["text","text"],"when":"2026-01-02T15:04:05Z"}`; got != want {
		t.Fatalf("sample = %s, want %s", got, want)
	}
	got = string(sampler{defs: defs, all: true}.sample(s))
	if !strings.Contains(got, `"color":"red"`) {
		t.Fatalf("sample with all properties = %s", got)
	}
}

func TestShellCompletionOfMethods(t *testing.T) {
	cache := t.TempDir()
	env := []string{"XDG_CACHE_HOME=" + cache}
	url, srv := startServer(t, "127.0.0.1:0")
	r := runEnv(t, env, "", "__complete", "call", url, "su")
	expect(t, r, 0, "")
	if !strings.HasPrefix(r.stdout, "subtract\tSubtracts subtrahend from minuend.\nsum\t") || !strings.HasSuffix(r.stdout, ":4\n") {
		t.Fatalf("method completion %q", r.stdout)
	}
	// After the method: its param names, those not given yet.
	r = runEnv(t, env, "", "__complete", "call", url, "subtract", "minuend=1", "")
	if r.stdout != "subtrahend=\n:6\n" {
		t.Fatalf("param completion %q", r.stdout)
	}
	// describe completes methods too; over --exec as well.
	if r := runEnv(t, env, "", "__complete", "describe", url, "tools/"); !strings.HasPrefix(r.stdout, "tools/call\t") {
		t.Fatalf("describe completion %q", r.stdout)
	}
	if r := runEnv(t, env, "", "__complete", "--exec", execCmd, "call", "get_"); !strings.HasPrefix(r.stdout, "get_data\t") {
		t.Fatalf("--exec completion %q", r.stdout)
	}
	// The document is cached: with the server gone, Tab still completes;
	// with another cache (nothing cached), nothing comes.
	srv.Process.Kill()
	srv.Wait()
	if r := runEnv(t, env, "", "__complete", "call", url, "su"); !strings.HasPrefix(r.stdout, "subtract\t") {
		t.Fatalf("cached completion %q", r.stdout)
	}
	if r := runEnv(t, []string{"XDG_CACHE_HOME=" + t.TempDir()}, "", "__complete", "call", url, "su"); r.stdout != ":4\n" {
		t.Fatalf("completion without server or cache %q", r.stdout)
	}
}

func TestEndpointTrustsItsCA(t *testing.T) {
	// An HTTPS server with a certificate of its own CA: refused without the
	// CA, reached with an endpoint that names it.
	ts := httptest.NewTLSServer(&jsonrpc.Server{Handler: callbackMux()})
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600)
	r := run(t, "", "call", ts.URL, "nope")
	expect(t, r, exitTransport, "")
	if !strings.Contains(r.stderr, "unknown authority") || !strings.Contains(r.stderr, "--cacert FILE (or ca = FILE in an @endpoint)") {
		t.Fatalf("stderr %q", r.stderr)
	}
	cfg := filepath.Join(t.TempDir(), "config")
	os.WriteFile(cfg, []byte("[secure]\nurl = "+ts.URL+"\nca = "+ca+"\n"), 0o600)
	env := []string{"JRPC_CONFIG=" + cfg}
	for _, args := range [][]string{{"call", "@secure", "nope"}, {"call", "-v", "@secure", "nope"}} {
		r := runEnv(t, env, "", args...)
		if r.code != exitRPCError || !strings.Contains(r.stderr, `"code":-32601`) {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

func TestListFitsTheTerminal(t *testing.T) {
	s := startPTYCols(t, 72, "list", urls["tcp"])
	s.waitFor(0, "tools/list(")
	s.cmd.Wait()
	out := s.out.String()
	for _, line := range strings.Split(strings.TrimRight(out, "\r\n"), "\r\n") {
		if n := utf8.RuneCountInString(line); n > 72 {
			t.Fatalf("line of %d columns on a 72-column terminal: %q", n, line)
		}
	}
	if !strings.Contains(out, "…") || !strings.Contains(out, "subtract(minuend number, subtrahend number) number") {
		t.Fatalf("list on a terminal:\n%s", out)
	}
}

// TestReadEndpointsRefusals: each malformed config file is refused with
// the line and what is wrong; a good one reads whole.
func TestReadEndpointsRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ text, say string }{
		{"[a b]\nurl = tcp://x:1\n", `:1: "[a b]" is not a section header`},
		{"[a]\nurl = tcp://x:1\n[a]\n", ":3: endpoint [a] defined twice"},
		{"url = tcp://x:1\n", ":1: url = … comes before any [name] section"},
		{"[a]\nurl\n", `:2: "url" is not key = value`},
		{"[a]\nurl = tcp://x:1\nexec = cat\n", "needs exactly one of url"},
		{"[a]\nurl = tcp://x:1\ncert = c.pem\n", "cert without key"},
	} {
		path := filepath.Join(dir, "config")
		os.WriteFile(path, []byte(c.text), 0o600)
		if _, err := readEndpoints(path); err == nil || !strings.Contains(err.Error(), c.say) {
			t.Errorf("%q: %v, want %q", c.text, err, c.say)
		}
	}
	path := filepath.Join(dir, "good")
	os.WriteFile(path, []byte("# endpoints\n[local]\nurl = tcp://127.0.0.1:9090  # the demo\nheader = A: 1\nheader = B: 2\n\n[lsp]\nexec = gopls serve\nframing = lsp\n"), 0o600)
	eps, err := readEndpoints(path)
	if err != nil || len(eps) != 2 || eps["local"].url != "tcp://127.0.0.1:9090" || len(eps["local"].headers) != 2 || eps["lsp"].framing != "lsp" {
		t.Fatalf("%v %+v", err, eps)
	}
}
