package interop

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// TestOurStdioClientAgainstVSCodeJSONRPCServer spawns a vscode-jsonrpc
// server (node/stdio_server.js) with jsonrpc.DialCommand and talks to it with
// Content-Length framing, serving its calls back to us.
func TestOurStdioClientAgainstVSCodeJSONRPCServer(t *testing.T) {
	requireNode(t, "vscode-jsonrpc")
	ctx := testContext(t)
	script, err := filepath.Abs(filepath.Join(nodeDir, "stdio_server.js"))
	if err != nil {
		t.Fatal(err)
	}

	recorded := make(chan json.RawMessage, 4)
	mux := jsonrpc.NewMux()
	type addParams struct {
		Xs []int `json:"xs"`
	}
	jsonrpc.Register(mux, "client.add", func(_ context.Context, p addParams) (int, error) {
		total := 0
		for _, x := range p.Xs {
			total += x
		}
		return total, nil
	})
	jsonrpc.Register(mux, "recorded", func(_ context.Context, p json.RawMessage) (any, error) {
		recorded <- append(json.RawMessage(nil), p...)
		return nil, nil
	})

	conn, err := jsonrpc.DialCommand(ctx, "node", []string{script},
		jsonrpc.WithFraming(jsonrpc.FramingHeader),
		jsonrpc.WithHandler(mux), jsonrpc.WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			conn.Close()
		}
	}()

	var got float64
	if err := conn.Call(ctx, "subtract", []int{42, 23}, &got); err != nil || got != 19 {
		t.Errorf("subtract [42,23] = %v, %v", got, err)
	}
	if err := conn.Call(ctx, "subtract", map[string]int{"minuend": 42, "subtrahend": 23}, &got); err != nil || got != 19 {
		t.Errorf("subtract by name = %v, %v", got, err)
	}

	err = conn.Call(ctx, "fail", nil, nil)
	var re *jsonrpc.Error
	if !errors.As(err, &re) || re.Code != -32042 || re.Message != "vscode failure" || !jsonEqual(t, re.Data, []byte(`{"why":"asked"}`)) {
		t.Errorf("fail: %#v, want -32042 vscode failure", err)
	}
	if err := conn.Call(ctx, "no_such_method", nil, nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Errorf("unknown method: %v, want -32601", err)
	}

	if err := conn.Notify(ctx, "record", map[string]string{"from": "seedhq"}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-recorded:
		if !jsonEqual(t, p, []byte(`{"from":"seedhq"}`)) {
			t.Errorf("recorded %s", p)
		}
	case <-ctx.Done():
		t.Fatal("the server's notification did not come back")
	}

	// The node server calls us back while answering our call.
	var sum int
	if err := conn.Call(ctx, "askClient", map[string]any{"method": "client.add", "params": map[string][]int{"xs": {2, 3, 4}}}, &sum); err != nil || sum != 9 {
		t.Errorf("askClient client.add = %v, %v; want 9", sum, err)
	}
	err = conn.Call(ctx, "askClient", map[string]any{"method": "client.missing"}, nil)
	if !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("askClient client.missing: %v, want -32601 passed through", err)
	}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var ms int
			if err := conn.Call(ctx, "sleep", map[string]int{"ms": 5 * (16 - i)}, &ms); err != nil || ms != 5*(16-i) {
				t.Errorf("sleep %d = %d, %v", 5*(16-i), ms, err)
			}
		})
	}
	wg.Wait()

	// Close ends the server's input; it exits and is reaped.
	closed = true
	start := time.Now()
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v: the server did not exit on end of input", d)
	}
	if err := conn.Err(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("after Close: Err = %v", err)
	}
}
