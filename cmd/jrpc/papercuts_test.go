package main

import (
	"strings"
	"testing"
)

// TestPapercuts: issue 28, point 9, through the binary.
func TestPapercuts(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "stdio:", "--listen", "stdio:"},
		{"serve", "--listen", "tcp://127.0.0.1:9", "--listen", "tcp://127.0.0.1:9/"},
	} {
		r := run(t, "", args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "is given twice") {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	r := run(t, "", "call", urls["tcp"], "")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the method name is empty") {
		t.Fatalf("empty method: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "", "bench", "-n", "5", urls["tcp"], "sum", "[1]")
	if r.code != 0 || !strings.Contains(r.stdout, "5 calls in") || !strings.Contains(r.stdout, ", 1 worker on 1 connection\n") {
		t.Fatalf("bench: exit %d, stdout %q", r.code, r.stdout)
	}
}
