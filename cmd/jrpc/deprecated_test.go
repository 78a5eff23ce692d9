package main

import (
	"strings"
	"testing"
)

// TestCallDeprecated checks that jrpc call warns once on stderr when it
// calls a deprecated method (the demo's minus): over HTTP from the
// Deprecation header, on every transport with --check (from rpc.discover);
// the call still works and stdout holds only the result.
func TestCallDeprecated(t *testing.T) {
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			args := with(tgt, "call", "--check", "minus", "[42,23]")
			if name == "http" {
				args = with(tgt, "call", "minus", "[42,23]")
			}
			r := run(t, "", args...)
			expect(t, r, 0, "19\n")
			if n := strings.Count(r.stderr, "warning: minus is deprecated"); n != 1 {
				t.Fatalf("stderr has %d warnings, want 1: %q", n, r.stderr)
			}
			r = run(t, "", with(tgt, "call", "subtract", "[42,23]")...)
			if strings.Contains(r.stderr, "deprecated") {
				t.Fatalf("subtract is not deprecated: %q", r.stderr)
			}
		})
	}
	r := run(t, "", "call", urls["http"], "minus", "[1,1]")
	if !strings.Contains(r.stderr, "(Deprecation: @1780272000, Sunset: Tue, 01 Jun 2027 00:00:00 GMT)") {
		t.Errorf("the warning does not carry the headers: %q", r.stderr)
	}
}

// TestListMarksDeprecated checks that jrpc list marks deprecated methods
// and names their replacement.
func TestListMarksDeprecated(t *testing.T) {
	r := run(t, "", "list", urls["tcp"])
	expect(t, r, 0, "")
	for line := range strings.Lines(r.stdout) {
		if strings.HasPrefix(line, "minus(") && !strings.Contains(line, "(deprecated: use subtract)") {
			t.Errorf("list line %q does not mark minus deprecated", line)
		}
		if strings.HasPrefix(line, "subtract(") && strings.Contains(line, "deprecated") {
			t.Errorf("list marks subtract: %q", line)
		}
	}
	if !strings.Contains(r.stdout, "minus(") {
		t.Errorf("list lacks minus:\n%s", r.stdout)
	}
}
