package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docCommand is a `$ jrpc …` line of a document's code block and the
// output shown under it.
type docCommand struct {
	where string // file:line
	line  string
	shown []string
}

// docCommands extracts the `$ jrpc …` and `$ go run ./cmd/jrpc …` commands
// (and `$ printf … | jrpc …`, input piped in) of the code blocks of a
// markdown file, each with the lines shown under it.
func docCommands(t *testing.T, path string) []docCommand {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []docCommand
	in, cur := false, -1
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			in, cur = !in, -1
		case !in:
		case strings.HasPrefix(l, "$ jrpc ") || strings.HasPrefix(l, "$ go run ./cmd/jrpc ") || strings.HasPrefix(l, "$ printf ") && strings.Contains(l, "| jrpc "):
			cmds = append(cmds, docCommand{where: filepath.Base(path) + ":" + strconv.Itoa(n), line: strings.TrimPrefix(l, "$ ")})
			cur = len(cmds) - 1
		case strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "jrpc>"):
			cur = -1 // another program's command, or a REPL session
		case cur >= 0 && strings.TrimSpace(l) != "":
			cmds[cur].shown = append(cmds[cur].shown, l)
		}
	}
	return cmds
}

// notRunHere are the documented commands this test cannot run as they are:
// servers and interactive sessions (other tests drive those), and commands
// that need something outside (geth, /etc).
var notRunHere = regexp.MustCompile(`jrpc serve|jrpc explore|jrpc repl|jrpc completion|jrpc conform|jrpc chaos|--reconnect|:8546|jrpc bridge|jrpc record|jrpc replay|jrpc mock|jrpc gen`)

// TestDocCommands runs every `$ jrpc …` command of README.md and
// docs/*.md, as written, against a live `jrpc serve` on the documented
// addresses (rewritten to free ports), and checks the output shown under it
// (each shown line, white space aside, appears in what it printed). `go run
// ./cmd/jrpc` runs the built binary; bench's -t 10s runs 1s (issue 28).
func TestDocCommands(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "rpc.sock")
	u := startServeN(t, 4, "-l", "http://127.0.0.1:0/", "-l", "tcp://127.0.0.1:0", "-l", "ws://127.0.0.1:0/", "-l", "unix://"+sock)
	mcp := startServeN(t, 1, "--mcp", "-l", "http://127.0.0.1:0/mcp")["http"] // docs/streamable-http-mcp.md's
	binDir := filepath.Join(dir, "bin")
	os.MkdirAll(binDir, 0o755)
	if err := os.Symlink(bin, filepath.Join(binDir, "jrpc")); err != nil {
		t.Fatal(err)
	}
	rewrite := strings.NewReplacer(
		"http://127.0.0.1:8080/mcp", mcp, // before its prefix: the first match wins
		"http://127.0.0.1:8080/", u["http"],
		"tcp://127.0.0.1:9090", u["tcp"],
		"ws://127.0.0.1:8081/", u["ws"],
		"unix:///tmp/rpc.sock", u["unix"],
		"go run ./cmd/jrpc ", "jrpc ",
		"-t 10s", "-t 1s",
	)
	space := regexp.MustCompile(`\s+`)
	ran := 0
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, doc := range append([]string{"../../README.md"}, docs...) {
		for _, c := range docCommands(t, doc) {
			if notRunHere.MatchString(c.line) {
				continue
			}
			ran++
			t.Run(c.where, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, "sh", "-c", rewrite.Replace(c.line))
				cmd.Dir = dir
				cmd.Env = append(filterEnv(os.Environ(), "PATH", "NO_COLOR", "JRPC_URL"), "PATH="+binDir+":"+os.Getenv("PATH"), "NO_COLOR=1")
				out, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				want := 0
				switch {
				case strings.Contains(c.line, "--check") && strings.Contains(c.line, "=x"):
					want = exitUsage // shown to fail: params that do not fit
				case strings.Contains(c.line, "--idle-timeout"):
					want = exitTransport // shown to stop: no more events (issue 39: it was refused, exit 1, and passed)
				}
				if code != want {
					t.Fatalf("%s\n$ %s\nexit %d:\n%s", c.where, c.line, code, out)
				}
				got := space.ReplaceAllString(string(out), " ")
				for _, s := range c.shown {
					if w := space.ReplaceAllString(rewrite.Replace(strings.TrimSpace(s)), " "); !strings.Contains(got, w) {
						t.Fatalf("%s\n$ %s\nshows %q, but it printed:\n%s", c.where, c.line, w, out)
					}
				}
			})
		}
	}
	if ran < 10 {
		t.Fatalf("only %d commands found in the documents", ran)
	}
}
