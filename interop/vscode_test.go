package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// buildStdioServer builds cmd/stdioserver (with -race when the tests run
// with it) and returns the path of the program.
func buildStdioServer(t *testing.T, ctx context.Context) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "stdioserver")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/stdioserver")...)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/stdioserver: %v\n%s", err, out)
	}
	return bin
}

// TestVSCodeJSONRPCOverStdio drives our stdio server (cmd/stdioserver, with
// Content-Length framing) from vscode-jsonrpc, the library under VS Code's
// language clients: node/stdio_client.js spawns the server and talks to it
// over its pipes, including the server calling the client back.
func TestVSCodeJSONRPCOverStdio(t *testing.T) {
	requireNode(t, "vscode-jsonrpc")
	ctx := testContext(t)
	bin := buildStdioServer(t, ctx)
	out := runNode(t, ctx, "stdio_client.js", bin)

	var got struct {
		SubtractPositional outcome         `json:"subtractPositional"`
		SubtractNamed      outcome         `json:"subtractNamed"`
		Sum                outcome         `json:"sum"`
		GetData            outcome         `json:"getData"`
		Echo               outcome         `json:"echo"`
		Error              outcome         `json:"error"`
		UnknownMethod      outcome         `json:"unknownMethod"`
		BadParams          outcome         `json:"badParams"`
		Recorded           json.RawMessage `json:"recorded"`
		AskAdd             outcome         `json:"askAdd"`
		AskFail            outcome         `json:"askFail"`
		AskMissing         outcome         `json:"askMissing"`
		Tell               outcome         `json:"tell"`
		Note               json.RawMessage `json:"note"`
		Callbacks          json.RawMessage `json:"callbacks"`
		BigLength          json.RawMessage `json:"bigLength"`
		BigEcho            bool            `json:"bigEcho"`
		Concurrent         []int64         `json:"concurrent"`
		Cancelled          outcome         `json:"cancelled"`
		AfterCancel        outcome         `json:"afterCancel"`
		InFlightAtEOF      outcome         `json:"inFlightAtEOF"`
		Exit               json.RawMessage `json:"exit"`
	}
	decodeOutput(t, out, &got)

	got.SubtractPositional.wantResult(t, "subtract 42, 23", `19`)
	got.SubtractNamed.wantResult(t, "subtract by name", `19`)
	got.Sum.wantResult(t, "sum 1, 2, 3.5", `6.5`)
	got.GetData.wantResult(t, "get_data", `["hello",5]`)
	got.Echo.wantResult(t, "echo", `{"s":"h\u00e9llo \u2028 😀 \"q\" \\","n":[1,2.5,-3e-7],"o":{"a":[true,false]}}`)
	got.Error.wantError(t, "error", -32042, "custom failure", `{"why":"test","n":7}`)
	got.UnknownMethod.wantError(t, "unknown method", -32601, "", "")
	got.BadParams.wantError(t, "bad params", -32602, "", "")

	if !jsonEqual(t, got.Recorded, []byte(`{"from":"vscode-jsonrpc"}`)) {
		t.Errorf("the record notification came back as %s", got.Recorded)
	}

	// Server-to-client requests, answered by vscode-jsonrpc.
	got.AskAdd.wantResult(t, "ask_peer client/add", `9`)
	got.AskFail.wantError(t, "ask_peer client/fail", -32050, "the client refuses", `{"who":"vscode-jsonrpc"}`)
	got.AskMissing.wantError(t, "ask_peer client/missing", -32601, "", "")
	got.Tell.wantResult(t, "tell_peer", `true`)
	if !jsonEqual(t, got.Note, []byte(`{"n":1}`)) {
		t.Errorf("tell_peer's notification arrived as %s", got.Note)
	}
	if !jsonEqual(t, got.Callbacks, []byte(`[{"method":"client/add","params":[2,3,4]},{"method":"client/fail"}]`)) {
		t.Errorf("the client saw the callbacks %s", got.Callbacks)
	}

	if string(got.BigLength) != "1048576" {
		t.Errorf("big 1 MiB: got %s", got.BigLength)
	}
	if !got.BigEcho {
		t.Error("echo of 768 KiB of multi-byte UTF-8 did not come back intact")
	}

	if len(got.Concurrent) != 16 {
		t.Fatalf("concurrent: %d results, want 16", len(got.Concurrent))
	}
	for i, ms := range got.Concurrent {
		if want := int64(5 * (16 - i)); ms != want {
			t.Errorf("concurrent sleep %d answered %d, want %d", i, ms, want)
		}
	}

	// vscode-jsonrpc's "$/cancelRequest" is a notification our server does
	// not know: it is dropped, the request is answered, the connection goes on.
	got.Cancelled.wantResult(t, "cancelled sleep", `100`)
	got.AfterCancel.wantResult(t, "sum after a cancellation", `2`)

	// End of standard input with a request in flight: answered, then exit 0.
	got.InFlightAtEOF.wantResult(t, "sleep in flight at end of input", `300`)
	if got.Exit == nil || !jsonEqual(t, got.Exit, []byte(`{"code":0,"signal":null}`)) {
		t.Errorf("the stdio server exited with %s, want code 0", got.Exit)
	}
}

// TestVSCodeJSONRPCCancelRequest: vscode-jsonrpc cancels a call with
// $/cancelRequest; our server with ConventionLSP (cmd/stdioserver
// -convention lsp) stops the handler and answers -32800, which
// vscode-jsonrpc rejects the call with; the connection goes on.
func TestVSCodeJSONRPCCancelRequest(t *testing.T) {
	requireNode(t, "vscode-jsonrpc")
	ctx := testContext(t)
	bin := buildStdioServer(t, ctx)
	out := runNode(t, ctx, "lsp_cancel_client.js", bin, "-convention", "lsp")
	var got struct {
		Cancelled         outcome         `json:"cancelled"`
		CancelledWithinMs bool            `json:"cancelledWithinMs"`
		AfterCancel       outcome         `json:"afterCancel"`
		Exit              json.RawMessage `json:"exit"`
	}
	decodeOutput(t, out, &got)
	got.Cancelled.wantError(t, "cancelled sleep", -32800, "request cancelled", "")
	if !got.CancelledWithinMs {
		t.Error("the cancelled 60 s sleep was not answered at once")
	}
	got.AfterCancel.wantResult(t, "sum after the cancel", `2`)
	if !jsonEqual(t, got.Exit, []byte(`{"code":0,"signal":null}`)) {
		t.Errorf("the stdio server exited with %s, want code 0", got.Exit)
	}
}
