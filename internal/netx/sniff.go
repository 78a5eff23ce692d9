package netx

import (
	"bytes"
	"cmp"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// sniffLen is how much of a command's first output outputSniffer keeps.
const sniffLen = 120

// outputSniffer judges the first bytes a command writes against the
// framing its connection reads. The other framing fails the connection at
// once (nothing could ever be read, the call would wait out its timeout);
// other text (a banner, an unrelated program) is logged, and named in the
// error when the output ends, but not fatal, as a server that prints a
// line before speaking JSON-RPC still works.
type outputSniffer struct {
	command string
	framing framing.Framing // framing.Line or framing.Header
	logger  *slog.Logger

	mu     sync.Mutex // Read observes, a failed Write asks
	head   []byte
	judged bool
	notRPC bool // the output began with text that is not JSON-RPC
}

// observe looks at more output; it returns an error when the output is
// framed the other way.
func (s *outputSniffer) observe(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.judged {
		return nil
	}
	s.head = append(s.head, b[:min(len(b), sniffLen-len(s.head))]...)
	text := bytes.TrimLeft(s.head, " \t\r\n\ufeff")
	if len(text) == 0 || (len(text) < len("content-length:") && len(s.head) < sniffLen && !bytes.ContainsAny(text, "\n{[")) {
		return nil // not enough to judge yet
	}
	s.judged = true
	header := hasPrefixFold(text, "content-")
	json := text[0] == '{' || text[0] == '['
	switch {
	case s.framing == framing.Line && header:
		return fmt.Errorf("jsonrpc: command %s writes Content-Length framed messages (it wrote %s), not newline-delimited JSON: dial it with WithFraming(FramingHeader)", s.command, s.quote())
	case s.framing == framing.Header && json:
		return fmt.Errorf("jsonrpc: command %s writes newline-delimited JSON (it wrote %s), not Content-Length framed messages: dial it with WithFraming(FramingLine)", s.command, s.quote())
	case s.framing == framing.Line && !json, s.framing == framing.Header && !header:
		s.notRPC = true
		cmp.Or(s.logger, slog.Default()).Warn("jsonrpc: the command's output is not JSON-RPC", "command", s.command, "wrote", s.firstLine())
	}
	return nil
}

// atEnd describes the output, once it has ended (or, with begun, so far),
// if it was not JSON-RPC.
func (s *outputSniffer) atEnd(begun bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.notRPC && (begun || s.judged || len(bytes.TrimSpace(s.head)) == 0) {
		return nil
	}
	what := "JSON"
	if s.framing == framing.Header {
		what = "a Content-Length framed message"
	}
	return fmt.Errorf("jsonrpc: command %s wrote %s, which is not %s: is it a JSON-RPC server on its standard input and output?", s.command, s.quote(), what)
}

// firstLine is the first line of the output, cut short.
func (s *outputSniffer) firstLine() string {
	text := bytes.TrimLeft(s.head, " \t\r\n\ufeff")
	if i := bytes.IndexAny(text, "\r\n"); i >= 0 {
		text = text[:i]
	}
	for len(text) > 0 && !utf8.Valid(text) {
		text = text[:len(text)-1] // cut inside a character
	}
	if len(text) == sniffLen || len(text) > 60 {
		return string(text[:min(len(text), 60)]) + "…"
	}
	return string(text)
}

func (s *outputSniffer) quote() string { return strconv.Quote(s.firstLine()) }

func hasPrefixFold(b []byte, prefix string) bool {
	n := min(len(b), len(prefix))
	return n > 0 && bytes.EqualFold(b[:n], []byte(prefix[:n]))
}
