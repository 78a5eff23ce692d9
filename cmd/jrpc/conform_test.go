package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// report is what --json writes.
type report struct {
	Target string `json:"target"`
	Checks []struct {
		Name, Level, Status, Spec, Detail, Cause string
	} `json:"checks"`
}

func readReport(t *testing.T, name string) report {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		Target json.RawMessage              `json:"target"`
		Checks []map[string]json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, c := range keys.Checks {
		n := 5
		if c["cause"] != nil {
			n = 6 // failures only
		}
		if len(c) != n || c["name"] == nil || c["level"] == nil || c["status"] == nil || c["spec"] == nil || c["detail"] == nil {
			t.Fatalf("a check of the report has members other than name, level, status, spec, detail (and cause): %v", c)
		}
	}
	var r report
	json.Unmarshal(b, &r)
	return r
}

func (r report) status(name string) string {
	for _, c := range r.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return "missing"
}

// TestConformEveryTransport runs jrpc conform against jrpc serve over every
// transport (with the hostile checks on tcp and stdio): every check passes.
func TestConformEveryTransport(t *testing.T) {
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "r.json")
			junit := filepath.Join(t.TempDir(), "r.xml")
			args := []string{"--json", file, "--junit", junit, "--discover"}
			if name == "tcp" || name == "stdio" { // the hostile checks take seconds: two transports are enough
				args = append(args, "--hostile", "--max-bytes", "65536", "--duration", "5s")
			}
			r := run(t, "", with(tgt, "conform", args...)...)
			if r.code != 0 || !strings.Contains(r.stdout, "every MUST check passed") {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			rep := readReport(t, file)
			if len(rep.Checks) < 120 {
				t.Fatalf("only %d checks", len(rep.Checks))
			}
			for _, c := range rep.Checks {
				if c.Status == "FAIL" {
					t.Errorf("%s %s failed: %s", c.Level, c.Name, c.Detail)
				}
			}
			wants := []string{"id/int-2^64+1", "id/invalid-bool", "notification/no-params", "batch/empty", "batch/calls-answered", "spec/batch-mixed", "method/subtract/by-name/result", "connection/kept"}
			if name == "tcp" || name == "unix" || name == "stdio" { // line-framed: the framing checks run
				wants = append(wants, "framing/text-after-message", "framing/two-messages-one-line", "framing/not-json-then-valid")
			}
			for _, want := range wants {
				if got := rep.status(want); got != "PASS" {
					t.Errorf("%s: %s", want, got)
				}
			}
			if x, _ := os.ReadFile(junit); !strings.Contains(string(x), `<testsuite name="JSON-RPC 2.0 conformance of`) {
				t.Errorf("junit report: %s", x)
			}
		})
	}
}

// TestConformCatchesDefects runs jrpc conform against HTTP servers with
// one defect each: exit 1, and the defect's check failed.
func TestConformCatchesDefects(t *testing.T) {
	for _, c := range []struct {
		defect, check string
		serve         func(body []byte) string
	}{
		{"answers notifications", "notification/no-params", func(body []byte) string {
			if !strings.Contains(string(body), `"id"`) {
				return `{"jsonrpc":"2.0","id":null,"result":null}`
			}
			return `{"jsonrpc":"2.0","id":` + idOf(body) + `,"error":{"code":-32601,"message":"no such method"}}`
		}},
		{"echoes the id \"1\" as 1", "id/string-numeric", func(body []byte) string {
			if !strings.Contains(string(body), `"id"`) {
				return ""
			}
			id := idOf(body)
			if id == `"1"` {
				id = `1`
			}
			return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"no such method"}}`
		}},
	} {
		t.Run(c.defect, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				out := c.serve(body)
				if out == "" {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, out)
			}))
			defer srv.Close()
			file := filepath.Join(t.TempDir(), "r.json")
			r := run(t, "", "conform", srv.URL, "--json", file, "--only", `^(id|notification)/`)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if got := readReport(t, file).status(c.check); got != "FAIL" {
				t.Fatalf("%s: %s\n%s", c.check, got, r.stdout)
			}
		})
	}
}

// idOf returns the id member of a flat request object as JSON text (the
// defective servers read no more than that).
func idOf(body []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m["id"] == nil {
		return "null"
	}
	return string(m["id"])
}

// TestConformServerDies: a stdio server that exits after a few messages
// fails the checks it was answering, and the report says so.
func TestConformServerDies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.json")
	r := run(t, "", "--exec", "sh -c 'i=0; while [ $i -lt 4 ] && IFS= read -r l; do printf \"%s\\n\" \"$l\"; i=$((i+1)); done | "+bin+" serve --listen stdio:'", "conform", "--json", file, "--only", "^(id|connection)/")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, file)
	if rep.status("connection/kept") != "FAIL" || !strings.Contains(r.stdout, "the server process exited") {
		t.Fatalf("the report does not say the server died:\n%s", r.stdout)
	}
}

func TestConformUsageAndUnreachable(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"conform", urls["tcp"], "--only", "("}, 2, "--only"},
		{[]string{"conform", urls["tcp"], "--params", "[1]"}, 2, "--params without --method"},
		{[]string{"conform", urls["tcp"], "--method", "sum", "--params", "1"}, 2, "JSON array or object"},
		{[]string{"conform", "http://192.0.2.1:1/", "--hostile"}, 2, "not a loopback address"},
		{[]string{"conform", "tcp://127.0.0.1:1"}, 3, "connection refused"},
	} {
		r := run(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("jrpc %v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
	}
}

// TestConformMethod checks a named method's results.
func TestConformMethod(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.json")
	r := run(t, "", "conform", urls["tcp"], "--method", "subtract", "--params", `{"minuend":42,"subtrahend":23}`, "--only", "^method/", "--json", file)
	expect(t, r, 0, "")
	rep := readReport(t, file)
	for _, name := range []string{"method/subtract/by-name/result", "method/subtract/by-name/ids", "method/subtract/by-name/notification", "method/subtract/by-name/batch"} {
		if got := rep.status(name); got != "PASS" {
			t.Errorf("%s: %s", name, got)
		}
	}
	if len(rep.Checks) != 4 {
		t.Errorf("%d checks, want the 4 of the method", len(rep.Checks))
	}
}

// TestConformNATS checks jrpc serve over NATS request/reply: each message
// is a request whose reply (empty for a notification) is the answer.
func TestConformNATS(t *testing.T) {
	_, nsURL := startNATSServer(t)
	url := nsURL + "/conform.rpc"
	startServe(t, "--listen", url)
	file := filepath.Join(t.TempDir(), "r.json")
	r := run(t, "", "conform", url, "--json", file, "--skip", "^hostile/")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, file)
	for _, want := range []string{"id/int-2^64+1", "notification/no-params", "batch/all-notifications-silent", "connection/kept"} {
		if got := rep.status(want); got != "PASS" {
			t.Errorf("%s: %s", want, got)
		}
	}
}

// TestConformDocSample runs the `$ jrpc conform` command of docs/conform.md
// against jrpc serve over HTTP: each line the document shows is printed,
// the count line included.
func TestConformDocSample(t *testing.T) {
	space := regexp.MustCompile(`\s+`)
	rewrite := strings.NewReplacer("http://127.0.0.1:8080/", urls["http"])
	ran := 0
	for _, c := range docCommands(t, "../../docs/conform.md") {
		if !strings.HasPrefix(c.line, "jrpc conform http://127.0.0.1:8080/") {
			continue
		}
		ran++
		args := strings.Fields(rewrite.Replace(c.line))[1:]
		r := run(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", c.where, r.code, r.stdout, r.stderr)
		}
		got := space.ReplaceAllString(r.stdout, " ")
		counts := 0
		for _, s := range c.shown {
			if strings.TrimSpace(s) == "…" {
				continue
			}
			if strings.Contains(s, " checks: ") {
				counts++
			}
			if w := space.ReplaceAllString(rewrite.Replace(strings.TrimSpace(s)), " "); !strings.Contains(got, w) {
				t.Errorf("%s shows %q, but it printed:\n%s", c.where, w, r.stdout)
			}
		}
		if counts != 1 {
			t.Errorf("%s shows %d count lines, want 1", c.where, counts)
		}
	}
	if ran == 0 {
		t.Fatal("no `$ jrpc conform http://127.0.0.1:8080/` in docs/conform.md")
	}
}

// TestConformReplayServe replays the fixtures of testdata/replay against
// jrpc serve on every transport: results compared by value (-19.0 is
// -19), error messages aside, a batch, and a speconly fixture checked
// against the result schema of the server's rpc.discover.
func TestConformReplayServe(t *testing.T) {
	want := []string{"replay/subtract/by-name", "replay/subtract/by-position", "replay/sum/batch", "replay/sum/not-numbers"}
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "r.json")
			r := run(t, "", with(tgt, "conform", "--replay", "testdata/replay", "--json", file)...)
			var passed []string
			for _, c := range readReport(t, file).Checks {
				if c.Status == "PASS" {
					passed = append(passed, c.Name)
				}
			}
			if r.code != 0 || strings.Join(passed, " ") != strings.Join(want, " ") {
				t.Fatalf("exit %d, passed %v; want exit 0 and %v\n%s%s", r.code, passed, want, r.stdout, r.stderr)
			}
		})
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--replay", "testdata/no-such-dir"}, "no such file"},
		{[]string{"--schema", "openrpc.json"}, "--schema without --replay"},
		{[]string{"--replay", "testdata/replay", "--hostile"}, "--replay runs the fixtures only"},
	} {
		r := run(t, "", append([]string{"conform", urls["tcp"]}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("jrpc conform %v: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.stderr, c.msg)
		}
	}
	for _, u := range []string{"tcp://127.0.0.1:1", "http://127.0.0.1:1/"} { // nothing listens: exit 3
		if r := run(t, "", "conform", u, "--replay", "testdata/replay"); r.code != 3 || !strings.Contains(r.stderr, "connection refused") {
			t.Errorf("jrpc conform %s --replay: exit %d, stderr %q; want exit 3", u, r.code, r.stderr)
		}
	}
}
