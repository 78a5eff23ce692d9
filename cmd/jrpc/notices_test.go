package main

import (
	"strings"
	"testing"
)

// TestNotificationsDuringCallOnStderr: the notifications a server sends
// during a call are printed on stderr, in order, before the call ends, on
// every transport that can carry them and with --raw, not only with -v
// (issue 28, point 6).
func TestNotificationsDuringCallOnStderr(t *testing.T) {
	want := `<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":1}}` + "\n" +
		`<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":0}}` + "\n"
	for _, name := range []string{"tcp", "unix", "ws", "stdio", "stdio-lsp"} {
		for _, flag := range []string{"", "--raw"} {
			t.Run(name+flag, func(t *testing.T) {
				args := []string{"countdown", "n=2"}
				if flag != "" {
					args = append([]string{flag}, args...)
				}
				r := run(t, "", with(targets()[name], "call", args...)...)
				wantOut := `"liftoff"` + "\n"
				if flag == "--raw" {
					wantOut = `{"jsonrpc":"2.0","id":1,"result":"liftoff"}` + "\n"
				}
				expect(t, r, 0, wantOut)
				if !strings.HasPrefix(r.stderr, want) {
					t.Fatalf("stderr %q; want it to start with the notifications %q", r.stderr, want)
				}
			})
		}
	}
	// The REPL prints them too.
	r := run(t, "countdown n=1\n", "repl", urls["tcp"])
	expect(t, r, 0, `"liftoff"`+"\n")
	if !strings.Contains(r.stderr, `<-- {"jsonrpc":"2.0","method":"countdown","params":{"remaining":0}}`) {
		t.Fatalf("repl stderr %q", r.stderr)
	}
}
