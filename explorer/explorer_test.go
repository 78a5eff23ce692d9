package explorer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/explorer"
	"github.com/seedhq/jsonrpc/internal/demo"
)

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestHandler checks what the handler serves: the page and its files with
// a strict Content-Security-Policy, config.json, and nothing else.
func TestHandler(t *testing.T) {
	ts := httptest.NewServer(http.StripPrefix("/explorer", explorer.New(explorer.Config{Endpoint: "/rpc", Target: "demo"})))
	defer ts.Close()
	resp, body := get(t, ts.URL+"/explorer/")
	if resp.StatusCode != 200 || !strings.Contains(body, `<script src="app.js" defer></script>`) {
		t.Fatalf("page: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if _, body := get(t, ts.URL+"/explorer/config.json"); body != `{"endpoint":"/rpc","target":"demo"}` {
		t.Errorf("config.json: %s", body)
	}
	for _, f := range []string{"app.js", "style.css"} {
		if resp, body := get(t, ts.URL+"/explorer/"+f); resp.StatusCode != 200 || len(body) < 1000 {
			t.Errorf("%s: %d, %d bytes", f, resp.StatusCode, len(body))
		}
	}
	bad := httptest.NewServer(explorer.New(explorer.Config{Document: json.RawMessage(`{"methods":`)}))
	defer bad.Close()
	if resp, body := get(t, bad.URL+"/config.json"); resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "cannot be encoded") {
		t.Errorf("config.json of a Document that is not JSON: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, ts.URL+"/explorer/secret.txt"); resp.StatusCode != 404 {
		t.Errorf("an unknown file: %d", resp.StatusCode)
	}
	resp, err := http.Post(ts.URL+"/explorer/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	// No asset refers to another site.
	for _, f := range []string{"", "app.js", "style.css"} {
		_, body := get(t, ts.URL+"/explorer/"+f)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
			if strings.Contains(body, bad) {
				t.Errorf("%q contains %q", f, bad)
			}
		}
	}
}

// browserDir holds the npm project that drives Chromium (playwright-core).
const browserDir = "testdata/browser"

// TestBrowser drives headless Chromium through the explorer mounted on the
// demo server, once over HTTP POST and once over WebSocket (notifications
// shown live). Screenshots go to testdata/browser/out/ (a CI artifact).
func TestBrowser(t *testing.T) {
	demo.NeedBrowser(t, browserDir)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	routes := http.NewServeMux()
	routes.Handle("/rpc", srv)
	routes.Handle("/ws", srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	routes.Handle("/http/", http.StripPrefix("/http", explorer.New(explorer.Config{Endpoint: "/rpc"})))
	routes.Handle("/ws-explorer/", http.StripPrefix("/ws-explorer", explorer.New(explorer.Config{WebSocket: "/ws"})))
	ts := httptest.NewServer(routes)
	defer ts.Close()
	t.Run("http", func(t *testing.T) {
		demo.BrowserTest(t, browserDir, ts.URL+"/http/", "--screenshot", "out/http.png")
	})
	t.Run("ws", func(t *testing.T) {
		demo.BrowserTest(t, browserDir, ts.URL+"/ws-explorer/", "--notifications", "--screenshot", "out/ws.png")
	})
	// The page on one origin, the service on another that allows it: the
	// browser's CORS preflight is answered, and the calls go through
	// (without AllowedOrigins the browser blocks them).
	t.Run("cross-origin", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		pageOrigin := "http://" + ln.Addr().String()
		api := httptest.NewServer(&jsonrpc.Server{Handler: demo.Shared{}.NewMux(), AllowedOrigins: []string{pageOrigin}})
		defer api.Close()
		pages := &httptest.Server{Listener: ln, Config: &http.Server{Handler: explorer.New(explorer.Config{Endpoint: api.URL + "/"})}}
		pages.Start()
		defer pages.Close()
		demo.BrowserTest(t, browserDir, pageOrigin+"/")
	})
	// A service without rpc.discover: the page says so and calls methods
	// by name; given the service's document, it lists its methods again.
	routes.Handle("/blind", &jsonrpc.Server{Handler: withoutDiscover(demo.Shared{}.NewMux())})
	t.Run("no-discover", func(t *testing.T) {
		routes.Handle("/blind-explorer/", http.StripPrefix("/blind-explorer", explorer.New(explorer.Config{Endpoint: "/blind"})))
		demo.BrowserTest(t, browserDir, ts.URL+"/blind-explorer/", "--mode", "free", "--banner", "rpc.discover: -32601", "--screenshot", "out/no-discover.png")
	})
	t.Run("document", func(t *testing.T) {
		routes.Handle("/doc-explorer/", http.StripPrefix("/doc-explorer", explorer.New(explorer.Config{Endpoint: "/blind", Document: discover(t, ts.URL+"/rpc")})))
		demo.BrowserTest(t, browserDir, ts.URL+"/doc-explorer/")
	})
}

// withoutDiscover is h as a service that does not describe itself.
func withoutDiscover(h jsonrpc.Handler) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "rpc.discover" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return h.ServeRPC(ctx, req)
	})
}

// discover returns the OpenRPC document the service at url describes itself with.
func discover(t *testing.T, url string) json.RawMessage {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct{ Result json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || len(answer.Result) == 0 {
		t.Fatalf("rpc.discover: %v %s", err, answer.Result)
	}
	return answer.Result
}
