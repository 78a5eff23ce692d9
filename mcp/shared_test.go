package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// SharedInstance serves a server with a "chatty" tool, which logs at
// debug, info, warning, error and emergency, on a real HTTP server whose
// sessions are kept in store; it returns the server and its address.
func SharedInstance(t *testing.T, store state.SessionStore) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(mcp.Implementation{Name: "shared", Version: "1"})
	mcp.AddTool(s, mcp.Tool{Name: "chatty"}, func(ctx context.Context, _ struct{}) (addResult, error) {
		for _, l := range []string{"debug", "info", "warning", "error", "emergency"} {
			s.Log(ctx, l, "chatty", l)
		}
		return addResult{}, nil
	})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(_ context.Context, uri string, v map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "item "+v["id"])}, nil
	})
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	opts := s.StreamableHTTPOptions()
	opts.SessionStore = store
	ts := httptest.NewServer(srv.StreamableHTTPHandler(opts))
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// router sends each POST to the instance to names, every GET to get.
type router struct {
	to  atomic.Pointer[url.URL]
	get *url.URL
}

func (r *router) RoundTrip(req *http.Request) (*http.Response, error) {
	u := r.to.Load()
	if req.Method == http.MethodGet {
		u = r.get
	}
	req = req.Clone(req.Context())
	req.URL.Host, req.Host = u.Host, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

// TestSessionStateAcrossInstances: two instances sharing a session
// store; a session initialized through B, whose standalone stream is on
// B, sets its log level and subscribes through A. A tool called through B
// sends only the messages that level allows, and a resource updated on B
// reaches the session on B's stream, for the resource subscribed only.
func TestSessionStateAcrossInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	store := state.NewMemorySessionStore(nil)
	_, urlA := SharedInstance(t, store)
	b, urlB := SharedInstance(t, store)
	a, _ := url.Parse(urlA)
	r := &router{}
	r.get, _ = url.Parse(urlB)
	r.to.Store(r.get)
	got := make(chan *jsonrpc.Request, 16)
	c, err := jsonrpc.DialStreamableHTTP(ctx, urlB, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2025),
		jsonrpc.WithHTTPClient(&http.Client{Transport: r}),
		jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
			got <- req
			return nil, nil
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r.to.Store(a)
	for _, call := range []struct {
		method string
		params any
	}{
		{"logging/setLevel", map[string]string{"level": "warning"}},
		{"resources/subscribe", map[string]string{"uri": "test://item/1"}},
	} {
		if err := c.Call(ctx, call.method, call.params, nil); err != nil {
			t.Fatalf("%s through A: %v", call.method, err)
		}
	}
	r.to.Store(r.get)
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "chatty"}, nil); err != nil {
		t.Fatalf("tools/call through B: %v", err)
	}
	var levels []string
	for !slices.Contains(levels, "emergency") {
		m := next(ctx, t, got)
		var p struct{ Level string }
		if m.Method != "notifications/message" || json.Unmarshal(m.Params, &p) != nil {
			t.Fatalf("got %s %s, want log messages", m.Method, m.Params)
		}
		levels = append(levels, p.Level)
	}
	if want := []string{"warning", "error", "emergency"}; !slices.Equal(levels, want) {
		t.Fatalf("through B after setLevel warning through A, the levels sent: %v, want %v", levels, want)
	}
	b.ResourceUpdated("test://item/2")
	b.ResourceUpdated("test://item/1")
	if m := next(ctx, t, got); m.Method != "notifications/resources/updated" || string(m.Params) != `{"uri":"test://item/1"}` {
		t.Fatalf("after resources/subscribe through A, updates on B: %s %s, want item/1's", m.Method, m.Params)
	}
}

func next(ctx context.Context, t *testing.T, got <-chan *jsonrpc.Request) *jsonrpc.Request {
	t.Helper()
	select {
	case m := <-got:
		return m
	case <-ctx.Done():
		t.Fatal("no notification")
		return nil
	}
}
