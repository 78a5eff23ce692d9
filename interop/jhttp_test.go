package interop

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/jhttp"

	"github.com/seedhq/jsonrpc"
)

// TestJrpc2HTTPClientAgainstOurHTTPServer has jrpc2's HTTP channel (one POST
// per message, 204 taken as the answer to a notification) call our HTTP
// server.
func TestJrpc2HTTPClientAgainstOurHTTPServer(t *testing.T) {
	rec := newRecorder()
	_, l := startServer(t, "http://127.0.0.1:0/rpc", rec)
	hc := &http.Client{Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	cli := jrpc2.NewClient(jhttp.NewChannel(l.URL, &jhttp.ChannelOptions{Client: hc}), nil)
	defer cli.Close()
	ctx := testContext(t)

	var got float64
	if err := cli.CallResult(ctx, "subtract", []int{42, 23}, &got); err != nil || got != 19 {
		t.Errorf("subtract [42,23] = %v, %v", got, err)
	}
	if err := cli.CallResult(ctx, "subtract", map[string]int{"minuend": 42, "subtrahend": 23}, &got); err != nil || got != 19 {
		t.Errorf("subtract by name = %v, %v", got, err)
	}

	_, err := cli.Call(ctx, "error", map[string]any{"code": -32042, "message": "custom failure", "data": []int{1, 2}})
	var je *jrpc2.Error
	if !errors.As(err, &je) || je.Code != -32042 || je.Message != "custom failure" || !jsonEqual(t, je.Data, []byte(`[1,2]`)) {
		t.Errorf("error call: %#v, want -32042 custom failure [1,2]", err)
	}
	if _, err := cli.Call(ctx, "no_such_method", nil); jrpc2.ErrorCode(err) != jrpc2.MethodNotFound {
		t.Errorf("unknown method: %v, want -32601", err)
	}

	if err := cli.Notify(ctx, "record", map[string]string{"from": "jhttp"}); err != nil {
		t.Fatal(err)
	}
	if p := rec.next(t); !jsonEqual(t, p, []byte(`{"from":"jhttp"}`)) {
		t.Errorf("recorded %s", p)
	}

	rsps, err := cli.Batch(ctx, []jrpc2.Spec{
		{Method: "sum", Params: []int{1, 2, 3}},
		{Method: "record", Params: []string{"batched"}, Notify: true},
		{Method: "no_such_method"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rsps) != 2 {
		t.Fatalf("batch: %d responses, want 2", len(rsps))
	}
	var sum float64
	if err := rsps[0].UnmarshalResult(&sum); err != nil || sum != 6 {
		t.Errorf("batch sum = %v, %v", sum, err)
	}
	if e := rsps[1].Error(); e == nil || e.Code != jrpc2.MethodNotFound {
		t.Errorf("batch unknown method: %v", e)
	}
	if p := rec.next(t); !jsonEqual(t, p, []byte(`["batched"]`)) {
		t.Errorf("recorded %s", p)
	}

	// A notifications-only batch: jrpc2 expects 204, then goes on.
	rsps, err = cli.Batch(ctx, []jrpc2.Spec{
		{Method: "record", Params: []string{"only"}, Notify: true},
	})
	if err != nil || len(rsps) != 0 {
		t.Errorf("notification-only batch: %d responses, %v", len(rsps), err)
	}
	if p := rec.next(t); !jsonEqual(t, p, []byte(`["only"]`)) {
		t.Errorf("recorded %s", p)
	}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var d float64
			if err := cli.CallResult(ctx, "subtract", []int{i, 1}, &d); err != nil || d != float64(i-1) {
				t.Errorf("subtract [%d,1] = %v, %v", i, d, err)
			}
		})
	}
	wg.Wait()
}

// TestOurHTTPClientAgainstJrpc2Bridge has our HTTP client (jsonrpc.Dial with
// an http:// URL) call a jrpc2 server behind jrpc2's HTTP bridge.
func TestOurHTTPClientAgainstJrpc2Bridge(t *testing.T) {
	notes := make(chan string, 16)
	bridge := jhttp.NewBridge(jrpc2Service(notes), nil)
	defer bridge.Close()
	hs := httptest.NewServer(bridge)
	defer hs.Close()
	ctx := testContext(t)

	cli, err := jsonrpc.Dial(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()

	var got float64
	if err := cli.Call(ctx, "Math.Sub", []int{42, 23}, &got); err != nil || got != 19 {
		t.Errorf("Math.Sub [42,23] = %v, %v", got, err)
	}
	if err := cli.Call(ctx, "Math.Sub", map[string]int{"subtrahend": 23, "minuend": 42}, &got); err != nil || got != 19 {
		t.Errorf("Math.Sub by name = %v, %v", got, err)
	}
	var echoed json.RawMessage
	if err := cli.Call(ctx, "Echo", map[string]any{"s": "h\u00e9llo 😀", "n": []float64{1, 2.5}}, &echoed); err != nil ||
		!jsonEqual(t, echoed, []byte(`{"s":"h\u00e9llo 😀","n":[1,2.5]}`)) {
		t.Errorf("Echo = %s, %v", echoed, err)
	}

	err = cli.Call(ctx, "Fail", nil, nil)
	var re *jsonrpc.Error
	if !errors.As(err, &re) || re.Code != -32042 || re.Message != "jrpc2 failure" || !jsonEqual(t, re.Data, []byte(`{"why":"asked","n":7}`)) {
		t.Errorf("Fail: %#v", err)
	}
	if err := cli.Call(ctx, "NoSuchMethod", nil, nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Errorf("unknown method: %v, want -32601", err)
	}

	if err := cli.Notify(ctx, "Record", map[string]string{"from": "seedhq-http"}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if got := waitNote(t, ctx, notes); !jsonEqual(t, []byte(got), []byte(`{"from":"seedhq-http"}`)) {
		t.Errorf("jrpc2 recorded %s", got)
	}

	var b jsonrpc.Batch
	var diff float64
	sub := b.Call("Math.Sub", []int{10, 4}, &diff)
	b.Notify("Record", []string{"batched"})
	missing := b.Call("NoSuchMethod", nil, nil)
	if err := cli.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if sub.Err != nil || diff != 6 {
		t.Errorf("batch Math.Sub = %v, %v", diff, sub.Err)
	}
	if !errors.Is(missing.Err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Errorf("batch unknown method: %v", missing.Err)
	}
	if got := waitNote(t, ctx, notes); !jsonEqual(t, []byte(got), []byte(`["batched"]`)) {
		t.Errorf("jrpc2 recorded %s", got)
	}

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var d float64
			if err := cli.Call(ctx, "Math.Sub", []int{i, 1}, &d); err != nil || d != float64(i-1) {
				t.Errorf("Math.Sub [%d,1] = %v, %v", i, d, err)
			}
		})
	}
	wg.Wait()
}

func waitNote(t *testing.T, ctx context.Context, notes <-chan string) string {
	t.Helper()
	select {
	case s := <-notes:
		return s
	case <-ctx.Done():
		t.Fatalf("no notification reached the jrpc2 server: %v", ctx.Err())
		return ""
	}
}
