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
)

// The node peers live in node/; their packages are installed by
// `npm ci --prefix node` (see node/package.json).
const nodeDir = "node"

// requireNode skips the test unless node is on PATH and the npm package pkg
// is installed in node/node_modules.
func requireNode(t *testing.T, pkg string) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("JSONRPC_REQUIRE_NODE") != "" {
		skip = t.Fatalf // CI: these tests must run
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed; the node interop tests need Node 20 or later")
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", pkg, "package.json")); err != nil {
		skip("the npm package %s is not installed: run `npm ci --prefix interop/node` from the repository root first", pkg)
	}
}

// runNode runs `node script args...` in node/ and returns its standard
// output. The script's standard error goes to the test log. It is killed,
// with anything it spawned, when ctx ends.
func runNode(t *testing.T, ctx context.Context, script string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = nodeDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	err := cmd.Run()
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("%s stderr:\n%s", script, s)
	}
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s", script, err, stdout.Bytes())
	}
	return stdout.Bytes()
}

// outcome is a script's record of one request: its result or its error.
type outcome struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// wantResult checks that o is a result equal (as JSON) to want.
func (o outcome) wantResult(t *testing.T, name, want string) {
	t.Helper()
	if o.Error != nil {
		t.Errorf("%s: error %d %q, want result %s", name, o.Error.Code, o.Error.Message, want)
		return
	}
	if o.Result == nil || !jsonEqual(t, o.Result, []byte(want)) {
		t.Errorf("%s: result %s, want %s", name, o.Result, want)
	}
}

// wantError checks that o is an error with the code (and the message and
// data, when not empty).
func (o outcome) wantError(t *testing.T, name string, code int64, message, data string) {
	t.Helper()
	if o.Error == nil {
		t.Errorf("%s: result %s, want error %d", name, o.Result, code)
		return
	}
	if o.Error.Code != code {
		t.Errorf("%s: error code %d (%q), want %d", name, o.Error.Code, o.Error.Message, code)
	}
	if message != "" && o.Error.Message != message {
		t.Errorf("%s: error message %q, want %q", name, o.Error.Message, message)
	}
	if data != "" && !jsonEqual(t, o.Error.Data, []byte(data)) {
		t.Errorf("%s: error data %s, want %s", name, o.Error.Data, data)
	}
}

// decodeOutput decodes a script's one line of JSON output into v, strictly.
func decodeOutput(t *testing.T, out []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(out))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("cannot decode the script's output: %v\n%s", err, out)
	}
}
