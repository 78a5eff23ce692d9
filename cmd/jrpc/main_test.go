package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests drive the real binary, built once, against a real `jrpc serve`
// listening on TCP, a unix socket, HTTP and WebSocket, and against stdio
// servers spawned with --exec.
var (
	bin     string // the jrpc binary
	tmp     string
	urls    = map[string]string{} // transport → URL of the shared server
	srvLog  syncBuffer            // the shared server's stderr
	execCmd string                // --exec value for a stdio server
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	var err error
	tmp, err = os.MkdirTemp("", "jrpc-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bin = filepath.Join(tmp, "jrpc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	execCmd = bin + " serve --listen stdio:"
	sock := filepath.Join(tmp, "s.sock")
	srv := exec.Command(bin, "serve", "-v",
		"--listen", "tcp://127.0.0.1:0", "--listen", "unix://"+sock,
		"--listen", "http://127.0.0.1:0/rpc", "--listen", "ws://127.0.0.1:0/ws")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	if err := readListening(stderr, 4, urls, &srvLog); err != nil {
		fmt.Fprintf(os.Stderr, "serve: %v\n%s", err, srvLog.String())
		return 1
	}
	return m.Run()
}

var listeningRE = regexp.MustCompile(`^listening on ((\w+):\S*)$`)

// readListening reads "listening on URL" lines from r until n were seen,
// then keeps copying r into log.
func readListening(r io.Reader, n int, into map[string]string, log io.Writer) error {
	br := bufio.NewReader(r)
	found := make(chan error, 1)
	go func() {
		seen := 0
		for {
			line, err := br.ReadString('\n')
			log.Write([]byte(line))
			if m := listeningRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
				into[m[2]] = m[1]
				if seen++; seen == n {
					found <- nil
					io.Copy(log, br)
					return
				}
			}
			if err != nil {
				found <- fmt.Errorf("server output ended: %v", err)
				return
			}
		}
	}()
	select {
	case err := <-found:
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("no listening lines after 10s")
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the binary with stdin and args; NO_COLOR is cleared and the
// REPL history goes to a temporary file.
func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runEnv(t, nil, stdin, args...)
}

// runBound stops a run that hangs. It is a guard, not a measure: a call
// that sends 10 MiB (TestExitCodeRule) through a -race binary on a loaded
// 2-core machine has taken over 15 s.
const runBound = 60 * time.Second

func runEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(filterEnv(os.Environ(), "NO_COLOR", "JRPC_HISTORY"), "JRPC_HISTORY="+filepath.Join(tmp, "history"))
	cmd.Env = append(cmd.Env, env...)
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("jrpc %v: %v", args, err)
	}
	return r
}

func filterEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, e := range env {
		for _, n := range names {
			if strings.HasPrefix(e, n+"=") {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// expect checks the exit code and stdout of a run.
func expect(t *testing.T, r result, code int, stdout string) {
	t.Helper()
	if r.code != code || stdout != "" && r.stdout != stdout {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q", r.code, r.stdout, r.stderr, code, stdout)
	}
}

// targets returns the argument prefixes that reach the demo service over
// every transport.
func targets() map[string][]string {
	return map[string][]string{
		"tcp":       {urls["tcp"]},
		"unix":      {urls["unix"]},
		"http":      {urls["http"]},
		"ws":        {urls["ws"]},
		"stdio":     {"--exec", execCmd},
		"stdio-lsp": {"--framing", "lsp", "--exec", execCmd + " --framing lsp"},
	}
}

// with returns the command line for a command on a target: the URL comes
// right after the command name, --exec before it.
func with(tgt []string, command string, args ...string) []string {
	var out []string
	if tgt[0] == "--exec" || tgt[0] == "--framing" {
		out = append(append(out, tgt...), command)
	} else {
		out = append(out, command, tgt[0])
	}
	return append(out, args...)
}

func TestCallEveryTransport(t *testing.T) {
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			expect(t, run(t, "", with(tgt, "call", "subtract", "[42,23]")...), 0, "19\n")
			expect(t, run(t, "", with(tgt, "call", "subtract", "minuend=42", "subtrahend=23")...), 0, "19\n")
			expect(t, run(t, "", with(tgt, "call", "echo", `name=ada`, `n=5`, `tags=["x"]`, `q="5"`)...), 0, `{"name":"ada","n":5,"tags":["x"],"q":"5"}`+"\n")
			expect(t, run(t, "", with(tgt, "call", "get_data")...), 0, `["hello",5]`+"\n")

			// -v shows the envelopes exactly; --id is echoed.
			r := run(t, "", with(tgt, "call", "-v", "--id", `"req-7"`, "subtract", "[5,2]")...)
			expect(t, r, 0, "3\n")
			wantReq := `--> {"jsonrpc":"2.0","id":"req-7","method":"subtract","params":[5,2]}`
			wantResp := `<-- {"jsonrpc":"2.0","id":"req-7","result":3}`
			if !strings.Contains(r.stderr, wantReq) || !strings.Contains(r.stderr, wantResp) {
				t.Fatalf("-v stderr %q lacks %s / %s", r.stderr, wantReq, wantResp)
			}

			// A JSON-RPC error: exit 1, one JSON object on stderr.
			r = run(t, "", with(tgt, "call", "error", `{"code":-32050,"message":"nope","data":{"why":[1]}}`)...)
			expect(t, r, 1, "")
			var e struct {
				Code    int64
				Message string
				Data    json.RawMessage
			}
			if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || e.Code != -32050 || e.Message != "nope" || string(e.Data) != `{"why":[1]}` {
				t.Fatalf("stderr %q is not the error object (%v)", r.stderr, err)
			}
			r = run(t, "", with(tgt, "call", "no_such_method")...)
			expect(t, r, 1, "")
			if !strings.HasPrefix(r.stderr, `{"code":-32601,`) {
				t.Fatalf("stderr %q", r.stderr)
			}

			// notify: nothing printed, exit 0; -v shows the notification.
			expect(t, run(t, "", with(tgt, "notify", "notify_hello", "[7]")...), 0, "")
			r = run(t, "", with(tgt, "notify", "-v", "update", "a=1")...)
			expect(t, r, 0, "")
			if !strings.Contains(r.stderr, `--> {"jsonrpc":"2.0","method":"update","params":{"a":1}}`) {
				t.Fatalf("notify -v stderr %q", r.stderr)
			}
		})
	}
}

func TestCallParamsFromData(t *testing.T) {
	f := filepath.Join(tmp, "params.json")
	os.WriteFile(f, []byte("{\"minuend\": 10,\n \"subtrahend\": 4}\n"), 0o600)
	expect(t, run(t, "", "call", urls["tcp"], "subtract", "-d", "@"+f), 0, "6\n")
	expect(t, run(t, "[1,2,3]", "call", urls["tcp"], "sum", "-d", "@-"), 0, "6\n")
	expect(t, run(t, "", "call", urls["tcp"], "sum", "-d", "[4,4]"), 0, "8\n")

	r := run(t, "", "call", urls["tcp"], "sum", "-d", "@"+filepath.Join(tmp, "missing.json"))
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "missing.json") {
		t.Fatalf("stderr %q", r.stderr)
	}
	bad := filepath.Join(tmp, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"a\": 1,\n  \"b\": tru\n}\n"), 0o600)
	r = run(t, "", "call", urls["tcp"], "echo", "-d", "@"+bad)
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "at line 3, column") || !strings.Contains(r.stderr, `"b": tru`) {
		t.Fatalf("bad file: stderr %q", r.stderr)
	}
	expect(t, run(t, "", "call", urls["tcp"], "sum", "-d", "[1]", "[2]"), exitUsage, "")
}

func TestCallUsageErrors(t *testing.T) {
	tcp := urls["tcp"]
	for _, tc := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"invalid JSON points at the position", []string{"call", tcp, "echo", `{"a": 1,}`}, []string{"at column 9 (byte 8)", "    {\"a\": 1,}\n            ^"}},
		{"unclosed JSON", []string{"call", tcp, "echo", `[1, 2`}, []string{"unexpected end of input"}},
		{"scalar params", []string{"call", tcp, "echo", "5"}, []string{"must be a JSON array or object", "'[5]'"}},
		{"neither JSON nor key=value", []string{"call", tcp, "echo", "hello"}, []string{`neither JSON nor key=value`, `'["hello"]'`}},
		{"mixed pairs", []string{"call", tcp, "echo", "a=1", "b"}, []string{`"b" is not key=value`}},
		{"duplicate key", []string{"call", tcp, "echo", "a=1", "a=2"}, []string{`"a" given twice`}},
		{"missing URL", []string{"call"}, []string{"missing URL", "--exec"}},
		{"missing method", []string{"call", tcp}, []string{"missing arguments"}},
		{"not a URL", []string{"call", "127.0.0.1:9090", "x"}, []string{"not a URL", "tcp://127.0.0.1:9090"}},
		{"unsupported scheme", []string{"call", "ftp://127.0.0.1/", "x"}, []string{`unsupported URL scheme "ftp"`}},
		{"unknown flag", []string{"call", "--nope", tcp, "x"}, []string{"unknown flag: --nope", "jrpc call --help"}},
		{"unknown command", []string{"cal"}, []string{`unknown command "cal"`, "jrpc --help"}},
		{"bad id", []string{"call", "--id", "{}", tcp, "x"}, []string{"--id {} is not a JSON string, number or null"}},
		{"bad framing", []string{"--framing", "xml", "call", tcp, "x"}, []string{"--framing must be line or lsp"}},
		{"bad header", []string{"call", "-H", "nocolon", urls["http"], "x"}, []string{"is not K:V"}},
		{"bad exec quoting", []string{"--exec", "jrpc 'serve", "call", "x"}, []string{"unterminated single quote"}},
		{"too many args", []string{"describe", tcp, "a", "b"}, []string{"too many arguments (b)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			expect(t, r, exitUsage, "")
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
}

func TestCallTransportErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"tcp refused", []string{"call", "tcp://127.0.0.1:1", "x"}, []string{"cannot connect to tcp://127.0.0.1:1: connection refused", "jrpc serve --listen tcp://127.0.0.1:1"}},
		{"http refused", []string{"call", "http://127.0.0.1:1/", "x"}, []string{"http://127.0.0.1:1/", "connection refused"}},
		{"http refused raw", []string{"call", "-v", "http://127.0.0.1:1/", "x"}, []string{"http://127.0.0.1:1/", "connection refused"}},
		{"ws refused", []string{"call", "ws://127.0.0.1:1/", "x"}, []string{"ws://127.0.0.1:1/", "connection refused"}},
		{"no unix socket", []string{"call", "unix://" + filepath.Join(tmp, "none.sock"), "x"}, []string{"no socket at"}},
		{"timeout", []string{"call", "--timeout", "100ms", urls["tcp"], "sleep", "ms=2000"}, []string{"no answer from", "within 100ms", "--timeout"}},
		{"timeout http", []string{"call", "--timeout", "100ms", urls["http"], "sleep", "ms=2000"}, []string{"within 100ms"}},
		{"http 404", []string{"call", strings.TrimSuffix(urls["http"], "rpc") + "nothere", "x"}, []string{"404"}},
		{"http 404 raw", []string{"call", "-v", strings.TrimSuffix(urls["http"], "rpc") + "nothere", "x"}, []string{"HTTP 404", "check the path"}},
		{"exec not found", []string{"--exec", "no-such-command-jrpc", "call", "x"}, []string{"cannot start", "no-such-command-jrpc", "$PATH"}},
		{"exec exits", []string{"--exec", "false", "call", "x"}, []string{"exited (exit status 1) before answering"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			expect(t, r, exitTransport, "")
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
}

func TestExecShowsServerStderr(t *testing.T) {
	// The spawned server's stderr reaches ours: with -v it logs each call.
	r := run(t, "", "--exec", execCmd+" -v", "call", "subtract", "[1,2]")
	expect(t, r, 0, "-1\n")
	if !strings.Contains(r.stderr, "method=subtract") {
		t.Fatalf("stderr %q lacks the server's log", r.stderr)
	}
}

func TestOutputColour(t *testing.T) {
	// Piped: compact and plain. --color always: ANSI colours, even with NO_COLOR.
	expect(t, run(t, "", "call", urls["tcp"], "echo", `{"a": [1, true, null, "s"]}`), 0, `{"a":[1,true,null,"s"]}`+"\n")
	r := runEnv(t, []string{"NO_COLOR=1"}, "", "--color", "always", "call", urls["tcp"], "echo", `{"a":[1,true,null,"s"]}`)
	want := "{" + colKey + `"a"` + colReset + ":[" + colNumber + "1" + colReset + "," + colBool + "true" + colReset + "," + colNull + "null" + colReset + "," + colString + `"s"` + colReset + "]}\n"
	expect(t, r, 0, want)
}

func TestFormatPretty(t *testing.T) {
	got := string(output{pretty: true}.format(nil, []byte(`{"a":[1,2.50e3,{}],"b":{"c":"x\"y"},"d":[]}`)))
	want := "{\n  \"a\": [\n    1,\n    2.50e3,\n    {}\n  ],\n  \"b\": {\n    \"c\": \"x\\\"y\"\n  },\n  \"d\": []\n}"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBatch(t *testing.T) {
	lines := `{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,4]}
{"jsonrpc":"2.0","method":"notify_hello","params":[7]}

{"jsonrpc":"2.0","id":"two","method":"subtract","params":[42,23]}
`
	want := `{"id":1,"method":"sum","result":7}
{"method":"notify_hello","notification":true}
{"id":"two","method":"subtract","result":19}
`
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			expect(t, run(t, lines, with(tgt, "batch", "-")...), 0, want)
		})
	}
	// A JSON array from a file, with an error, an invalid entry and a
	// notification-only batch.
	f := filepath.Join(tmp, "batch.json")
	os.WriteFile(f, []byte(`[{"jsonrpc":"2.0","id":1,"method":"nope"},{"foo":1},{"jsonrpc":"2.0","id":2,"method":"get_data"}]`), 0o600)
	r := run(t, "", "batch", urls["tcp"], f)
	expect(t, r, exitRPCError, `{"id":1,"method":"nope","error":{"code":-32601,"message":"method not found: nope"}}
{"id":2,"method":"get_data","result":["hello",5]}
{"id":null,"error":{"code":-32600,"message":"invalid request: missing \"jsonrpc\":\"2.0\""},"unmatched":true}
`)
	for _, u := range []string{urls["tcp"], urls["http"]} {
		expect(t, run(t, `[{"jsonrpc":"2.0","method":"update"}]`, "batch", u, "-"), 0, `{"method":"update","notification":true}`+"\n")
	}
	r = run(t, "", "batch", "-v", urls["http"], f)
	if !strings.Contains(r.stderr, `--> [{"jsonrpc":"2.0","id":1,"method":"nope"},{"foo":1},`) || !strings.Contains(r.stderr, "<-- [") {
		t.Fatalf("batch -v stderr %q", r.stderr)
	}
	// Usage errors: empty, invalid line (named), missing file.
	expect(t, run(t, "\n\n", "batch", urls["tcp"], "-"), exitUsage, "")
	r = run(t, "{\"id\":1}\n{\"id\":2,}\n", "batch", urls["tcp"], "-")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "line 2 of standard input at column 9") || strings.Contains(r.stderr, "at line") {
		t.Fatalf("stderr %q", r.stderr)
	}
	expect(t, run(t, "", "batch", urls["tcp"], filepath.Join(tmp, "nope.json")), exitUsage, "")
	expect(t, run(t, lines, "batch", "tcp://127.0.0.1:1", "-"), exitTransport, "")
}

func TestDiscoverListDescribe(t *testing.T) {
	for _, name := range []string{"tcp", "http", "stdio"} {
		tgt := targets()[name]
		t.Run(name, func(t *testing.T) {
			r := run(t, "", with(tgt, "discover")...)
			expect(t, r, 0, "")
			var doc struct {
				OpenRPC string `json:"openrpc"`
				Methods []struct{ Name string }
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.OpenRPC == "" || len(doc.Methods) < 10 {
				t.Fatalf("discover: %v: %.200s", err, r.stdout)
			}
			r = run(t, "", with(tgt, "list")...)
			expect(t, r, 0, "")
			for _, w := range []string{"subtract(minuend number, subtrahend number) number", "Subtracts subtrahend from minuend.", "sum(", "sleep(ms integer) integer"} {
				if !strings.Contains(r.stdout, w) {
					t.Fatalf("list lacks %q:\n%s", w, r.stdout)
				}
			}
			r = run(t, "", with(tgt, "describe", "subtract")...)
			expect(t, r, 0, "")
			for _, w := range []string{"minuend", "subtrahend", "result: number", "by position or by name"} {
				if !strings.Contains(r.stdout, w) {
					t.Fatalf("describe lacks %q:\n%s", w, r.stdout)
				}
			}
		})
	}
	r := run(t, "", "describe", urls["tcp"], "subtrac")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, `no method "subtrac"`) || !strings.Contains(r.stderr, "did you mean subtract?") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestCallCheck(t *testing.T) {
	expect(t, run(t, "", "call", "--check", urls["tcp"], "subtract", "minuend=5", "subtrahend=2"), 0, "3\n")
	expect(t, run(t, "", "call", "--check", urls["tcp"], "subtract", "[5,2]"), 0, "3\n")
	// Other tests' sleep calls may end meanwhile: count the rejected ones only.
	rejected := func() int {
		return len(regexp.MustCompile(`method=sleep .*(error|code)=-32602`).FindAllString(srvLog.String(), -1))
	}
	before := rejected()
	r := run(t, "", "call", "--check", urls["tcp"], "sleep", `ms="long"`, "extra=1")
	expect(t, r, exitUsage, "")
	for _, w := range []string{"nothing was sent", "/ms: expected integer, got string", "/extra"} {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr %q lacks %q", r.stderr, w)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if after := rejected(); after != before {
		t.Fatalf("--check failed but the call reached the server")
	}
	r = run(t, "", "call", "--check", urls["tcp"], "subtract", "[5]")
	expect(t, r, exitUsage, "")
	// A server without rpc.discover: exit 1 with an explanation.
	r = run(t, "", "--exec", execCmd, "call", "--check", "nosuch")
	if r.code != exitUsage || !strings.Contains(r.stderr, `no method "nosuch"`) {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestREPL(t *testing.T) {
	in := `get_data
# a comment

subtract [42,23]
subtract minuend=5 subtrahend=7
nope
echo {"a": 1,}
.notify notify_hello [1]
.frob
.describe sum
sum [1,2]
.quit
sum [100]
`
	for _, name := range []string{"tcp", "http", "ws", "stdio"} {
		tgt := targets()[name]
		t.Run(name, func(t *testing.T) {
			r := run(t, in, with(tgt, "repl")...)
			expect(t, r, exitUsage, "") // lines failed: the worst was not understood
			lines := strings.SplitN(r.stdout, "\n", 4)
			if lines[0] != `["hello",5]` || lines[1] != "19" || lines[2] != "-2" {
				t.Fatalf("stdout %q", r.stdout)
			}
			if !strings.Contains(r.stdout, "sum(") || !strings.Contains(r.stdout, "...number) number") || !strings.HasSuffix(r.stdout, "\n3\n") {
				t.Fatalf("stdout %q: .describe or the last call missing, or .quit ignored", r.stdout)
			}
			for _, w := range []string{`{"code":-32601,"message":"method not found: nope"}`, "invalid JSON in PARAMS at column 9", "unknown command .frob"} {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr %q lacks %q", r.stderr, w)
				}
			}
		})
	}
	// The connection dropping ends the session with exit 3.
	expect(t, run(t, "get_data\n", "repl", "tcp://127.0.0.1:1"), exitTransport, "")
}

func TestREPLCompletionAndHistoryPath(t *testing.T) {
	r := &repl{methods: []string{"subtract", "sum", "sleep", "echo"}}
	for _, tc := range []struct {
		line string
		want string
	}{
		{"su", "subtract sum"},
		{"s", "sleep subtract sum"},
		{".d", ".describe"},
		{".describe su", ".describe |subtract sum"},
		{"sum [1", "sum |"},
	} {
		head, got, _ := r.complete(tc.line, len(tc.line))
		s := strings.Join(got, " ")
		if head != "" {
			s = head + "|" + s
		}
		if s != tc.want {
			t.Errorf("complete(%q) = %q, want %q", tc.line, s, tc.want)
		}
	}
	t.Setenv("JRPC_HISTORY", "")
	t.Setenv("XDG_STATE_HOME", "/state")
	if p := historyPath(); p != "/state/jrpc/history" {
		t.Errorf("historyPath = %q", p)
	}
	t.Setenv("JRPC_HISTORY", "/h")
	if p := historyPath(); p != "/h" {
		t.Errorf("historyPath = %q", p)
	}
}

func TestBench(t *testing.T) {
	type report struct {
		Requests, OK int64
		Connections  int
		Errors       map[string]int64
		Throughput   float64
		LatencyMS    map[string]float64 `json:"latency_ms"`
		Histogram    []struct {
			LeMS  float64 `json:"le_ms"`
			Count int64
		}
	}
	parseExit := func(t *testing.T, r result, code int) report {
		t.Helper()
		expect(t, r, code, "")
		var rep report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("--json output %q: %v", r.stdout, err)
		}
		var hsum int64
		for _, h := range rep.Histogram {
			hsum += h.Count
		}
		l := rep.LatencyMS
		if hsum != rep.Requests || !(l["p50"] <= l["p90"] && l["p90"] <= l["p99"] && l["p99"] <= l["max"]) || l["max"] <= 0 {
			t.Fatalf("inconsistent report %+v", rep)
		}
		return rep
	}
	parse := func(t *testing.T, r result) report { t.Helper(); return parseExit(t, r, 0) }
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			rep := parse(t, run(t, "", with(tgt, "bench", "subtract", "[42,23]", "-c", "4", "-n", "300", "--json")...))
			if rep.Requests != 300 || rep.OK != 300 || rep.Connections != 1 {
				t.Fatalf("%+v", rep)
			}
		})
	}
	rep := parseExit(t, run(t, "", "bench", urls["tcp"], "error", "-d", `{"code":-32042,"message":"x"}`, "-c", "3", "-n", "90", "--conns", "3", "--json"), exitRPCError)
	if rep.Errors["-32042"] != 90 || rep.OK != 0 || rep.Connections != 3 {
		t.Fatalf("%+v", rep)
	}
	// Duration and rate: 0.4 s at 100/s makes at most about 40 calls (a
	// busy machine may make fewer; the rate is a ceiling), and some.
	rep = parse(t, run(t, "", "bench", urls["http"], "sum", "[1]", "-c", "4", "-t", "400ms", "--rate", "100", "--json"))
	if rep.Requests < 1 || rep.Requests > 60 {
		t.Fatalf("rate 100/s for 0.4s made %d calls", rep.Requests)
	}
	r := run(t, "", "bench", urls["tcp"], "sleep", "ms=1", "-c", "2", "-n", "50")
	expect(t, r, 0, "")
	for _, w := range []string{"50 calls", "throughput", "errors      0", "p50", "p99", "max", "histogram", "█"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("report lacks %q:\n%s", w, r.stdout)
		}
	}
	expect(t, run(t, "", "bench", urls["tcp"], "sum"), exitUsage, "")
	expect(t, run(t, "", "bench", urls["tcp"], "sum", "-n", "5", "-t", "1s"), exitUsage, "")
	expect(t, run(t, "", "bench", urls["tcp"], "nope", "-n", "5"), exitRPCError, "")
	expect(t, run(t, "", "bench", "tcp://127.0.0.1:1", "sum", "-n", "5"), exitTransport, "")
}

func TestHistPercentiles(t *testing.T) {
	var h hist
	for i := 1; i <= 10000; i++ {
		h.add(time.Duration(i) * time.Microsecond)
	}
	for _, p := range []float64{50, 90, 99} {
		want := time.Duration(p*100) * time.Microsecond
		got := h.percentile(p)
		if d := float64(got-want) / float64(want); d < 0 || d > 0.02 {
			t.Errorf("p%v = %v, want %v within 2%%", p, got, want)
		}
	}
	if h.percentile(100) != 10*time.Millisecond || h.max != 10*time.Millisecond {
		t.Errorf("p100 %v max %v", h.percentile(100), h.max)
	}
}

func TestServeStdio(t *testing.T) {
	// stdout carries only responses; the sleeping call still in flight
	// when input ends is answered before the server exits.
	in := `{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":200}}
{"jsonrpc":"2.0","method":"notify_hello"}
{"jsonrpc":"2.0","id":2,"method":"subtract","params":[3,1]}
`
	start := time.Now()
	r := run(t, in, "serve", "--listen", "stdio:")
	expect(t, r, 0, "")
	if time.Since(start) < 200*time.Millisecond {
		t.Fatalf("exited before the in-flight call finished")
	}
	got := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(got) != 2 || !strings.Contains(r.stdout, `{"jsonrpc":"2.0","id":1,"result":200}`) || !strings.Contains(r.stdout, `{"jsonrpc":"2.0","id":2,"result":2}`) {
		t.Fatalf("stdout %q", r.stdout)
	}
	// Content-Length framing.
	body := `{"jsonrpc":"2.0","id":1,"method":"get_data"}`
	r = run(t, fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body), "serve", "--listen", "stdio:", "--framing", "lsp")
	expect(t, r, 0, "")
	if want := `{"jsonrpc":"2.0","id":1,"result":["hello",5]}`; r.stdout != fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(want), want) {
		t.Fatalf("stdout %q", r.stdout)
	}
}

func TestServeSignalFinishesInFlight(t *testing.T) {
	srv := exec.Command(bin, "serve", "--listen", "tcp://127.0.0.1:0", "--listen", "http://127.0.0.1:0/")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	var log syncBuffer
	u := map[string]string{}
	if err := readListening(stderr, 2, u, &log); err != nil {
		t.Fatal(err, log.String())
	}
	done := make(chan result, 2)
	for _, url := range []string{u["tcp"], u["http"]} {
		go func() { done <- run(t, "", "call", url, "sleep", "ms=1500") }()
	}
	// Long enough for both clients to start and send on a busy machine,
	// well before their calls end.
	time.Sleep(700 * time.Millisecond)
	srv.Process.Signal(syscall.SIGTERM)
	for range 2 {
		expect(t, <-done, 0, "1500\n")
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve exited with %v; log:\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "shutting down") {
		t.Fatalf("log %q", log.String())
	}
	// Afterwards the port is closed.
	expect(t, run(t, "", "call", u["tcp"], "get_data"), exitTransport, "")
}

func TestServeErrors(t *testing.T) {
	r := run(t, "", "serve", "--listen", "ftp://127.0.0.1:1")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "tcp://127.0.0.1:9090") {
		t.Fatalf("stderr %q", r.stderr)
	}
	// The shared server holds this port already.
	r = run(t, "", "serve", "--listen", urls["tcp"])
	expect(t, r, exitTransport, "")
	if !strings.Contains(r.stderr, "cannot listen on "+urls["tcp"]) || !strings.Contains(r.stderr, "port 0") {
		t.Fatalf("stderr %q", r.stderr)
	}
	expect(t, run(t, "", "serve", "extra"), exitUsage, "")
	// -v logs each call (this test's own, so that it passes run alone).
	expect(t, run(t, "", "call", urls["tcp"], "subtract", "[1,1]"), 0, "0\n")
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(srvLog.String(), "level=INFO msg=call method=subtract"); {
		if time.Now().After(deadline) {
			t.Fatalf("server log lacks call lines:\n%.500s", srvLog.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeVerboseJSONLogs(t *testing.T) {
	srv := exec.Command(bin, "serve", "-v", "--log-format", "json", "--listen", "tcp://127.0.0.1:0")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	defer srv.Process.Kill()
	var log syncBuffer
	u := map[string]string{}
	if err := readListening(stderr, 1, u, &log); err != nil {
		t.Fatal(err, log.String())
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(u["tcp"], "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	for _, msg := range []string{`{"jsonrpc":"2.0","id":1,"method":"subtract","params":[3,1]}`, `{"jsonrpc":"2.0","id":2,"method":"nope"}`, `{"jsonrpc"`} {
		fmt.Fprintln(nc, msg)
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	nc.Close()
	want := []map[string]any{
		{"level": "INFO", "msg": "call", "method": "subtract", "id": "1", "outcome": "ok", "transport": "tcp"},
		{"level": "WARN", "msg": "call", "method": "nope", "id": "2", "outcome": "error", "code": -32601.0, "transport": "tcp"},
		{"level": "DEBUG", "msg": "jsonrpc: parse error", "code": -32700.0, "transport": "tcp"},
		{"level": "DEBUG", "msg": "jsonrpc: connection closed", "error": "EOF", "transport": "tcp"},
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, w := range want {
		for !hasJSONRecord(log.String(), w) {
			if time.Now().After(deadline) {
				t.Fatalf("no record %v in:\n%s", w, log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// hasJSONRecord reports whether one JSON line of log has every field of want.
func hasJSONRecord(log string, want map[string]any) bool {
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		ok := true
		for k, v := range want {
			if rec[k] != v {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func TestCompletionAndHelp(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := run(t, "", "completion", sh)
		expect(t, r, 0, "")
		if !strings.Contains(r.stdout, "jrpc") || len(r.stdout) < 500 {
			t.Fatalf("%s completion: %.200q", sh, r.stdout)
		}
	}
	r := run(t, "", "--help")
	expect(t, r, 0, "")
	for _, w := range []string{"Exit codes:", "  1    the server answered with a JSON-RPC error", "  2    bad usage", "  3    the exchange failed", "serve", "bench", "repl"} {
		if !strings.Contains(r.stdout, w) {
			t.Fatalf("help lacks %q", w)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string]string{
		`jrpc serve --listen stdio:`: "jrpc|serve|--listen|stdio:",
		`a 'b c' "d \"e\"" f\ g`:     `a|b c|d "e"|f g`,
		`  x   ''  `:                 "x|",
		`"it's" 'say "hi"'`:          `it's|say "hi"`,
	} {
		got, err := splitCommand(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`a 'b`, `a "b`, `a "b\"`} {
		if got, err := splitCommand(in); err == nil {
			t.Errorf("splitCommand(%q) = %q, want an unterminated quote", in, got)
		}
	}
	if got, err := splitCommand(`a\`); err != nil || strings.Join(got, "|") != "a" {
		t.Errorf("a trailing backslash: %q %v", got, err)
	}
}

// TestServeStdioPeerFaultsExitZero: over stdio the one connection is the
// whole server; when the peer ends it (end of input, or a Content-Length
// header no stream can recover from, answered first) jrpc serve logs why
// and exits 0: the server did not fail (issue 12 point 10; before, exit 3).
// The framing is detected on stdio as on sockets.
func TestServeStdioPeerFaultsExitZero(t *testing.T) {
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	req := `{"jsonrpc":"2.0","id":1,"method":"subtract","params":[3,1]}`
	ok := `{"jsonrpc":"2.0","id":1,"result":2}`
	headerErr := func(msg string) string {
		return frame(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid message header: ` + msg + `"}}`)
	}
	for _, tc := range []struct {
		name, in, out, log string
		args               []string
	}{
		{"auto: a line", req + "\n", ok + "\n", "", nil},
		{"auto: a header", frame(req), frame(ok), "", nil},
		{"auto: not a request", "42\n", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not a JSON object"}}` + "\n", "", nil},
		{"negative length", "Content-Length: -1\r\n\r\n", headerErr(`Content-Length must be a non-negative integer, got \" -1\"`), "cannot be read further", nil},
		{"non-numeric length", "Content-Length: x\r\n\r\n", headerErr(`Content-Length must be a non-negative integer, got \" x\"`), "cannot be read further", []string{"--framing", "lsp"}},
		{"missing length", "Content-Type: a/b\r\n\r\n{}", headerErr("missing Content-Length"), "cannot be read further", []string{"--framing", "lsp"}},
		{"duplicated length", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", headerErr("Content-Length given twice"), "cannot be read further", nil},
		{"over the limit", "Content-Length: 99999999\r\n\r\n", frame(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: the limit is 10485760 bytes"}}`), "cannot be read further", nil},
		{"endless header line", "Content-Length: " + strings.Repeat("1", 9000), headerErr("header section too long"), "cannot be read further", nil},
		{"cut in a body", frame(req) + "Content-Length: 9\r\n\r\n{", frame(ok), "in the middle of a message", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.in, append([]string{"serve", "--listen", "stdio:"}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.out || !strings.Contains(r.stderr, tc.log) {
				t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %q (want %q)", r.code, r.stdout, tc.out, r.stderr, tc.log)
			}
		})
	}
}

// TestServeUnixSocketPath: serve refuses a unix:// path that holds a file
// (left untouched) or a live socket, with a hint; --socket-mode sets the
// socket file's permissions.
func TestServeUnixSocketPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("keep"), 0o644)
	r := run(t, "", "serve", "--listen", "unix://"+file)
	if b, _ := os.ReadFile(file); r.code != exitTransport || string(b) != "keep" || !strings.Contains(r.stderr, "not a socket") {
		t.Fatalf("exit %d, file %q, stderr %q", r.code, b, r.stderr)
	}
	// The shared server's socket is live.
	r = run(t, "", "serve", "--listen", urls["unix"])
	if r.code != exitTransport || !strings.Contains(r.stderr, "another server answers on this socket") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, "", "serve", "--socket-mode", "rw", "--listen", "stdio:"); r.code != exitUsage {
		t.Fatalf("--socket-mode rw: exit %d, stderr %q", r.code, r.stderr)
	}

	sock, err := os.MkdirTemp("", "jrpc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	sock = filepath.Join(sock, "s")
	srv := exec.Command(bin, "serve", "--socket-mode", "0660", "--listen", "unix://"+sock)
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	if err := readListening(stderr, 1, map[string]string{}, &log); err != nil {
		srv.Process.Kill()
		srv.Wait()
		t.Fatalf("%v\n%s", err, log.String())
	}
	fi, err := os.Lstat(sock)
	srv.Process.Signal(syscall.SIGTERM)
	srv.Wait()
	if err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket mode %v (%v)", fi.Mode(), err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left after shutdown: %v", err)
	}
}
