package interop

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// everythingServer is the MCP reference server's entry point, installed by
// `npm ci --prefix interop/node`.
var everythingServer = filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")

// mcpResources is what a client wants of resources/list: the server's
// resources have more members (name, mimeType, description…).
type mcpResources struct {
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
}

// mcpInitialize runs MCP's opening handshake and returns the server's name.
func mcpInitialize(t *testing.T, ctx context.Context, c jsonrpc.Client) string {
	t.Helper()
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	err := c.Call(ctx, "initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": "jsonrpc-interop", "version": "0"},
	}, &init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if init.ProtocolVersion == "" {
		t.Fatalf("initialize: no protocolVersion")
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	return init.ServerInfo.Name
}

// checkResourcesList lists the server's resources into a struct naming only
// their uri. (MCP has had no batches since 2025-06-18: the SDK's servers
// leave them unanswered; geth's test covers a Batch element.)
func checkResourcesList(t *testing.T, ctx context.Context, c jsonrpc.Client) {
	t.Helper()
	var rl mcpResources
	if err := c.Call(ctx, "resources/list", map[string]any{}, &rl); err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	if len(rl.Resources) == 0 || !strings.Contains(rl.Resources[0].URI, "://") {
		t.Fatalf("resources/list: %+v", rl)
	}
}

// Issue 26: @modelcontextprotocol/server-everything's resources/list into a
// struct of uris, over stdio and Streamable HTTP.
func TestMCPEverythingResultsIntoSmallStructs(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/server-everything")
	t.Run("stdio", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var stderr bytes.Buffer
		c, err := jsonrpc.DialCommand(ctx, "node", []string{everythingServer, "stdio"}, jsonrpc.WithStderr(&stderr))
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			c.Close()
			t.Logf("server stderr:\n%s", stderr.Bytes())
		}()
		if name := mcpInitialize(t, ctx, c); name == "" {
			t.Error("no serverInfo.name")
		}
		checkResourcesList(t, ctx, c)
	})
	t.Run("streamable-http", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		url := startEverythingHTTP(t, ctx)
		c, err := jsonrpc.DialStreamableHTTP(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mcpInitialize(t, ctx, c)
		checkResourcesList(t, ctx, c)
	})
}

// startEverythingHTTP runs the reference server's Streamable HTTP transport
// on a free loopback port and returns its /mcp URL once it listens.
func startEverythingHTTP(t *testing.T, ctx context.Context) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // the server takes the port; a race with another process is unlikely on loopback
	ctx, stop := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "node", everythingServer, "streamableHttp")
	cmd.Env = append(cmd.Environ(), "PORT="+strconv.Itoa(port))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop() // kills its process group
		cmd.Wait()
		t.Logf("server output:\n%s", out.String())
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not listen on %s", addr)
		}
	}
}
