package demo_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// toInstance sends each POST to the instance at to, every GET to get.
type toInstance struct {
	to, get atomic.Pointer[url.URL]
}

func (r *toInstance) RoundTrip(req *http.Request) (*http.Response, error) {
	u := r.to.Load()
	if req.Method == http.MethodGet {
		u = r.get.Load()
	}
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = u.Host, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

// The demo's log level travels with a session kept in a SessionStore: set
// to notice through A, a tool call cancelled through B (which holds the
// session's standalone stream) gets its notice there; set to error
// through A, the next one gets none.
func TestMCPLogLevelAcrossInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := state.NewMemorySessionStore(nil)
	var urls [2]*url.URL
	for i := range urls {
		srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
		ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true,
			ProtocolVersions: mcp.SessionVersions, StatelessVersions: mcp.StatelessVersions, SessionStore: store}))
		t.Cleanup(func() {
			ts.CloseClientConnections()
			ts.Close()
			srv.Shutdown(context.Background())
		})
		urls[i], _ = url.Parse(ts.URL)
	}
	a, b := urls[0], urls[1]
	r := &toInstance{}
	r.to.Store(b)
	r.get.Store(b)
	logs := make(chan string, 8)
	c, err := jsonrpc.DialStreamableHTTP(ctx, b.String(), jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025),
		jsonrpc.WithHTTPClient(&http.Client{Transport: r}),
		jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == "notifications/message" {
				var p struct{ Level string }
				_ = json.Unmarshal(req.Params, &p)
				logs <- p.Level
			}
			return nil, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// cancelled calls sleep through B and cancels it after 100 ms; it
	// returns the level of the log message that follows within wait ("" none).
	cancelled := func(wait time.Duration) string {
		t.Helper()
		r.to.Store(b)
		cctx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		defer stop()
		_ = c.Call(cctx, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60000}}, nil)
		select {
		case l := <-logs:
			return l
		case <-time.After(wait):
			return ""
		}
	}
	setLevel := func(level string) {
		t.Helper()
		r.to.Store(a)
		if err := c.Call(ctx, "logging/setLevel", map[string]string{"level": level}, nil); err != nil {
			t.Fatalf("setLevel %s through A: %v", level, err)
		}
	}
	setLevel("notice")
	if l := cancelled(10 * time.Second); l != "notice" {
		t.Fatalf("a call cancelled through B after setLevel notice through A: log %q, want notice", l)
	}
	setLevel("error")
	if l := cancelled(500 * time.Millisecond); l != "" {
		t.Fatalf("a call cancelled through B after setLevel error through A: log %q, want none", l)
	}
}
