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
