package main

import (
	"strings"
	"testing"
)

// --max-message-size bounds the responses jrpc accepts: one over it fails at
// once with "response too large" (exit 3), on every transport; a larger
// limit lets it through.
func TestMaxMessageSizeFlag(t *testing.T) {
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			r := run(t, "", append([]string{"--max-message-size", "1000"}, with(tgt, "call", "big", "n=2000")...)...)
			expect(t, r, exitTransport, "")
			if !strings.Contains(r.stderr, "response too large (") || !strings.Contains(r.stderr, "limit 1000)") || !strings.Contains(r.stderr, "--max-message-size") {
				t.Fatalf("stderr %q", r.stderr)
			}
			expect(t, run(t, "", append([]string{"--max-message-size", "4000"}, with(tgt, "call", "big", "n=2000")...)...), 0, `"`+strings.Repeat("x", 2000)+`"`+"\n")
		})
	}
}

// serve --handler-timeout answers a call still running with -32002 (exit 1
// for the caller), on streams too once set.
func TestServeHandlerTimeoutFlag(t *testing.T) {
	exec := bin + " serve --listen stdio: --handler-timeout 200ms"
	r := run(t, "", "--exec", exec, "call", "sleep", "ms=3000")
	expect(t, r, exitRPCError, "")
	if !strings.HasSuffix(r.stderr, "\n"+`{"code":-32002,"message":"request timed out"}`+"\n") { // after the server's log line
		t.Fatalf("stderr %q", r.stderr)
	}
	expect(t, run(t, "", "--exec", exec, "call", "sleep", "ms=10"), 0, "10\n")
}
