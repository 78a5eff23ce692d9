package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestREPLBareHelp: help (or ?) typed without its dot shows the REPL's
// help instead of calling a method "help" on the server; exit and quit
// leave (issue 39, point 4).
func TestREPLBareHelp(t *testing.T) {
	s := startPTY(t, "repl", urls["tcp"])
	at := s.waitFor(0, "jrpc> ")
	s.typeKeys("help\r")
	at = s.waitFor(at, "(help is taken as .help: commands start with a dot)")
	at = s.waitFor(at, ".describe METHOD")
	s.typeKeys("?\r")
	at = s.waitFor(at, ".describe METHOD")
	s.typeKeys("sum [1,2]\r")
	at = s.waitFor(at, "\r\n3\r\n")
	s.typeKeys("exit\r")
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("exit did not leave:\n%s", s.out.String())
	}
	if out := s.out.String(); strings.Contains(out, "-32601") || strings.Contains(out, "method not found") {
		t.Fatalf("a bare command reached the server:\n%s", out)
	}
	_ = at
}

// TestListNotPaddedToTheLongest: jrpc list sets the summaries beside the
// signatures that fit, not after the longest one (tools/call's is 120
// columns): on an 80-column terminal every summary shows whole (wrapped),
// and piped output fits 80 columns but for a signature longer than that
// (issue 39, point 4).
func TestListNotPaddedToTheLongest(t *testing.T) {
	s := startPTYCols(t, 80, "list", urls["tcp"])
	s.waitFor(0, "update(")
	s.cmd.Wait()
	out := s.out.String()
	for _, w := range []string{"Subtracts subtrahend from minuend.", "Returns a string of n 'x' characters."} {
		if !strings.Contains(out, w) {
			t.Fatalf("an 80-column terminal does not show %q whole:\n%s", w, out)
		}
	}
	r := run(t, "", "list", urls["tcp"])
	expect(t, r, 0, "")
	for line := range strings.Lines(r.stdout) {
		line = strings.TrimRight(line, "\n")
		if n := utf8.RuneCountInString(line); n > 80 && strings.Contains(line, "   ") {
			t.Errorf("a line of %d columns with padding: %q", n, line)
		}
		if strings.HasPrefix(line, "big(") && strings.Index(line, "Returns") > 45 {
			t.Errorf("big's summary is pushed to column %d: %q", strings.Index(line, "Returns"), line)
		}
	}
}

// TestDescribeSubscriptionKinds: describe of a subscribe method lists the
// kinds of its x-subscription with their params, and a command to try
// for each (issue 39, point 4).
func TestDescribeSubscriptionKinds(t *testing.T) {
	r := run(t, "", "describe", urls["tcp"], "demo_subscribe")
	expect(t, r, 0, "")
	for _, w := range []string{
		"kinds (the first param; the events come as demo_subscription notifications, and demo_unsubscribe [id] ends one):",
		"  ticker: params TickerParams; events integer",
		"    interval_ms integer (optional): milliseconds between events (default 1000)",
		"    count integer (optional): events to send (0: until unsubscribed)",
		"  large: params LargeParams; events string",
		"    size integer (required)",
		"try: jrpc subscribe " + urls["tcp"] + " demo_subscribe ticker\n",
		"try: jrpc subscribe " + urls["tcp"] + " demo_subscribe large size=",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("describe demo_subscribe lacks %q:\n%s", w, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "KIND") {
		t.Errorf("describe still says KIND:\n%s", r.stdout)
	}
}

// TestBatchCallLines: jrpc batch takes METHOD [PARAMS] lines as jrpc call
// takes them (one JSON value, key=value pairs, quotes as on a command
// line; .notify for a notification), numbered with ids no envelope line
// of the batch has, beside envelopes sent as written, on every transport
// (issue 39, point 6).
func TestBatchCallLines(t *testing.T) {
	lines := `# ids 1 and 3 are the envelopes'
sum [1,2,4]
{"jsonrpc":"2.0","id":1,"method":"get_data"}
subtract minuend=42 subtrahend=23
.notify notify_hello [7]
{"jsonrpc":"2.0","id":3,"method":"sum","params":[]}
echo x='{"a": 1}' tags=["x", "y"]
`
	want := `{"id":2,"method":"sum","result":7}
{"id":1,"method":"get_data","result":["hello",5]}
{"id":4,"method":"subtract","result":19}
{"method":"notify_hello","notification":true}
{"id":3,"method":"sum","result":0}
{"id":5,"method":"echo","result":{"x":{"a":1},"tags":["x","y"]}}
`
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			expect(t, run(t, lines, with(tgt, "batch", "-")...), 0, want)
		})
	}
	r := run(t, "sum [1,2\n", "batch", urls["tcp"], "-")
	if r.code != exitUsage || !strings.Contains(r.stderr, `batch line "sum [1,2"`) {
		t.Fatalf("an unclosed line: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "nope\n", "batch", urls["tcp"], "-")
	expect(t, r, exitRPCError, `{"id":1,"method":"nope","error":{"code":-32601,"message":"method not found: nope"}}`+"\n")
}

// TestRawScript: jrpc raw sends each line of its input as it is (a call,
// text that is not JSON, a notification, a batch) and prints every message
// that comes as it came, on every transport, --framing lsp included; it
// waits for the answers the lines call for (--timeout bounds it: exit 3),
// and --linger prints a subscription's events (issue 39, point 6).
func TestRawScript(t *testing.T) {
	lines := `{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}
hello
{"jsonrpc":"2.0","method":"notify_hello","params":[7]}
[{"jsonrpc":"2.0","id":"b","method":"subtract","params":[42,23]},{"jsonrpc":"2.0","method":"update"}]
`
	want := `{"jsonrpc":"2.0","id":1,"result":3}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: offset 0: invalid character 'h' looking for beginning of value"}}
[{"jsonrpc":"2.0","id":"b","result":19}]
`
	sorted := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			r := run(t, lines, with(tgt, "raw")...)
			// The server answers concurrently: in any order.
			if r.code != 0 || sorted(r.stdout) != sorted(want) {
				t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant (in any order):\n%s", r.code, r.stderr, r.stdout, want)
			}
		})
	}
	sub := `{"jsonrpc":"2.0","id":7,"method":"demo_subscribe","params":["ticker",{"interval_ms":20,"count":3}]}` + "\n"
	for _, u := range []string{urls["tcp"], urls["ws"]} {
		r := run(t, sub, "raw", "--linger", "2s", u)
		expect(t, r, 0, "")
		if n := strings.Count(r.stdout, `"method":"demo_subscription"`); n != 3 || !strings.Contains(r.stdout, `"result":3}}`) {
			t.Fatalf("%s: %d events:\n%s", u, n, r.stdout)
		}
	}
	r := run(t, `{"jsonrpc":"2.0","id":1,"method":"sleep","params":{"ms":5000}}`+"\n", "--timeout", "1s", "raw", urls["tcp"])
	if r.code != exitTransport || !strings.Contains(r.stderr, "1 of the messages sent to "+urls["tcp"]+" got no answer within 1s") {
		t.Fatalf("no answer: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestRawTerminal: on a terminal, jrpc raw prints messages as they arrive
// (a subscription's events after its answer, with no line typed), keeps
// the lines in a history (the up arrow sends one again) across runs, and
// leaves on Ctrl-D (issue 39, point 6).
func TestRawTerminal(t *testing.T) {
	s := startPTY(t, "raw", urls["tcp"])
	at := s.waitFor(0, "each line is sent as it is")
	s.typeKeys(`{"jsonrpc":"2.0","id":1,"method":"demo_subscribe","params":["ticker",{"interval_ms":300,"count":3}]}` + "\r")
	at = s.waitFor(at, `{"jsonrpc":"2.0","id":1,"result":"0x`)
	for i := 1; i <= 3; i++ {
		at = s.waitFor(at, fmt.Sprintf(`"result":%d}}`, i))
	}
	s.typeKeys(`{"jsonrpc":"2.0","id":2,"method":"sum","params":[2,3]}` + "\r")
	at = s.waitFor(at, `{"jsonrpc":"2.0","id":2,"result":5}`)
	s.typeKeys("\x1b[A\r") // the up arrow: the sum again
	at = s.waitFor(at, `{"jsonrpc":"2.0","id":2,"result":5}`)
	s.typeKeys("\x04")
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Ctrl-D: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Ctrl-D did not leave:\n%s", s.out.String())
	}
	var replHistory string
	for _, e := range s.cmd.Env {
		if v, ok := strings.CutPrefix(e, "JRPC_HISTORY="); ok {
			replHistory = v
		}
	}
	hist, err := os.ReadFile(filepath.Join(filepath.Dir(replHistory), "raw_history"))
	if err != nil || !strings.Contains(string(hist), `"method":"sum","params":[2,3]}`) {
		t.Fatalf("history: %v %q", err, hist)
	}
	_ = at
}
