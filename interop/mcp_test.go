package interop

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// The official MCP Go SDK's client drives the demo as an MCP server (issue
// 15) over Streamable HTTP (with sessions) and over stdio: initialize (the
// revision negotiated), ping, tools/list with input schemas, tools/call
// with a result, an unknown tool (-32601) and arguments that do not fit
// (a result with isError, as MCP 2025-11-25 asks).
func TestMCPGoSDKClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 60*time.Second)
	defer cancel()

	srv := &jsonrpc.Server{Handler: demo.NewMCPMux(), Logger: testLogger(t)}
	l, err := srv.Listen("http://127.0.0.1:0/mcp", jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{
		Sessions:         true,
		ProtocolVersions: demo.MCPProtocolVersions,
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())

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

	transports := map[string]func() mcp.Transport{
		"streamable-http": func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: l.URL, MaxRetries: -1} },
		"stdio":           func() mcp.Transport { return &mcp.CommandTransport{Command: exec.Command(bin)} },
	}
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, nil)
			cs, err := client.Connect(ctx, transport(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			init := cs.InitializeResult()
			if init == nil || init.ServerInfo.Name != "jrpc-demo" || !strings.HasPrefix(init.ProtocolVersion, "2025-") || init.Capabilities.Tools == nil {
				t.Fatalf("initialize: %+v", init)
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Fatalf("ping: %v", err)
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
