package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jrpc subscribe on every transport that carries push: the demo ticker's
// events one per line; a server-side error is exit 1; plain HTTP is a
// usage error; Ctrl-C unsubscribes and exits 0.
func TestSubscribeCommand(t *testing.T) {
	for name, tgt := range targets() {
		if name == "http" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			expect(t, run(t, "", with(tgt, "subscribe", "demo_subscribe", "ticker", "interval_ms=1", "count=3", "-n", "3")...), 0, "1\n2\n3\n")
			expect(t, run(t, "", with(tgt, "subscribe", "demo_subscribe", `["ticker",{"interval_ms":1,"count":2}]`, "--count", "2")...), 0, "1\n2\n")
			r := run(t, "", with(tgt, "subscribe", "demo_subscribe", "nope")...)
			expect(t, r, exitRPCError, "")
			if !strings.Contains(r.stderr, `"code":-32601`) {
				t.Fatalf("unknown kind: stderr %q", r.stderr)
			}
		})
	}
	r := run(t, "", "subscribe", urls["http"], "demo_subscribe", "ticker", "interval_ms=1")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "plain HTTP") {
		t.Fatalf("http: stderr %q", r.stderr)
	}
	expect(t, run(t, "", "subscribe", urls["tcp"], "demo_subscribe", `{"a":1}`), exitUsage, "")

	// Ctrl-C: the events so far are printed, then a clean exit.
	cmd := exec.Command(bin, "subscribe", urls["tcp"], "demo_subscribe", "ticker", "interval_ms=20")
	var out syncBuffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err != nil || !strings.HasPrefix(out.String(), "1\n2\n") {
		t.Fatalf("after Ctrl-C: %v, stdout %q", err, out.String())
	}
}

// TestSubscribeIdleTimeoutAndEnd: a producer that stops quietly no longer
// hangs jrpc subscribe: a note after 10s without events, --idle-timeout
// exits 3; a server that goes away ends the subscription with words that
// say so (issue 28, point 7).
func TestSubscribeIdleTimeoutAndEnd(t *testing.T) {
	r := run(t, "", "subscribe", "-n", "3", "--idle-timeout", "500ms", urls["tcp"], "demo_subscribe", "ticker", "count=2", "interval_ms=1")
	expect(t, r, exitTransport, "1\n2\n")
	if !strings.Contains(r.stderr, "no event from "+urls["tcp"]+" for 500ms (after 2 events)") {
		t.Fatalf("stderr %q", r.stderr)
	}

	url, srv := startServer(t, "127.0.0.1:0")
	cmd := exec.Command(bin, "subscribe", url, "demo_subscribe", "ticker", "interval_ms=20")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitBuf(t, &out, "2\n")
	srv.Process.Kill()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitTransport || !strings.Contains(errb.String(), "the subscription ended after") || strings.Contains(errb.String(), "before the answer") {
		t.Fatalf("server gone: %v, stderr %q", err, errb.String())
	}

	if testing.Short() {
		return
	}
	// Without --idle-timeout: the note after 10s of silence.
	cmd = exec.Command(bin, "subscribe", urls["tcp"], "demo_subscribe", "ticker", "count=1", "interval_ms=1")
	errb = syncBuffer{}
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(14 * time.Second)
	for !strings.Contains(errb.String(), "no event for 10s: the producer may have ended") {
		if time.Now().After(deadline) {
			t.Fatalf("no quiet note; stderr %q", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jrpc subscribe --reconnect keeps printing across a server restart: a
// notice on stderr, the events of the new subscription on stdout, and
// Ctrl-C exits 0 (issue 26).
func TestSubscribeReconnect(t *testing.T) {
	url, srv := startServer(t, "127.0.0.1:0")
	cmd := exec.Command(bin, "subscribe", "--reconnect", url, "demo_subscribe", "ticker", "interval_ms=20")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitBuf(t, &out, "2\n")
	srv.Process.Kill()
	srv.Wait()
	waitBuf(t, &errb, "dropped")
	startServer(t, strings.TrimPrefix(url, "tcp://")) // the same address
	waitBuf(t, &errb, "subscribed again")
	n := strings.Count(out.String(), "\n")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "\n") < n+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after Ctrl-C: %v, stderr %q", err, errb.String())
	}
	if lines := strings.Split(out.String(), "\n"); len(lines) < n+2 || !strings.Contains(out.String(), "\n1\n") {
		t.Fatalf("stdout %q: want the new subscription's events from 1 after the first's", out.String())
	}
}
