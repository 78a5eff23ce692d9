package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// TestSharedSession checks that what an MCP 2025 session sets travels with
// it between two instances, each a real HTTP server whose sessions are kept
// in a and in b, two handles on the same sessions: a session initialized
// through B (its standalone stream on B) sets its log level and subscribes
// through A; a tool called through B sends only the log messages that
// level allows, and resources updated on B reach the session for the
// resources subscribed through A only, unsubscribing included. With
// brokers (ba and bb, two handles on one, or nil), an update on A reaches
// the session on B's stream too.
func TestSharedSession(t *testing.T, a, b state.SessionStore, ba, bb state.Broker) {
	ctx := ctxOf(t)
	srvA, urlA := sharedInstance(t, a, ba)
	srvB, urlB := sharedInstance(t, b, bb)
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
	through := func(u, method string, params any) {
		t.Helper()
		r.to.Store(must(url.Parse(u)))
		if err := c.Call(ctx, method, params, nil); err != nil {
			t.Fatalf("%s through %s: %v", method, u, err)
		}
	}
	through(urlA, "logging/setLevel", map[string]string{"level": "warning"})
	through(urlA, "resources/subscribe", map[string]string{"uri": "test://item/1"})
	through(urlB, "tools/call", map[string]any{"name": "chatty"})
	// The client's handler may take notifications in another order than
	// they came (it serves them concurrently): the levels are compared as
	// a set. One too many shows here, or as the next message below.
	want, levels := []string{"emergency", "error", "warning"}, []string{}
	for len(levels) < len(want) {
		m := next(ctx, t, got)
		var p struct{ Level string }
		if m.Method != "notifications/message" || json.Unmarshal(m.Params, &p) != nil {
			t.Fatalf("got %s %s, want log messages", m.Method, m.Params)
		}
		levels = append(levels, p.Level)
	}
	if slices.Sort(levels); !slices.Equal(levels, want) {
		t.Fatalf("through B after setLevel warning through A, the levels sent: %v, want %v", levels, want)
	}
	wantUpdated := func(uri string) {
		t.Helper()
		if m := next(ctx, t, got); m.Method != "notifications/resources/updated" || string(m.Params) != `{"uri":"`+uri+`"}` {
			t.Fatalf("updates on B: got %s %s, want %s's", m.Method, m.Params, uri)
		}
	}
	srvB.ResourceUpdated("test://item/2")
	srvB.ResourceUpdated("test://item/1")
	wantUpdated("test://item/1")
	through(urlA, "resources/subscribe", map[string]string{"uri": "test://item/3"})
	through(urlA, "resources/unsubscribe", map[string]string{"uri": "test://item/1"})
	through(urlB, "ping", nil)
	srvB.ResourceUpdated("test://item/1")
	srvB.ResourceUpdated("test://item/3")
	wantUpdated("test://item/3")
	if ba != nil {
		srvA.ResourceUpdated("test://item/1")
		srvA.ResourceUpdated("test://item/3")
		wantUpdated("test://item/3")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sharedInstance serves a server with a "chatty" tool, which logs at
// debug, info, warning, error and emergency, on a real HTTP server whose
// sessions are kept in store, its updates carried by broker; it returns
// the server and its address.
func sharedInstance(t *testing.T, store state.SessionStore, broker state.Broker) (*mcp.Server, string) {
	t.Helper()
	s := mcp.NewServer(mcp.Implementation{Name: "shared", Version: "1"})
	s.Broker = broker
	mcp.AddTool(s, mcp.Tool{Name: "chatty"}, func(ctx context.Context, _ struct{}) (struct{}, error) {
		for _, l := range []string{"debug", "info", "warning", "error", "emergency"} {
			s.Log(ctx, l, "chatty", l)
		}
		return struct{}{}, nil
	})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(_ context.Context, uri string, v map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResource(uri, "text/plain", "item "+v["id"])}, nil
	})
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	opts := s.StreamableHTTPOptions()
	opts.SessionStore = store
	ts := httptest.NewServer(srv.StreamableHTTPHandler(opts))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Shutdown(context.Background())
		s.Close()
	})
	return s, ts.URL
}

// router sends each POST to the instance at to, every GET to get.
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
