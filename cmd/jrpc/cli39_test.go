package main

import (
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
