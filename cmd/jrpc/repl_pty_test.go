package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptySession is jrpc running on a pseudo-terminal, as a user would type.
type ptySession struct {
	t   *testing.T
	f   *os.File
	out syncBuffer
	cmd *exec.Cmd
}

func startPTY(t *testing.T, args ...string) *ptySession {
	t.Helper()
	return startPTYCols(t, 200, args...)
}

// startPTYCols starts jrpc on a terminal cols columns wide.
func startPTYCols(t *testing.T, cols uint16, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(filterEnv(os.Environ(), "NO_COLOR", "JRPC_HISTORY", "TERM"), "TERM=xterm", "NO_COLOR=1", "JRPC_HISTORY="+filepath.Join(t.TempDir(), "history"))
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, f: f, cmd: cmd}
	go io.Copy(&s.out, f)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return s
}

func (s *ptySession) typeKeys(keys string) {
	s.t.Helper()
	if _, err := s.f.Write([]byte(keys)); err != nil {
		s.t.Fatal(err)
	}
}

// waitFor waits until the terminal has shown want (after the offset from),
// and returns the offset just past it.
func (s *ptySession) waitFor(from int, want string) int {
	s.t.Helper()
	// A bound, not a timing: a loaded CI host once took over 10 s to show
	// the first prompt.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		out := s.out.String()
		if i := strings.Index(out[min(from, len(out)):], want); i >= 0 {
			return from + i + len(want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// SIGQUIT makes jrpc print its goroutines on the terminal: where it waits.
	s.cmd.Process.Signal(syscall.SIGQUIT)
	time.Sleep(time.Second)
	s.t.Fatalf("the terminal never showed %q; it shows:\n%q", want, s.out.String()[min(from, len(s.out.String())):])
	return 0
}

// startServer runs `jrpc serve` on addr (127.0.0.1:0 for a free port) and
// returns its tcp:// URL.
func startServer(t *testing.T, addr string) (string, *exec.Cmd) {
	t.Helper()
	return startListening(t, nil, "serve", "--listen", "tcp://"+addr)
}

// startListening runs jrpc with args (and env added) until the test ends,
// and returns the URL of the one "listening on" line it prints.
func startListening(t *testing.T, env []string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	u := map[string]string{}
	var log syncBuffer
	if err := readListening(stderr, 1, u, &log); err != nil {
		t.Fatal(err, log.String())
	}
	for _, v := range u {
		return v, cmd
	}
	return "", cmd
}

func TestREPLTerminal(t *testing.T) {
	url, srv := startServer(t, "127.0.0.1:0")
	s := startPTY(t, "repl", url)
	at := s.waitFor(0, "jrpc> ")

	// Completion of a param name from the schema: subtract min<Tab> → minuend=.
	s.typeKeys("subtract min\t")
	at = s.waitFor(at, "minuend=")
	s.typeKeys("42 sub\t")
	at = s.waitFor(at, "subtrahend=")
	s.typeKeys("2\r")
	at = s.waitFor(at, "\r\n40\r\n")

	// Multi-line input: the JSON is not closed, so the line goes on.
	s.typeKeys(`echo {"a":` + "\r")
	at = s.waitFor(at, "...> ")
	s.typeKeys(`[1,` + "\r")
	at = s.waitFor(at, "...> ")
	s.typeKeys(`2]}` + "\r")
	at = s.waitFor(at, "\"a\": [\r\n    1,\r\n    2\r\n  ]")

	// Ctrl-C at a continuation line drops the whole entry.
	s.typeKeys(`echo {"b":` + "\r")
	at = s.waitFor(at, "...> ")
	s.typeKeys("\x03")
	at = s.waitFor(at, "jrpc> ")
	s.typeKeys("sum [1,1]\r")
	at = s.waitFor(at, "\r\n2\r\n")

	// Ctrl-C during a call cancels the call, not the session.
	s.typeKeys("sleep ms=20000\r")
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	s.typeKeys("\x03")
	at = s.waitFor(at, "(call cancelled)")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the call ended %v after Ctrl-C", d)
	}
	s.typeKeys("get_data\r")
	at = s.waitFor(at, `"hello"`)

	// The server restarts on the same port: the next line reconnects.
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	startServer(t, strings.TrimPrefix(url, "tcp://"))
	// The first line after the restart may meet the old connection (a
	// client that is not reading does not see the peer go): it then fails,
	// and the session reconnects at once.
	s.typeKeys("sum [2,3]\r")
	at = s.waitFor(at, "reconnected")
	if !strings.Contains(s.out.String(), "\r\n5\r\n") {
		s.typeKeys("sum [2,3]\r")
		s.waitFor(at, "\r\n5\r\n")
	}

	// Ctrl-D leaves with exit 0.
	s.typeKeys("\x04")
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("repl exited with %v:\n%s", err, s.out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("repl did not exit on Ctrl-D")
	}
}

func TestREPLPipedExitCodeAndReconnect(t *testing.T) {
	// Every call fine: 0. A JSON-RPC error: 1.
	expect(t, run(t, "sum [1,2]\n", "repl", urls["tcp"]), 0, "3\n")
	expect(t, run(t, "sum [1,2]\nnope\n", "repl", urls["tcp"]), exitRPCError, "3\n")
	// A multi-line call in a script.
	expect(t, run(t, "echo {\"a\":\n 1}\n", "repl", urls["tcp"]), 0, `{"a":1}`+"\n")

	// The server goes away between lines and comes back: the session goes on.
	url, srv := startServer(t, "127.0.0.1:0")
	cmd := exec.Command(bin, "repl", url)
	in, _ := cmd.StdinPipe()
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(in, "sum [1]\n")
	waitBuf(t, &out, "1\n")
	srv.Process.Signal(syscall.SIGKILL)
	srv.Wait()
	startServer(t, strings.TrimPrefix(url, "tcp://"))
	io.WriteString(in, "sum [2]\n")
	io.WriteString(in, "sum [3]\n")
	in.Close()
	err := cmd.Wait()
	// sum [2] may fail on the old connection (exit 3 then), never twice.
	if !strings.HasSuffix(out.String(), "3\n") || strings.Count(out.String(), "2\n") > 1 || !strings.Contains(errb.String(), "reconnected") {
		t.Fatalf("exit %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
}

func waitBuf(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("never got %q; have %q", want, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestREPLParamsAsCommandLine: the REPL reads a line's PARAMS as jrpc call
// reads its arguments: JSON values inside key=value pairs keep their quotes
// (issue 28, point 1), and a value that only looks like JSON is sent as a
// string with a note, never changed silently.
func TestREPLParamsAsCommandLine(t *testing.T) {
	for _, tc := range []struct {
		line string   // typed in the REPL
		argv []string // the same params given to jrpc call
	}{
		{`echo x={"a":1}`, []string{"echo", `x={"a":1}`}},
		{`echo x={"a": [1, 2]} y="a b" z='{"q":1}'`, []string{"echo", `x={"a": [1, 2]}`, `y="a b"`, `z={"q":1}`}},
		{`echo name=ada n=5 q="5" s='it''s' t=a\b`, []string{"echo", "name=ada", "n=5", `q="5"`, "s=its", `t=a\b`}},
		{`tools/call name=add arguments={"a":1,"b":2}`, []string{"tools/call", "name=add", `arguments={"a":1,"b":2}`}},
		{`echo {"a": "x y"}`, []string{"echo", `{"a": "x y"}`}},
		{`sum [1, 2]`, []string{"sum", "[1, 2]"}},
		{`echo w={a:1}`, []string{"echo", "w={a:1}"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			want := run(t, "", append([]string{"call", urls["tcp"]}, tc.argv...)...)
			got := run(t, tc.line+"\n", "repl", urls["tcp"])
			if got.code != 0 || want.code != 0 || got.stdout != want.stdout {
				t.Fatalf("repl: exit %d %q %s; call: exit %d %q %s", got.code, got.stdout, got.stderr, want.code, want.stdout, want.stderr)
			}
			if strings.Contains(tc.line, "{a:1}") {
				if got.stdout != `{"w":"{a:1}"}`+"\n" || !strings.Contains(got.stderr, "w={a:1} is not valid JSON, so it is sent as a string") || !strings.Contains(want.stderr, "is not valid JSON") {
					t.Fatalf("no note on the changed value: repl %q, call %q", got.stderr, want.stderr)
				}
			} else if got.stderr != "" {
				t.Fatalf("stderr %q", got.stderr)
			}
		})
	}
	r := run(t, `tools/call name=add arguments={"a":1,"b":2}`+"\n", "repl", urls["tcp"])
	expect(t, r, 0, `{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"isError":false}`+"\n")
}

// TestREPLTerminalKeyValueJSON types issue 28's lines on a terminal.
func TestREPLTerminalKeyValueJSON(t *testing.T) {
	s := startPTY(t, "repl", urls["tcp"])
	at := s.waitFor(0, "jrpc> ")
	s.typeKeys(`echo x={"a":1}` + "\r")
	at = s.waitFor(at, "{\r\n  \"x\": {\r\n    \"a\": 1\r\n  }\r\n}")
	s.typeKeys(`tools/call name=add arguments={"a":1,"b":2}` + "\r")
	at = s.waitFor(at, `"sum": 3`)
	// A value's JSON may go on over lines, as whole JSON params do.
	s.typeKeys(`echo x={"a":` + "\r")
	at = s.waitFor(at, "...> ")
	s.typeKeys(`[1, 2]}` + "\r")
	at = s.waitFor(at, "\"x\": {\r\n    \"a\": [")
	s.typeKeys(`echo w={a:1}` + "\r")
	s.waitFor(at, "w={a:1} is not valid JSON, so it is sent as a string")
}
