package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds the programs the tests build once per run (buildJRPC); it is
// removed when the tests end.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "interop-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildJRPC builds the jrpc CLI (../cmd/jrpc, a module of the workspace)
// once per test run and returns its path.
var buildJRPC = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "jrpc")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/jrpc")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: out}
	}
	return bin, nil
})

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build ./cmd/jrpc: " + e.err.Error() + "\n" + string(e.out)
}

// jrpcBinary returns the path of the jrpc CLI, built for this test run.
func jrpcBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildJRPC()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startJRPCServe runs `jrpc serve args...` with one http:// listener
// (port 0) until the test ends, and returns the URL it prints on stderr.
func startJRPCServe(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, jrpcBinary(t), append([]string{"serve"}, args...)...)
	cmd.WaitDelay = 5 * time.Second
	ownProcessGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	var log syncBuffer
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			log.Write(append(sc.Bytes(), '\n'))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-found:
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("jrpc serve stderr:\n%s", log.String())
			}
		})
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("jrpc serve printed no listening URL:\n%s", log.String())
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return ""
}

// tsSDKRun is what interop/node/mcp_sdk_client.mjs prints.
type tsSDKRun struct {
	Initialize struct {
		ProtocolVersion  string          `json:"protocolVersion"`
		RequestedVersion string          `json:"requestedVersion"`
		ServerVersion    json.RawMessage `json:"serverVersion"`
		Capabilities     json.RawMessage `json:"capabilities"`
		Instructions     string          `json:"instructions"`
	} `json:"initialize"`
	Ping  outcome `json:"ping"`
	Tools []struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Calls    map[string]outcome `json:"calls"`
	Progress struct {
		Result    outcome         `json:"result"`
		SentToken json.RawMessage `json:"sentToken"`
		Reports   []struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		} `json:"reports"`
		Raw []struct {
			ProgressToken json.RawMessage `json:"progressToken"`
			Progress      float64         `json:"progress"`
			Total         float64         `json:"total"`
			Message       string          `json:"message"`
		} `json:"raw"`
	} `json:"progress"`
	SetLevel outcome `json:"setLevel"`
	Cancel   struct {
		Outcome         outcome           `json:"outcome"`
		RejectedAfterMS int64             `json:"rejectedAfterMs"`
		SentCancel      []json.RawMessage `json:"sentCancel"`
		Logged          bool              `json:"logged"`
		Logs            []json.RawMessage `json:"logs"`
		PingAfter       outcome           `json:"pingAfter"`
		AddAfter        outcome           `json:"addAfter"`
	} `json:"cancel"`
	UnknownTool  outcome `json:"unknownTool"`
	BadArguments outcome `json:"badArguments"`
	HTTP         *struct {
		SessionID            string  `json:"sessionId"`
		Terminate            outcome `json:"terminate"`
		AfterTerminateStatus int     `json:"afterTerminateStatus"`
		Exchanges            []struct {
			Method          string `json:"method"`
			Session         string `json:"session"`
			ProtocolVersion string `json:"protocolVersion"`
			LastEventID     string `json:"lastEventId"`
			Status          int    `json:"status"`
			ContentType     string `json:"contentType"`
		} `json:"exchanges"`
		GetStream []json.RawMessage `json:"getStream"`
	} `json:"http"`
}

// The official TypeScript MCP SDK (@modelcontextprotocol/sdk) drives
// `jrpc serve --mcp` over stdio (StdioClientTransport spawning it) and over
// Streamable HTTP (StreamableHTTPClientTransport): initialize (the
// revision and the capabilities), ping, tools/list with schemas, every
// demo tool with its exact result, progress (strictly increasing, on the
// token the SDK sent, its JSON type kept), a call aborted with an
// AbortSignal (the SDK rejects at once, the server stops the tool and logs
// it as notifications/message, the session goes on), an unknown tool
// (-32602 naming it) and bad arguments (isError). Over HTTP also: the
// session id on every request after initialize, the log message arriving
// on the GET stream, and terminateSession (DELETE; the id is 404 after).
func TestMCPTypeScriptSDKClient(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/sdk")
	bin := jrpcBinary(t) // before the clock starts: the build may be slow
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	t.Run("stdio", func(t *testing.T) {
		var run tsSDKRun
		decodeOutput(t, runNode(t, ctx, "mcp_sdk_client.mjs", "stdio", bin, "serve", "--mcp", "--listen", "stdio:"), &run)
		checkTSSDKRun(t, &run)
		if run.HTTP != nil {
			t.Errorf("stdio run recorded HTTP exchanges")
		}
	})
	t.Run("streamable-http", func(t *testing.T) {
		url := startJRPCServe(t, ctx, "--mcp", "--listen", "http://127.0.0.1:0/mcp")
		var run tsSDKRun
		decodeOutput(t, runNode(t, ctx, "mcp_sdk_client.mjs", "http", url), &run)
		checkTSSDKRun(t, &run)
		h := run.HTTP
		if h == nil {
			t.Fatal("no HTTP record")
		}
		if !regexp.MustCompile(`^[\x21-\x7e]{16,}$`).MatchString(h.SessionID) {
			t.Errorf("session id %q: want visible ASCII, at least 16 characters", h.SessionID)
		}
		gets := 0
		for i, ex := range h.Exchanges {
			switch {
			case i == 0:
				if ex.Method != "POST" || ex.Session != "" || ex.Status != 200 {
					t.Errorf("initialize exchange: %+v", ex)
				}
			case ex.Session != h.SessionID || ex.ProtocolVersion != "2025-11-25":
				t.Errorf("exchange %d without the session or the version: %+v", i, ex)
			}
			if ex.Method == "GET" && ex.Status == 200 && strings.HasPrefix(ex.ContentType, "text/event-stream") {
				gets++
			}
			if ex.Method == "DELETE" && ex.Status != 204 && ex.Status != 200 {
				t.Errorf("DELETE: status %d", ex.Status)
			}
		}
		if last := h.Exchanges[len(h.Exchanges)-1]; last.Method != "DELETE" {
			t.Errorf("terminateSession sent no DELETE last: %+v", last)
		}
		if gets == 0 {
			t.Errorf("the SDK opened no GET stream: %+v", h.Exchanges)
		}
		// The cancelled call's stream ended without a response: the SDK
		// resumes it, gets 204 (all of it delivered) and stops. Before,
		// it resumed it once a second for as long as the session lived.
		allGets := 0
		for _, ex := range h.Exchanges {
			if ex.Method == "GET" {
				allGets++
			}
		}
		if allGets > 2 {
			t.Errorf("%d GETs: the SDK keeps reconnecting: %+v", allGets, h.Exchanges)
		}
		if h.Terminate.Error != nil {
			t.Errorf("terminateSession: %+v", h.Terminate.Error)
		}
		if h.AfterTerminateStatus != 404 {
			t.Errorf("a request with the ended session's id: status %d, want 404", h.AfterTerminateStatus)
		}
		onGet := false
		for _, m := range h.GetStream {
			var n struct {
				Method string `json:"method"`
				Params struct {
					Data struct {
						Event string `json:"event"`
						Tool  string `json:"tool"`
					} `json:"data"`
				} `json:"params"`
			}
			if json.Unmarshal(m, &n) == nil && n.Method == "notifications/message" && n.Params.Data.Event == "cancelled" && n.Params.Data.Tool == "sleep" {
				onGet = true
			}
		}
		if !onGet {
			t.Errorf("the log of the cancelled call did not come on the GET stream: %s", h.GetStream)
		}
	})
}

// checkTSSDKRun checks what both transports must show.
func checkTSSDKRun(t *testing.T, run *tsSDKRun) {
	t.Helper()
	in := run.Initialize
	if in.RequestedVersion != "2025-11-25" || in.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol version: asked %q, got %q; want 2025-11-25 both", in.RequestedVersion, in.ProtocolVersion)
	}
	if !jsonEqual(t, in.Capabilities, []byte(`{"tools":{"listChanged":false},"logging":{}}`)) {
		t.Errorf("capabilities %s", in.Capabilities)
	}
	if !jsonEqual(t, in.ServerVersion, []byte(`{"name":"jrpc-demo","title":"jsonrpc demo service","version":"1.0.0"}`)) {
		t.Errorf("serverInfo %s", in.ServerVersion)
	}
	run.Ping.wantResult(t, "ping", `{}`)

	var names []string
	for _, tool := range run.Tools {
		names = append(names, tool.Name)
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(tool.InputSchema, &s) != nil || s.Type != "object" {
			t.Errorf("tool %s: inputSchema %s", tool.Name, tool.InputSchema)
		}
		if tool.Name == "add" && !jsonEqual(t, tool.InputSchema, []byte(`{"type":"object","properties":{"a":{"type":"number","description":"The first number."},"b":{"type":"number","description":"The second number."}},"required":["a","b"],"additionalProperties":false}`)) {
			t.Errorf("add: inputSchema %s", tool.InputSchema)
		}
	}
	if strings.Join(names, ",") != "add,echo,greet,now,sleep,test_trigger_tool_change" {
		t.Errorf("tools %v", names)
	}

	run.Calls["add"].wantResult(t, "add", `{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false}`)
	run.Calls["echo"].wantResult(t, "echo", `{"content":[{"type":"text","text":"héllo, 世界"}],"structuredContent":{"text":"héllo, 世界"},"isError":false}`)
	run.Calls["sleep"].wantResult(t, "sleep", `{"content":[{"type":"text","text":"slept 20 ms"}],"structuredContent":{"slept_ms":20},"isError":false}`)
	var now struct {
		Content           []struct{ Text string } `json:"content"`
		StructuredContent struct {
			Time string `json:"time"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(run.Calls["now"].Result, &now); err != nil || now.IsError || len(now.Content) != 1 || now.Content[0].Text != now.StructuredContent.Time {
		t.Errorf("now: %s (%v)", run.Calls["now"].Result, err)
	} else if tm, err := time.Parse(time.RFC3339Nano, now.StructuredContent.Time); err != nil || time.Since(tm).Abs() > time.Minute {
		t.Errorf("now: time %q (%v)", now.StructuredContent.Time, err)
	}

	p := run.Progress
	p.Result.wantResult(t, "sleep with progress", `{"content":[{"type":"text","text":"slept 300 ms"}],"structuredContent":{"slept_ms":300},"isError":false}`)
	if len(p.SentToken) == 0 || p.SentToken[0] == '"' {
		t.Errorf("the SDK's progressToken %s: want the request id, a number", p.SentToken)
	}
	if len(p.Reports) < 3 || len(p.Raw) != len(p.Reports) {
		t.Errorf("%d progress reports (%d notifications) for a 300 ms sleep, want about 9", len(p.Reports), len(p.Raw))
	}
	for i, r := range p.Raw {
		if !bytes.Equal(r.ProgressToken, p.SentToken) {
			t.Errorf("progress %d: token %s, want %s byte for byte", i, r.ProgressToken, p.SentToken)
		}
	}
	for i, r := range p.Reports {
		if r.Total != 300 || r.Progress <= 0 || r.Progress > 300 || (i > 0 && r.Progress <= p.Reports[i-1].Progress) {
			t.Errorf("progress %d: %+v (previous %+v)", i, r, p.Reports[max(i-1, 0)])
		}
	}

	run.SetLevel.wantResult(t, "logging/setLevel", `{}`)
	c := run.Cancel
	if c.Outcome.Error == nil {
		t.Errorf("the aborted call returned %s", c.Outcome.Result)
	}
	if c.RejectedAfterMS > 5000 {
		t.Errorf("the aborted call was rejected after %d ms, want at once (300 ms)", c.RejectedAfterMS)
	}
	if len(c.SentCancel) != 1 {
		t.Errorf("the SDK sent %d notifications/cancelled", len(c.SentCancel))
	}
	if !c.Logged || len(c.Logs) != 1 {
		t.Errorf("the server did not log the stopped tool (logged %v): %s", c.Logged, c.Logs)
	} else {
		var l struct {
			Level  string `json:"level"`
			Logger string `json:"logger"`
			Data   struct {
				Event   string `json:"event"`
				Tool    string `json:"tool"`
				AfterMS int64  `json:"after_ms"`
			} `json:"data"`
		}
		if err := json.Unmarshal(c.Logs[0], &l); err != nil || l.Level != "notice" || l.Logger != "jrpc-demo" || l.Data.Event != "cancelled" || l.Data.Tool != "sleep" || l.Data.AfterMS < 0 || l.Data.AfterMS > 10000 {
			t.Errorf("log of the stopped tool: %s (%v)", c.Logs[0], err)
		}
	}
	c.PingAfter.wantResult(t, "ping after the cancel", `{}`)
	c.AddAfter.wantResult(t, "add after the cancel", `{"content":[{"type":"text","text":"2"}],"structuredContent":{"sum":2},"isError":false}`)

	run.UnknownTool.wantError(t, "unknown tool", -32602, "", "")
	if e := run.UnknownTool.Error; e != nil && !strings.Contains(e.Message, `Unknown tool: nope`) {
		t.Errorf("unknown tool: message %q does not name it", e.Message)
	}
	var bad struct {
		Content []struct{ Type, Text string } `json:"content"`
		IsError bool                          `json:"isError"`
	}
	if err := json.Unmarshal(run.BadArguments.Result, &bad); err != nil || !bad.IsError || len(bad.Content) != 1 || !strings.Contains(bad.Content[0].Text, "/arguments/a") {
		t.Errorf("bad arguments: %s %+v (%v)", run.BadArguments.Result, run.BadArguments.Error, err)
	}
}
