package httpx

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

func TestRoutes(t *testing.T) {
	say := func(s string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) })
	}
	extra := http.NewServeMux()
	extra.Handle("/explorer/", say("explorer"))
	var draining atomic.Bool
	rt := &Routes{Path: "/rpc", Handler: say("rpc"), HealthPath: "/healthz", Health: say("ok"), Extra: extra, Limit: 1, Draining: draining.Load}
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		return w
	}
	for path, want := range map[string]string{"/rpc": "rpc", "/healthz": "ok", "/explorer/x": "explorer"} {
		if w := get(path); w.Code != 200 || w.Body.String() != want || w.Header().Get("Connection") != "" {
			t.Errorf("%s: %d %q %v", path, w.Code, w.Body, w.Header())
		}
	}
	if w := get("/nope"); w.Code != http.StatusNotFound {
		t.Errorf("/nope: %d", w.Code)
	}
	draining.Store(true)
	if w := get("/rpc"); w.Header().Get("Connection") != "close" {
		t.Errorf("draining: Connection %q", w.Header().Get("Connection"))
	}
	draining.Store(false)

	// Over Limit: 503 with Retry-After, while the health check still answers.
	rt.Extra = nil
	entered, release := make(chan struct{}), make(chan struct{})
	rt.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { close(entered); <-release })
	done := make(chan struct{})
	go func() { defer close(done); get("/rpc") }()
	<-entered
	if w := get("/rpc"); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), "too many") {
		t.Errorf("over the limit: %d %v %q", w.Code, w.Header(), w.Body)
	}
	if w := get("/healthz"); w.Code != 200 {
		t.Errorf("health over the limit: %d", w.Code)
	}
	if w := get("/other"); w.Code != http.StatusNotFound {
		t.Errorf("no extra: %d", w.Code)
	}
	close(release)
	<-done
	rt.Handler = say("rpc")
	if w := get("/rpc"); w.Code != 200 {
		t.Errorf("after the slow request: %d", w.Code)
	}
}
