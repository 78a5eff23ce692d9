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
