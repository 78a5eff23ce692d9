package demo

// The explorer's browser test (the npm project in explorer/testdata/browser,
// which drives Debian's headless Chromium with playwright-core), run from the
// Go tests of explorer and cmd/jrpc against the demo service: the explorer
// page, and the page of jrpc bench --report.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium is the browser the test drives.
const chromium = "/usr/bin/chromium"

// NeedBrowser skips t (or, with JSONRPC_REQUIRE_NODE set, as in CI, fails it)
// when node, the npm project's modules in dir or Chromium are missing.
func NeedBrowser(t testing.TB, dir string) {
	t.Helper()
	skip := t.Skip
	if os.Getenv("JSONRPC_REQUIRE_NODE") != "" {
		skip = t.Fatal
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed: it drives the browser test")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		skip("explorer/testdata/browser/node_modules is missing: run `npm ci` there")
	}
	if _, err := os.Stat(chromium); err != nil {
		skip(chromium + " is missing: apt-get install chromium")
	}
}

// BrowserTest runs test.mjs in dir against the explorer page at url, expecting
// every demo method; extra are more flags (--notifications, --screenshot
// out/NAME.png).
func BrowserTest(t testing.TB, dir, url string, extra ...string) {
	t.Helper()
	var names []string
	for _, m := range (Shared{}).NewMux().Methods() {
		names = append(names, m.Name)
	}
	BrowserScript(t, dir, "test.mjs", append([]string{"--url", url, "--methods", strings.Join(names, ",")}, extra...)...)
}

// BrowserScript runs another script of the npm project in dir (report.mjs checks
// a jrpc bench --report page) with args, failing t if it fails.
func BrowserScript(t testing.TB, dir, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("browser test %s %s: %v", script, strings.Join(args, " "), err)
	}
}
