package main

import (
	"fmt"
	"net/http"
	"os"
	"sync"

	"github.com/seedhq/jsonrpc/openrpc"
)

// Deprecated methods: jrpc warns on stderr, once per method, when it calls
// one. It knows from the HTTP response's Deprecation header (RFC 9745, with
// Sunset, RFC 8594) and, on every transport, from the rpc.discover document
// when it has read it (call --check, the REPL).

var warned sync.Map // method name → true

// warnDeprecated prints the warning for method, unless it was printed.
func warnDeprecated(method, detail string) {
	if _, done := warned.LoadOrStore(method, true); done {
		return
	}
	fmt.Fprintf(os.Stderr, "jrpc: warning: %s is deprecated%s\n", method, detail)
}

// warnIfDeprecated warns when the document marks m deprecated.
func warnIfDeprecated(m *openrpc.Method) {
	if m == nil || !m.Deprecated {
		return
	}
	detail := ""
	if m.Replacement != "" {
		detail += "; use " + m.Replacement
	}
	if m.Sunset != "" {
		detail += "; to be removed at " + m.Sunset
	}
	warnDeprecated(m.Name, detail)
}

// headerWatch is an http.RoundTripper that notes the Deprecation and
// Sunset headers of the last response.
type headerWatch struct {
	base http.RoundTripper
	mu   sync.Mutex
	dep  string
	sun  string
}

func (h *headerWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(req)
	if err == nil {
		h.mu.Lock()
		h.dep, h.sun = resp.Header.Get("Deprecation"), resp.Header.Get("Sunset")
		h.mu.Unlock()
	}
	return resp, err
}

// check warns that method is deprecated if the last response said so.
func (h *headerWatch) check(method string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	dep, sun := h.dep, h.sun
	h.dep, h.sun = "", ""
	h.mu.Unlock()
	if dep == "" {
		return
	}
	detail := " (Deprecation: " + dep
	if sun != "" {
		detail += ", Sunset: " + sun
	}
	warnDeprecated(method, detail+")")
}
