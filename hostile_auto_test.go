package jsonrpc

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestHostileAutoFramingEndlessHeaderLine: with the default framing (auto),
// a first line that looks like a header field and never ends is answered
// and cut once it passes a header section's bound (8 KiB), as with
// FramingHeader, not read on towards the 10 MiB message limit (issue 40:
// 1 MiB of it held the connection open and silent). A header-like line that
// ends within the bound is still a line, answered on that line.
func TestHostileAutoFramingEndlessHeaderLine(t *testing.T) {
	addr := hostileServer(t, &Server{Handler: rulesMux(), Logger: quietLogger}, FramingAuto)

	c := dialRaw(t, addr)
	start := time.Now()
	go io.WriteString(c.nc, "X-Junk: "+strings.Repeat("a", 1<<20)) // no CRLF, ever
	checkWant(t, c.frame(), failMsg("null", CodeParseError, "header section too long"))
	c.expectClosed()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %v", d)
	}
	dialRaw(t, addr).checkServedLine()

	// A name and a colon, then a newline within the bound: a line of garbage.
	c = dialRaw(t, addr)
	c.write("X-Junk: " + strings.Repeat("a", 4<<10) + "\n")
	checkWant(t, c.line(), fail("null", CodeParseError))
	c.checkServedLine()

	// JSON text is never held back: a long number is a line.
	c = dialRaw(t, addr)
	c.write(`{"jsonrpc":"2.0","method":"echo","params":[` + strings.Repeat("1", 9<<10) + `],"id":7}` + "\n")
	checkWant(t, c.line(), ok("7", ""))
	c = dialRaw(t, addr)
	c.write(strings.Repeat("1", 9<<10) + "\n")
	checkWant(t, c.line(), fail("null", CodeInvalidRequest))
	c.checkServedLine()
}
