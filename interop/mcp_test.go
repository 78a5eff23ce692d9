package interop

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	jmcp "github.com/seedhq/jsonrpc/mcp"
)

// The official MCP Go SDK's client drives the demo as an MCP server (issue
// 15) over Streamable HTTP (with sessions) and over stdio: initialize (the
// revision negotiated), ping, tools/list with input schemas, tools/call
// with a result, an unknown tool (-32602) and arguments that do not fit
// (a result with isError, as MCP 2025-11-25 asks).
func TestMCPGoSDKClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()

	transports, _, _ := mcpDemo(t, ctx)
	for name, transport := range mcpRuns(transports) {
		t.Run(name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, transport.transport(), transport.options())
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init == nil || init.ServerInfo.Name != "jrpc-demo" || !strings.HasPrefix(init.ProtocolVersion, transport.reached()) || init.Capabilities.Tools == nil {
				t.Fatalf("initialize: %+v", init)
			}
			if err := cs.Ping(ctx, nil); (err != nil) != (transport.reached() == jsonrpc.MCPVersion2026 && transport.name != "stdio") {
				t.Fatalf("ping: %v (2026-07-28 over HTTP: 404, the revision has no ping)", err)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, tool := range tools.Tools {
				names[tool.Name] = tool.InputSchema != nil
			}
			for _, want := range []string{"add", "echo", "now", "sleep"} {
				if !names[want] {
					t.Fatalf("tools/list: %s missing or without inputSchema: %v", want, names)
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "5" {
				t.Fatalf("add: %+v", res)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "two", "b": 3}})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "/arguments/a") {
				t.Fatalf("bad arguments: %+v %v", res, err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
				t.Fatalf("unknown tool: %v", err)
			}
		})
	}
}

// mcpDemo serves the MCP demo over Streamable HTTP (with sessions, in this
// process) and builds cmd/mcpserver (stdio): the transports to reach each,
// the count of tool calls whose context was cancelled on the HTTP server,
// and the standard error of the stdio servers (which log the calls
// cancelled).
func mcpDemo(t *testing.T, ctx context.Context) (map[string]func() mcp.Transport, *atomic.Int64, *syncBuffer) {
	t.Helper()
	stderr := new(syncBuffer)
	cancelled := new(atomic.Int64)
	count := func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			v, err := next.ServeRPC(ctx, req)
			if req.Method == "tools/call" && ctx.Err() != nil {
				cancelled.Add(1)
			}
			return v, err
		})
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Logger: testLogger(t), Convention: jsonrpc.ConventionMCP, Middleware: []jsonrpc.Middleware{count}}
	l, err := srv.Listen("http://127.0.0.1:0/mcp", jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{
		Sessions:          true,
		ProtocolVersions:  jmcp.SessionVersions,
		StatelessVersions: jmcp.StatelessVersions,
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	bin := filepath.Join(t.TempDir(), "mcpserver")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.CommandContext(ctx, "go", append(args, "./cmd/mcpserver")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/mcpserver: %v\n%s", err, out)
	}
	return map[string]func() mcp.Transport{
		"streamable-http": func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: l.URL, MaxRetries: -1} },
		"stdio": func() mcp.Transport {
			cmd := exec.Command(bin)
			cmd.Stderr = stderr
			return &mcp.CommandTransport{Command: cmd}
		},
	}, cancelled, stderr
}

// The official MCP Go SDK client gets the sleep tool's progress
// notifications for the progressToken it sends, and cancelling a call's
// context (the SDK then sends notifications/cancelled) stops the tool on
// the server: its handler returns with its context cancelled (counted on
// HTTP, logged by the stdio server), and the session goes on.
func TestMCPGoSDKProgressAndCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	transports, cancelled, stderr := mcpDemo(t, ctx)
	for name, transport := range mcpRuns(transports) {
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			var reports []*mcp.ProgressNotificationParams
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					reports = append(reports, req.Params)
					mu.Unlock()
				},
			})
			cs, err := client.Connect(ctx, transport.transport(), transport.options())
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{
				Meta:      mcp.Meta{"progressToken": "sleep-1"},
				Name:      "sleep",
				Arguments: map[string]any{"ms": 300},
			})
			if err != nil || res.IsError {
				t.Fatalf("sleep: %+v %v", res, err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				mu.Lock()
				n := len(reports)
				mu.Unlock()
				if n >= 3 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			got := slices.Clone(reports)
			mu.Unlock()
			if len(got) < 3 {
				t.Fatalf("%d progress notifications for a 300 ms sleep, want about 9", len(got))
			}
			for i, p := range got {
				if p.ProgressToken != "sleep-1" || p.Total != 300 || p.Progress <= 0 || (i > 0 && p.Progress <= got[i-1].Progress) {
					t.Fatalf("progress %d: %+v", i, p)
				}
			}

			before := cancelled.Load()
			short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
			defer stop()
			if _, err := cs.CallTool(short, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}}); err == nil {
				t.Fatal("a cancelled sleep returned")
			}
			seen := func() bool {
				if transport.name == "stdio" {
					return strings.Contains(stderr.String(), `mcpserver: call cancelled" method=tools/call`)
				}
				return cancelled.Load() > before
			}
			for wait := time.Now().Add(10 * time.Second); !seen() && time.Now().Before(wait); {
				time.Sleep(10 * time.Millisecond)
			}
			if !seen() {
				t.Fatalf("the server's tool handler did not see its context cancelled (stderr: %s)", stderr.String())
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 1}}); err != nil {
				t.Fatalf("a call after the cancel: %v", err)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer that a subprocess writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// mcpRun is one way to reach the demo: a transport and the protocol
// revision the client pins ("" for the SDK's own choice: the newest it
// speaks that the server does, 2026-07-28 here).
type mcpRun struct {
	name, version string
	transport     func() mcp.Transport
}

func (r mcpRun) options() *mcp.ClientSessionOptions {
	return &mcp.ClientSessionOptions{ProtocolVersion: r.version}
}

// reached is the revision (a prefix of it) the session must reach.
func (r mcpRun) reached() string {
	if r.version == "" {
		return jsonrpc.MCPVersion2026
	}
	return r.version
}

// mcpRuns runs every transport pinned to 2025-11-25, pinned to 2026-07-28
// and on the SDK's automatic negotiation.
func mcpRuns(transports map[string]func() mcp.Transport) map[string]mcpRun {
	runs := map[string]mcpRun{}
	for name, tr := range transports {
		for _, v := range []string{"2025-11-25", jsonrpc.MCPVersion2026, ""} {
			label := v
			if v == "" {
				label = "auto"
			}
			runs[name+"/"+label] = mcpRun{name: name, version: v, transport: tr}
		}
	}
	return runs
}

// A Go SDK client with a tools-list-changed handler opens
// subscriptions/listen at connect under 2026-07-28 (the demo advertises
// tools.listChanged in server/discover): the demo acknowledges it, over
// Streamable HTTP (a long POST answered with an event stream) and stdio,
// and the session works beside it.
func TestMCPGoSDKListen2026(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()
	transports, _, _ := mcpDemo(t, ctx)
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {},
			})
			cs, err := client.Connect(ctx, transport(), &mcp.ClientSessionOptions{ProtocolVersion: jsonrpc.MCPVersion2026})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != jsonrpc.MCPVersion2026 {
				t.Fatalf("reached %s", v)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "3" {
				t.Fatalf("add beside the listen stream: %+v %v", res, err)
			}
		})
	}
}
