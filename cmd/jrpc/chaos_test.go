package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var chaosListeningRE = regexp.MustCompile(`^chaos: listening on (\S+) for`)

// startChaos runs `jrpc chaos` with args and returns the proxy's URL and
// its stderr so far (the fault reports), read on as the test goes.
func startChaos(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"chaos"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	log := &syncBuffer{}
	found := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stderr)
		for {
			line, err := br.ReadString('\n')
			log.Write([]byte(line))
			if m := chaosListeningRE.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case u := <-found:
		return u, log
	case <-time.After(20 * time.Second):
		t.Fatalf("jrpc chaos did not start: %s", log)
	}
	return "", nil
}

// waitReport waits (bounded) for want in the proxy's reports.
func waitReport(t *testing.T, log *syncBuffer, want string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(log.String(), want) {
			return
		}
	}
	t.Fatalf("no %q in the reports: %s", want, log)
}

// jrpc chaos in front of jrpc serve, on each of its transports: a call no
// fault matches passes, the second subtract gets the injected error (exit
// 1, the error printed), a dropped one times out (exit 3), each reported.
func TestChaosInFrontOfServe(t *testing.T) {
	for _, scheme := range []string{"tcp", "unix", "ws", "http"} {
		t.Run(scheme, func(t *testing.T) {
			listen := scheme + "://127.0.0.1:0/"
			if scheme == "unix" {
				listen = "unix://" + filepath.Join(t.TempDir(), "chaos.sock")
			}
			u, log := startChaos(t, "--listen", listen, urls[scheme],
				"--fault", "method=subtract,dir=in,nth=2,error=-32042", "--fault", "method=sum,dir=in,drop")
			expect(t, run(t, "", "call", u, "subtract", "[42,23]"), 0, "19\n")
			r := run(t, "", "call", u, "subtract", "[42,23]")
			if r.code != 1 || !strings.Contains(r.stderr, "-32042") {
				t.Fatalf("second call: exit %d, %s", r.code, r.stderr)
			}
			waitReport(t, log, "chaos: error dir=in method=subtract msg=1 conn=2")
			r = run(t, "", "--timeout", "300ms", "call", u, "sum", "[1,2]")
			if r.code != 3 {
				t.Fatalf("dropped call: exit %d, %s", r.code, r.stderr)
			}
			waitReport(t, log, "chaos: drop dir=in method=sum msg=1 conn=3")
			expect(t, run(t, "", "call", u, "subtract", "[42,23]"), 0, "19\n")
		})
	}
}

// --json reports one object a line; --plan reads the specs from a file;
// --exec puts the proxy between stdio and a subprocess (jrpc serve on stdio).
func TestChaosJSONPlanExec(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan")
	os.WriteFile(plan, []byte("# the first answer to subtract fails\nmethod=subtract,dir=out,nth=1,error=-32001\n"), 0o644)
	u, log := startChaos(t, "--listen", "tcp://127.0.0.1:0", urls["tcp"], "--plan", plan, "--json")
	r := run(t, "", "call", u, "subtract", "[42,23]")
	if r.code != 1 || !strings.Contains(r.stderr, "-32001") {
		t.Fatalf("exit %d, %s", r.code, r.stderr)
	}
	waitReport(t, log, `"action":"error"`)
	for line := range strings.Lines(log.String()) {
		if strings.HasPrefix(line, "{") {
			var e struct {
				Action, Dir, Method string
				Msg, Conn           int
			}
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Action != "error" || e.Dir != "out" || e.Method != "subtract" || e.Msg != 1 {
				t.Fatalf("report %s: %+v %v", line, e, err)
			}
		}
	}
	expect(t, run(t, "", "call", u, "subtract", "[42,23]"), 0, "19\n")

	proxy := bin + " chaos --fault method=subtract,dir=in,nth=1,error=-32077 --exec '" + bin + " serve --listen stdio:'"
	r = run(t, "", "--exec", proxy, "call", "subtract", "[42,23]")
	if r.code != 1 || !strings.Contains(r.stderr, "-32077") || !strings.Contains(r.stderr, "chaos: error dir=in method=subtract msg=1") {
		t.Fatalf("--exec: exit %d, %s", r.code, r.stderr)
	}
	expect(t, run(t, "", "--exec", proxy, "call", "sum", "[1,2]"), 0, "3\n")
}

func TestChaosUsage(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "tcp://127.0.0.1:1"},
		{"chaos", "--listen", "tcp://127.0.0.1:0", "tcp://127.0.0.1:1", "--fault", "nth=2"},
		{"chaos", "--listen", "tcp://127.0.0.1:0", "tcp://127.0.0.1:1", "--fault", "drop,cut"},
		{"chaos", "--listen", "tcp://127.0.0.1:0", "tcp://127.0.0.1:1", "--fault", "dir=up,drop"},
	} {
		if r := run(t, "", args...); r.code != 2 {
			t.Errorf("%q: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// jrpc chaos in front of jrpc serve --mcp (Streamable HTTP, both eras): a
// tools/call answered with the injected error in the stateless era, and in
// the session era (2025-11-25) a tools/call whose answer is cut: the CLI
// reports it, and the next call through the proxy goes on.
func TestChaosInFrontOfMCP(t *testing.T) {
	u := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"]
	p, log := startChaos(t, "--listen", "http://127.0.0.1:0/mcp", u,
		"--fault", "method=tools/call,dir=in,nth=1,error=-32050", "--fault", "method=tools/call,dir=out,nth=2,cut")
	add := []string{"tools/call", "name=add", `arguments={"a":1,"b":2}`}
	r := run(t, "", append([]string{"--streamable", "call", p}, add...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "-32050") {
		t.Fatalf("injected error: exit %d, %s", r.code, r.stderr)
	}
	waitReport(t, log, "chaos: error dir=in method=tools/call msg=1")
	r = run(t, "", append([]string{"--streamable", "call", p}, add...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"structuredContent":{"sum":3}`) {
		t.Fatalf("through: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	r = run(t, "", append([]string{"--streamable", "--mcp-version", "2025-11-25", "call", p}, add...)...)
	if r.code != exitTransport {
		t.Fatalf("cut answer: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
	waitReport(t, log, "chaos: cut dir=out method=tools/call")
	r = run(t, "", append([]string{"--streamable", "--mcp-version", "2025-11-25", "call", p}, add...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"structuredContent":{"sum":3}`) {
		t.Fatalf("after the cut: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// jrpc chaos --exec ends when its subprocess ends, even while its own stdin
// stays open (the client has not gone away), with the subprocess's exit code.
func TestChaosExecEndsWithItsCommand(t *testing.T) {
	cmd := exec.Command(bin, "chaos", "--exec", "exit 3")
	in, _ := cmd.StdinPipe() // kept open
	defer in.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if cmd.ProcessState.ExitCode() != 3 {
			t.Fatalf("exit %d (%v), want the command's 3", cmd.ProcessState.ExitCode(), err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("jrpc chaos --exec outlived its command")
	}
}

// jrpc chaos in front of a TLS target (tls://, with --cacert for the
// target): the proxy listens on tcp:// in the clear, calls pass and faults
// act; without --cacert the target's certificate is refused and the call
// fails.
func TestChaosTLSTarget(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caFile, _ := testCert(t, dir, "ca", nil, nil, false)
	_, _, serverCert, serverKey := testCert(t, dir, "server", ca, caKey, true)
	target := startServeN(t, 1, "--tls-cert", serverCert, "--tls-key", serverKey, "-l", "tls://127.0.0.1:0")["tls"]
	u, log := startChaos(t, "--cacert", caFile, "--listen", "tcp://127.0.0.1:0", target, "--fault", "method=subtract,dir=out,nth=2,error=-32042")
	expect(t, run(t, "", "call", u, "subtract", "[42,23]"), 0, "19\n")
	if r := run(t, "", "call", u, "subtract", "[42,23]"); r.code != 1 || !strings.Contains(r.stderr, "-32042") {
		t.Fatalf("second call: exit %d, %s", r.code, r.stderr)
	}
	waitReport(t, log, "chaos: error dir=out method=subtract")
	plain, _ := startChaos(t, "--listen", "tcp://127.0.0.1:0", target)
	if r := run(t, "", "--timeout", "2s", "call", plain, "subtract", "[42,23]"); r.code == 0 {
		t.Fatalf("a call through a proxy that cannot verify the target: exit 0, %s", r.stdout)
	}
}
