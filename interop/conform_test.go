package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creachadair/jrpc2/channel"
	"github.com/ethereum/go-ethereum/rpc"
	sgjsonrpc2 "github.com/sourcegraph/jsonrpc2"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/conformance"
)

// buildDefective builds cmd/defective (servers with one deliberate defect
// each) once per test run.
var buildDefective = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "defective")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/defective").CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: out}
	}
	return bin, nil
})

// startListening runs argv until the test ends and returns the URL it
// prints on stderr as "listening on URL".
func startListening(t *testing.T, argv ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	ownProcessGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	var said strings.Builder
	go func() {
		defer close(found)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				io.Copy(io.Discard, stderr)
				return
			}
			said.WriteString(sc.Text() + "\n")
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("%v exited: %s", argv, said.String())
		}
		return u
	case <-time.After(20 * time.Second):
		t.Fatalf("%v printed no address", argv)
		return ""
	}
}

// conformReport is what jrpc conform --json writes.
type conformReport struct {
	Target string `json:"target"`
	Checks []struct {
		Name, Level, Status, Spec, Detail string
	} `json:"checks"`
}

func (r conformReport) failedMUST() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == "FAIL" && c.Level == "MUST" {
			out = append(out, c.Name)
		}
	}
	return out
}

// runConform runs jrpc conform with args and returns its exit code and
// report.
func runConform(t *testing.T, args ...string) (int, conformReport, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, jrpcBinary(t), append(args, "--json", file)...)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep conformReport
	if b, err := os.ReadFile(file); err == nil {
		json.Unmarshal(b, &rep)
	}
	return code, rep, string(out)
}

// defects are the defects of cmd/defective and the check that must name
// each ("" for none: the server is correct).
var defects = map[string]string{
	"none":                            "",
	"answers-notifications":           "notification/no-params",
	"string-id-as-number":             "id/string-numeric",
	"parse-error-for-invalid-request": "request/scalar-number",
	"empty-batch-answered-with-array": "batch/empty",
	"empty-array-for-notifications":   "batch/all-notifications",
	"big-id-precision":                "id/int-2^53+1",
	"accepts-jsonrpc-1.0":             "request/jsonrpc-1.0",
	"result-and-error":                "response/result-xor-error",
}

// TestConformCatchesDefects runs jrpc conform against a server with one
// deliberate defect, over HTTP, TCP and stdio: each is caught (exit 1) and
// named (its check failed); without a defect, every MUST check passes.
func TestConformCatchesDefects(t *testing.T) {
	bin, err := buildDefective()
	if err != nil {
		t.Fatal(err)
	}
	jrpcBinary(t)
	for _, transport := range []string{"http", "tcp", "stdio"} {
		for defect, check := range defects {
			t.Run(transport+"/"+defect, func(t *testing.T) {
				args := []string{"--exec", bin + " -defect " + defect, "conform"}
				if transport != "stdio" {
					args = []string{"conform", startListening(t, bin, "-defect", defect, "-listen", transport+"://127.0.0.1:0/")}
				}
				code, rep, out := runConform(t, args...)
				failed := rep.failedMUST()
				switch {
				case check == "" && (code != 0 || len(failed) > 0):
					t.Fatalf("exit %d, failed MUST checks %v\n%s", code, failed, out)
				case check != "" && (code != 1 || !slices.Contains(failed, check)):
					t.Fatalf("exit %d, failed MUST checks %v; want exit 1 and %s\n%s", code, failed, check, out)
				}
				t.Logf("%s: %d failed MUST checks: %v", defect, len(failed), failed)
			})
		}
	}
}

// conformPeers are other people's servers, each with the MUST checks it
// fails (each verified against the specification's text: see
// docs/conform.md).
var conformPeers = []struct {
	name  string
	start func(t *testing.T) conformance.Target
	fails []string
	maybe []string // fails in some runs only: the peer's answer varies
}{
	{"ours tcp", func(t *testing.T) conformance.Target {
		_, l := startServer(t, "tcp://127.0.0.1:0", nil)
		return urlTarget(t, l.URL, jsonrpc.FramingLine)
	}, nil, nil},
	{"jrpc2 tcp (line)", func(t *testing.T) conformance.Target {
		return urlTarget(t, "tcp://"+startJrpc2Server(t, channel.Line, make(chan string, 1024)), jsonrpc.FramingLine)
	}, jrpc2LineFails, jrpc2LineMaybe},
	{"jrpc2 tcp (lsp)", func(t *testing.T) conformance.Target {
		return urlTarget(t, "tcp://"+startJrpc2Server(t, channel.LSP, make(chan string, 1024)), jsonrpc.FramingHeader)
	}, jrpc2Fails, jrpc2Maybe},
	{"sourcegraph/jsonrpc2 tcp", startSourcegraph, []string{"id/int-negative", "id/int-2^63", "id/int-2^64+1", "id/int-negative-2^63-1", "id/fraction", "id/fraction-long", "id/exponent", "id/exponent-negative", "id/null", "id/invalid-object", "id/invalid-array", "id/invalid-bool", "parse/single-quotes", "parse/trailing-comma", "parse/unquoted-key", "parse/nan", "parse/hex-number", "parse/leading-zero", "parse/bare-word", "parse/bad-escape", "request/scalar-number", "request/scalar-string", "request/scalar-null", "request/scalar-true", "request/empty-object", "request/no-id-invalid", "request/keys-case", "request/no-jsonrpc", "request/jsonrpc-1.0", "request/jsonrpc-2", "request/jsonrpc-number", "request/jsonrpc-space", "request/jsonrpc-null", "request/no-method", "request/method-number", "request/method-null", "request/method-array", "request/method-object", "request/params-string", "request/params-number", "request/params-true", "request/params-null", "framing/text-after-message", "framing/not-json-then-valid", "batch/calls-answered", "batch/notification-not-answered", "batch/response-ids", "batch/invalid-element-code", "batch/empty", "batch/invalid-json", "batch/all-notifications", "batch/duplicate-ids", "spec/invalid-json", "spec/invalid-request-object", "spec/batch-invalid-json", "spec/empty-array", "spec/batch-all-notifications", "connection/kept"}, nil},
	{"go-ethereum http", func(t *testing.T) conformance.Target {
		hs := httptest.NewServer(gethServer(t))
		t.Cleanup(hs.Close)
		return urlTarget(t, hs.URL, 0)
	}, gethFails, nil},
	{"go-ethereum ws", func(t *testing.T) conformance.Target {
		hs := httptest.NewServer(gethServer(t).WebsocketHandler([]string{"*"}))
		t.Cleanup(hs.Close)
		return urlTarget(t, "ws"+strings.TrimPrefix(hs.URL, "http"), 0)
	}, gethFails, nil},
	{"npm json-rpc-2.0 http", startNPMServer, []string{"id/int-2^53+1", "id/int-2^63", "id/int-2^64+1", "id/int-negative-2^63-1", "id/fraction-long", "id/invalid-object", "id/invalid-array", "id/invalid-bool", "request/scalar-null", "request/no-id-invalid", "request/method-number", "request/method-null", "request/method-array", "request/method-object", "request/params-string", "request/params-number", "request/params-true", "request/params-null", "spec/invalid-request-object"}, nil},
}

// jrpc2 answers -32700 for valid JSON that is not a Request, and takes a
// request with a null id for a notification. Its answer to the spec's
// invalid Request example varies from run to run (-32600 "parameters must be
// array or object" or -32700 "invalid method name": it checks the members in
// map order).
// Over line framing, jrpc2 answers a line that is not JSON -32700 and, in
// some runs only, drops the call on the next line (seen both ways in CI).
var (
	jrpc2Fails     = []string{"id/null", "request/scalar-number", "request/scalar-string", "request/scalar-true", "request/no-id-invalid", "batch/invalid-element-code"}
	jrpc2LineFails = []string{"id/null", "request/scalar-number", "request/scalar-string", "request/scalar-true", "request/no-id-invalid", "batch/invalid-element-code"}
	jrpc2Maybe     = []string{"spec/invalid-request-object"}
	jrpc2LineMaybe = []string{"spec/invalid-request-object", "framing/not-json-then-valid"}
)

// go-ethereum takes a boolean id for a valid one, and looks a method up
// before it reads params: params that are not a structured value, sent
// to a method it has not, get -32601 (§4.2 makes the Request invalid,
// and §5.1 answers that -32600).
var gethFails = []string{"id/invalid-bool", "request/params-string", "request/params-number", "request/params-true", "request/params-null"}

func urlTarget(t *testing.T, u string, f jsonrpc.Framing) conformance.Target {
	t.Helper()
	target, err := conformance.URL(u, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// TestConformPeers runs the conformance suite against other people's
// servers: each fails exactly the MUST checks listed (the table of
// docs/conform.md).
func TestConformPeers(t *testing.T) {
	for _, p := range conformPeers {
		t.Run(p.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rep, err := (&conformance.Suite{Timeout: 2 * time.Second}).Check(ctx, p.start(t))
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, c := range rep.Failed(conformance.MUST) {
				failed = append(failed, c.Name)
				t.Logf("FAIL %s (%s): %s", c.Name, c.Spec, c.Detail)
			}
			t.Logf("%s: %d of %d checks failed at MUST: %v", p.name, len(failed), len(rep.Checks), failed)
			failed = slices.DeleteFunc(failed, func(n string) bool { return slices.Contains(p.maybe, n) })
			if !slices.Equal(failed, p.fails) {
				t.Errorf("failed MUST checks %v, want %v (and maybe %v)", failed, p.fails, p.maybe)
			}
		})
	}
}

// gethServer is a go-ethereum RPC server with one service.
func gethServer(t *testing.T) *rpc.Server {
	srv := rpc.NewServer()
	if err := srv.RegisterName("test", new(gethConformService)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

type gethConformService struct{}

func (gethConformService) Echo(s string) string { return s }

// startSourcegraph serves sourcegraph/jsonrpc2 on loopback TCP (its plain
// codec: one JSON value after another), answering every call -32601.
func startSourcegraph(t *testing.T) conformance.Target {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); l.Close(); wg.Wait() })
	h := sgjsonrpc2.HandlerWithError(func(context.Context, *sgjsonrpc2.Conn, *sgjsonrpc2.Request) (any, error) {
		return nil, &sgjsonrpc2.Error{Code: sgjsonrpc2.CodeMethodNotFound, Message: "method not found"}
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conn := sgjsonrpc2.NewConn(ctx, sgjsonrpc2.NewPlainObjectStream(c), h, sgjsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
			wg.Go(func() {
				select {
				case <-conn.DisconnectNotify():
				case <-ctx.Done():
					conn.Close()
				}
			})
		}
	})
	return urlTarget(t, "tcp://"+l.Addr().String(), jsonrpc.FramingLine)
}

// startNPMServer runs node/conform_server.js (the npm package json-rpc-2.0
// behind node's http server).
func startNPMServer(t *testing.T) conformance.Target {
	requireNode(t, "json-rpc-2.0")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "node", "conform_server.js")
	cmd.Dir = nodeDir
	ownProcessGroup(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var addr struct {
		URL string `json:"url"`
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &addr) != nil {
		t.Fatalf("conform_server.js printed %q (%v)", line, err)
	}
	return urlTarget(t, addr.URL, 0)
}
