package interop

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// TestCallIterAgainstVSCodeJSONRPCServer reads, with CallIter over
// Content-Length framing, a result that the vscode-jsonrpc server
// (node/stdio_server.js, a peer that does not stream: it writes the
// message whole, its length first) returns: 20,000 elements, about 4.4 MB,
// 70 times the client's WithMaxMessageSize. The body is lent to the loop
// as it arrives, so each element is bounded, not the whole; the
// connection serves the next call after it. Call of the same result is
// refused as over the limit.
func TestCallIterAgainstVSCodeJSONRPCServer(t *testing.T) {
	requireNode(t, "vscode-jsonrpc")
	ctx := testContext(t)
	script, err := filepath.Abs(filepath.Join(nodeDir, "stdio_server.js"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := jsonrpc.DialCommand(ctx, "node", []string{script},
		jsonrpc.WithFraming(jsonrpc.FramingHeader), jsonrpc.WithMaxMessageSize(64<<10), jsonrpc.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 20000
	got := 0
	for v, err := range jsonrpc.CallIter[Item](ctx, conn, "items", ItemsParams{N: n}) {
		if err != nil {
			t.Fatalf("after %d elements: %v", got, err)
		}
		if v.I != got || v.S != strings.Repeat(string(rune('a'+got%26)), 200) {
			t.Fatalf("element %d: %+v", got, v)
		}
		got++
	}
	if got != n {
		t.Fatalf("%d elements, want %d", got, n)
	}
	var diff float64
	if err := conn.Call(ctx, "subtract", []int{42, 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("the call after: %v %v", diff, err)
	}
	var whole []Item
	if err := conn.Call(ctx, "items", ItemsParams{N: n}, &whole); !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("Call of the same result: %v, want ErrMessageTooLarge", err)
	}
}
