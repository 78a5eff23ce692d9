package interop

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	jmcp "github.com/seedhq/jsonrpc/mcp"
)

// The official MCP Go SDK client opens our server's standalone GET stream
// (revision 2025-06-18 and later) and gets on it what the server sends
// outside any call: notifications/tools/list_changed and
// notifications/resources/list_changed sent on the session's connection (SessionConn) kept from an earlier
// request, after that request was answered.
func TestMCPGoSDKStandaloneStream(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	conns := make(chan *jsonrpc.Conn, 1)
	keep := func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == "tools/list" {
				select {
				case conns <- jsonrpc.SessionConn(ctx):
				default:
				}
			}
			return next.ServeRPC(ctx, req)
		})
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Logger: testLogger(t), Convention: jsonrpc.ConventionMCP, Middleware: []jsonrpc.Middleware{keep}}
	l, err := srv.Listen("http://127.0.0.1:0/mcp", jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{
		Sessions:         true,
		ProtocolVersions: jmcp.SessionVersions,
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	changed := make(chan struct{}, 1)
	resources := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sc := <-conns
	if sc == nil {
		t.Fatal("no session connection")
	}
	// The SDK opens its GET stream on its own; until it is open, the
	// messages wait in the session's outbox.
	if err := sc.Notify(ctx, "notifications/tools/list_changed", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Notify(ctx, "notifications/resources/list_changed", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("notifications/tools/list_changed never reached the SDK client")
	}
	select {
	case <-resources:
	case <-ctx.Done():
		t.Fatal("notifications/resources/list_changed never reached the SDK client")
	}
}
