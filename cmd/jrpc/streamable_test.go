package main

import (
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jrpc --streamable --mcp-version 2025-11-25 against jrpc serve --mcp
// (Streamable HTTP with sessions): call initialises the session itself, the notifications of a
// call are printed on stderr in order, and the REPL keeps its session
// across lines. Without --streamable, the server asks for a session (400).
func TestStreamableCallAndREPL(t *testing.T) {
	srv := exec.Command(bin, "serve", "--mcp", "--listen", "http://127.0.0.1:0/mcp")
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	found := map[string]string{}
	var log syncBuffer
	if err := readListening(stderr, 1, found, &log); err != nil {
		t.Fatalf("serve --mcp: %v\n%s", err, log.String())
	}
	url := found["http"]
	notes := `<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":2}}
<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":1}}
<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":0}}
`
	r := run(t, "", "--streamable", "--mcp-version", "2025-11-25", "call", url, "countdown", "n=3", "interval_ms=20")
	expect(t, r, 0, "\"liftoff\"\n")
	if r.stderr != notes {
		t.Fatalf("stderr %q, want %q", r.stderr, notes)
	}
	r = run(t, "", "--streamable", "--mcp-version", "2025-11-25", "call", url, "tools/call", `name="echo"`, `arguments={"text":"hi"}`)
	expect(t, r, 0, "")
	if !strings.Contains(r.stdout, `"hi"`) {
		t.Fatalf("tools/call: %q %q", r.stdout, r.stderr)
	}
	r = run(t, "countdown {\"n\":2}\nping\n", "--streamable", "--mcp-version", "2025-11-25", "repl", url)
	expect(t, r, 0, "\"liftoff\"\n{}\n")
	if !strings.Contains(r.stderr, `"remaining":1`) || !strings.Contains(r.stderr, `"remaining":0`) {
		t.Fatalf("repl stderr %q", r.stderr)
	}
	r = run(t, "", "call", url, "ping")
	expect(t, r, exitTransport, "")
	if !strings.Contains(r.stderr, "HTTP 400") {
		t.Fatalf("without --streamable: %q", r.stderr)
	}
	expect(t, run(t, "", "--streamable", "call", "--raw", url, "ping"), exitUsage, "") // -v works: TestMCPFromTheCLI
	expect(t, run(t, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", "--streamable", "batch", url), exitUsage, "")
}

// jrpc serve --mcp on a loopback address refuses a Host that is not a
// loopback name with 403 (a DNS-rebinding page sends its own name, and an
// Origin that matches it), and serves localhost; --allow-host replaces the
// list.
func TestServeMCPRefusesRebinding(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	status := func(t *testing.T, url, host string) int {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Origin", "http://"+host)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		args           []string
		evil, loopback int
	}{
		{nil, 403, 200},
		{[]string{"--allow-host", "*"}, 200, 200},
	} {
		srv := exec.Command(bin, append([]string{"serve", "--mcp", "--listen", "http://127.0.0.1:0/mcp"}, tc.args...)...)
		stderr, _ := srv.StderrPipe()
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		var log syncBuffer
		err := readListening(stderr, 1, found, &log)
		if err == nil {
			u := found["http"]
			port := u[strings.LastIndexByte(u, ':')+1 : strings.LastIndexByte(u, '/')]
			if got := status(t, u, "evil.example.com"); got != tc.evil {
				t.Errorf("%v: Host evil.example.com: %d, want %d", tc.args, got, tc.evil)
			}
			if got := status(t, u, "localhost:"+port); got != tc.loopback {
				t.Errorf("%v: Host localhost: %d, want %d", tc.args, got, tc.loopback)
			}
		}
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
		if err != nil {
			t.Fatalf("serve --mcp: %v\n%s", err, log.String())
		}
	}
}
