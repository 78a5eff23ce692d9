package httpx

import (
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// CheckOrigin applies the Origin and Host rules to an HTTP request. It
// reports whether the request may go on, and whether it is a cross-origin
// request from an allowed origin (so that CORS headers are due); why says
// what was refused. A request without Origin (curl, servers) or from the
// same origin passes; another origin passes only if allowedOrigins, in
// path.Match syntax, matches it: a pattern with "://" the whole origin,
// others its host; "*" allows any origin. With allowedHosts set, the Host
// header must match one of them (see MatchHost).
func CheckOrigin(r *http.Request, allowedHosts, allowedOrigins []string) (ok, cors bool, why string) {
	if len(allowedHosts) > 0 && !MatchHost(allowedHosts, r.Host) {
		return false, false, "host " + strconv.Quote(r.Host) + " is not allowed"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true, false, ""
	}
	host := origin // not a URL ("null": sandboxed pages, files): only if listed
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		if strings.EqualFold(u.Host, r.Host) {
			return true, false, ""
		}
		host = u.Host
	}
	for _, p := range allowedOrigins {
		target := host
		if strings.Contains(p, "://") {
			target = origin
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return true, true, ""
		}
	}
	return false, false, "origin " + strconv.Quote(origin) + " is not allowed"
}

// MatchHost matches a Host header (with or without its port) against
// patterns in path.Match syntax.
func MatchHost(patterns []string, host string) bool {
	host = strings.ToLower(host)
	bare := host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		bare = host[:i]
	}
	bare = strings.TrimSuffix(strings.TrimPrefix(bare, "["), "]")
	for _, p := range patterns {
		p = strings.ToLower(p)
		if ok, _ := path.Match(p, host); ok {
			return true
		}
		if ok, _ := path.Match(strings.TrimSuffix(strings.TrimPrefix(p, "["), "]"), bare); ok {
			return true
		}
	}
	return false
}

// corsHeaders are the request headers a cross-origin page may send.
const corsHeaders = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"

// ServeCORS sets the CORS headers of a response to an allowed cross-origin
// request and answers its preflight (OPTIONS). It reports whether the
// request has been answered.
func ServeCORS(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
	if !slices.Contains(h.Values("Vary"), "Origin") { // checked twice: Streamable HTTP's plain clients are served by ServeHTTP
		h.Add("Vary", "Origin")
	}
	h.Set("Access-Control-Allow-Credentials", "true")
	if r.Method != http.MethodOptions {
		h.Set("Access-Control-Expose-Headers", "WWW-Authenticate, Retry-After, Mcp-Session-Id")
		return false
	}
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
