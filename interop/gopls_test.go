package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// requireGopls returns gopls's path, or skips the test when it is not
// installed (CI installs it: JSONRPC_REQUIRE_GOPLS makes its absence fail).
func requireGopls(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("gopls")
	if err != nil {
		if gp, gerr := exec.Command("go", "env", "GOPATH").Output(); gerr == nil {
			p := filepath.Join(strings.TrimSpace(string(gp)), "bin", "gopls")
			if _, serr := os.Stat(p); serr == nil {
				return p
			}
		}
		if os.Getenv("JSONRPC_REQUIRE_GOPLS") != "" {
			t.Fatal("gopls is not installed: go install golang.org/x/tools/gopls@v0.23.0")
		}
		t.Skip("gopls is not installed: go install golang.org/x/tools/gopls@v0.23.0")
	}
	return path
}

// Issue 26: gopls's hover answer ({"contents", "range"}) into a struct that
// names only its contents, over stdio with LSP framing. (gopls takes no
// batches: LSP has none.)
func TestGoplsHoverIntoSmallStruct(t *testing.T) {
	gopls := requireGopls(t)
	dir := t.TempDir()
	src := "package main\n\n// Answer is the answer.\nconst Answer = 42\n\nfunc main() { _ = Answer }\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hover\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// gopls asks us for its configuration and registers capabilities.
	mux := jsonrpc.NewMux()
	mux.HandleFunc("workspace/configuration", func(_ context.Context, r *jsonrpc.Request) (any, error) {
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(r.Params, &p)
		return make([]any, len(p.Items)), nil
	})
	for _, m := range []string{"client/registerCapability", "window/workDoneProgress/create"} {
		mux.HandleFunc(m, func(context.Context, *jsonrpc.Request) (any, error) { return nil, nil })
	}
	var stderr bytes.Buffer
	c, err := jsonrpc.DialCommand(ctx, gopls, []string{"serve"}, jsonrpc.WithFraming(jsonrpc.FramingHeader),
		jsonrpc.WithHandler(mux), jsonrpc.WithLogger(testLogger(t)), jsonrpc.WithStderr(&stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		if t.Failed() {
			t.Logf("gopls stderr:\n%s", stderr.Bytes())
		}
	}()
	uri := "file://" + filepath.Join(dir, "main.go")
	var init struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := c.Call(ctx, "initialize", map[string]any{
		"processId": os.Getpid(),
		"rootUri":   "file://" + dir,
		"capabilities": map[string]any{
			"textDocument": map[string]any{"hover": map[string]any{"contentFormat": []string{"markdown", "plaintext"}}},
		},
	}, &init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if init.ServerInfo.Name != "gopls" {
		t.Fatalf("serverInfo: %+v", init)
	}
	if err := c.Notify(ctx, "initialized", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, "textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": src},
	}); err != nil {
		t.Fatal(err)
	}
	at := map[string]any{"textDocument": map[string]string{"uri": uri}, "position": map[string]int{"line": 5, "character": 19}}
	type hover struct {
		Contents struct {
			Kind  string `json:"kind"`
			Value string `json:"value"`
		} `json:"contents"`
	}
	var h hover
	if err := c.Call(ctx, "textDocument/hover", at, &h); err != nil {
		t.Fatalf("hover: %v", err)
	}
	if !strings.Contains(h.Contents.Value, "Answer") {
		t.Fatalf("hover: %+v", h)
	}
	var shut any
	if err := c.Call(ctx, "shutdown", nil, &shut); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	c.Notify(ctx, "exit", nil)
}
