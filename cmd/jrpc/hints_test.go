package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// TestErrorsNameTheCause: failures that read like crashes now say what the
// port speaks and what to try (issue 28, points 4 and 9).
func TestErrorsNameTheCause(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, _, _ := testCert(t, dir, "ca", nil, nil, false)
	_, _, serverCert, serverKey := testCert(t, dir, "server", ca, caKey, true)
	tlsURL := startServeN(t, 1, "--tls-cert", serverCert, "--tls-key", serverKey, "-l", "tls://127.0.0.1:0")["tls"]
	wsOnly := startServeN(t, 1, "-l", "ws://127.0.0.1:0/")["ws"]
	secret := filepath.Join(dir, "jwt.hex")
	jwtURL := startServeN(t, 1, "--jwt-secret", secret, "-l", "http://127.0.0.1:0/")["http"]
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(5e9) {
		t.Fatal("nats-server not ready")
	}
	natsHost := strings.TrimPrefix(ns.ClientURL(), "nats://")
	tcpHost := strings.TrimPrefix(urls["tcp"], "tcp://")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		{"tcp to a TLS port", []string{"call", strings.Replace(tlsURL, "tls://", "tcp://", 1), "sum", "[1]"}, exitTransport,
			[]string{"speaks TLS", "try: " + strings.Replace(tlsURL, "tls://", "tls://", 1)}},
		{"tcp to a NATS port", []string{"call", "tcp://" + natsHost, "sum", "[1]"}, exitTransport,
			[]string{"is a NATS server, not a JSON-RPC stream", "nats://" + natsHost + "/SUBJECT"}},
		{"nats to a jrpc tcp port", []string{"call", "nats://" + tcpHost + "/rpc", "sum", "[1]"}, exitTransport,
			[]string{"is not a NATS server", "try: tcp://" + tcpHost}},
		{"http to a ws-only port", []string{"call", strings.Replace(wsOnly, "ws://", "http://", 1), "sum", "[1]"}, exitTransport,
			[]string{"426", "speaks WebSocket: " + wsOnly}},
		{"a bad token", []string{"call", "--bearer", "not-a-token", jwtURL, "sum", "[1]"}, exitTransport,
			[]string{"401", "refused the credentials sent"}},
		{"cobra's suggestion", []string{"cal"}, exitUsage,
			[]string{"unknown command \"cal\" for \"jrpc\"\n  try: jrpc call", "(run 'jrpc --help'"}},
		{"no literal URL in a hint", []string{"describe", urls["tcp"], "subtrac"}, exitUsage,
			[]string{"did you mean subtract?"}},
		{"a check hint names the target", []string{"call", "--check", urls["tcp"], "subtract", "a=1"}, exitUsage,
			[]string{"try: jrpc describe " + urls["tcp"] + " subtract"}},
		{"a hint quotes at most a line of params", []string{"call", urls["tcp"], "echo", strings.Repeat("x", 5000)}, exitUsage,
			[]string{"neither JSON nor key=value", "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, stderr %q; want %d", r.code, r.stderr, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Fatalf("stderr %q lacks %q", r.stderr, w)
				}
			}
			if strings.Contains(r.stderr, " URL ") || strings.Contains(r.stderr, "may have crashed") || len(r.stderr) > 1000 {
				t.Fatalf("stderr %q: a literal URL, a crash guess or a long quote", r.stderr)
			}
		})
	}
	// describe of a subscription suggests jrpc subscribe, not a call.
	r := run(t, "", "describe", urls["tcp"], "demo_subscribe")
	if r.code != 0 || !strings.Contains(r.stdout, "try: jrpc subscribe "+urls["tcp"]+" demo_subscribe") {
		t.Fatalf("describe demo_subscribe: exit %d, %q", r.code, r.stdout)
	}
}

// TestExecNotJSONRPC: a command that does not speak JSON-RPC on its
// standard output, or frames its messages the other way, is reported as
// such at once (exit 3, saying what it wrote and the flag that fixes a
// framing mismatch), never a panic nor a wait for the whole timeout.
func TestExecNotJSONRPC(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		say  []string
	}{
		{"echo", []string{"--exec", "echo hello"}, []string{`wrote "hello"`, "does not speak JSON-RPC", "jrpc serve --listen stdio:"}},
		{"nothing", []string{"--exec", "true"}, []string{"closed its output before answering"}},
		{"lsp server", []string{"--exec", execCmd + " --framing lsp"}, []string{"Content-Length framed", "--framing lsp"}},
		{"line server", []string{"--framing", "lsp", "--exec", execCmd + " --framing line"}, []string{"newline-delimited JSON", "drop --framing lsp"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			r := run(t, "", append([]string{"--timeout", "60s"}, append(c.args, "call", "subtract", "[42,23]")...)...)
			if r.code != exitTransport || strings.Contains(r.stderr, "panic") {
				t.Fatalf("exit %d, stderr %q; want 3", r.code, r.stderr)
			}
			for _, s := range c.say {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q lacks %q", r.stderr, s)
				}
			}
			if d := time.Since(start); d > 12*time.Second {
				t.Errorf("took %v: the mismatch was not detected", d)
			}
		})
	}
}
