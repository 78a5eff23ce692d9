package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Host patterns match with or without the port, IPv6 brackets or not.
func TestMatchHost(t *testing.T) {
	cases := []struct {
		patterns []string
		host     string
		want     bool
	}{
		{[]string{"localhost"}, "LOCALHOST:8080", true},
		{[]string{"localhost:8080"}, "localhost:8080", true},
		{[]string{"localhost:8080"}, "localhost:9090", false},
		{[]string{"*.example.com"}, "api.example.com", true},
		{[]string{"*.example.com"}, "example.com", false},
		{[]string{"[::1]"}, "[::1]:8080", true},
		{[]string{"::1"}, "[::1]", true},
		{nil, "localhost", false},
	}
	for _, c := range cases {
		if got := MatchHost(c.patterns, c.host); got != c.want {
			t.Errorf("MatchHost(%q, %q) = %v", c.patterns, c.host, got)
		}
	}
}

// CheckOrigin: same origin and no origin pass, others only when allowed
// (then CORS is due); a Host outside AllowedHosts is refused.
func TestCheckOrigin(t *testing.T) {
	cases := []struct {
		origin, host   string
		hosts, origins []string
		ok, cors       bool
	}{
		{"", "api.test", nil, nil, true, false},
		{"http://api.test", "api.test", nil, nil, true, false},
		{"http://evil.test", "api.test", nil, nil, false, false},
		{"http://app.test", "api.test", nil, []string{"app.test"}, true, true},
		{"https://app.test", "api.test", nil, []string{"http://app.test"}, false, false},
		{"null", "api.test", nil, []string{"null"}, true, true},
		{"null", "api.test", nil, nil, false, false},
		{"", "rebind.test", []string{"api.test"}, nil, false, false},
		{"", "api.test:80", []string{"api.test"}, nil, true, false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "http://"+c.host+"/", nil)
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		ok, cors, why := CheckOrigin(r, c.hosts, c.origins)
		if ok != c.ok || cors != c.cors || (ok == (why != "")) {
			t.Errorf("origin %q host %q: ok %v cors %v why %q", c.origin, c.host, ok, cors, why)
		}
	}
}

// A preflight is answered; another request only gets its headers.
func TestServeCORS(t *testing.T) {
	r := httptest.NewRequest(http.MethodOptions, "http://api.test/", nil)
	r.Header.Set("Origin", "http://app.test")
	w := httptest.NewRecorder()
	if !ServeCORS(w, r) || w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "http://app.test" {
		t.Fatalf("preflight: %v %v", w.Code, w.Header())
	}
	r.Method = http.MethodPost
	w = httptest.NewRecorder()
	if ServeCORS(w, r) || w.Header().Get("Access-Control-Allow-Methods") != "" {
		t.Fatalf("POST: answered, or preflight headers %v", w.Header())
	}
}
