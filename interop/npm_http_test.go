package interop

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestJSONRPC2NPMOverHTTP has the npm package json-rpc-2.0 call our HTTP
// server (a real net/http server on loopback) through node/http_client.js.
func TestJSONRPC2NPMOverHTTP(t *testing.T) {
	requireNode(t, "json-rpc-2.0")
	ctx := testContext(t)
	rec := newRecorder()
	_, l := startServer(t, "http://127.0.0.1:0/rpc", rec)
	out := runNode(t, ctx, "http_client.js", l.URL)

	var got struct {
		SubtractPositional outcome `json:"subtractPositional"`
		SubtractNamed      outcome `json:"subtractNamed"`
		Sum                outcome `json:"sum"`
		GetData            outcome `json:"getData"`
		Echo               outcome `json:"echo"`
		Error              outcome `json:"error"`
		UnknownMethod      outcome `json:"unknownMethod"`
		BadParams          outcome `json:"badParams"`
		Batch              []struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"batch"`
		Concurrent []json.RawMessage `json:"concurrent"`
		AskPeer    outcome           `json:"askPeer"`
		Exchanges  []struct {
			Kind        string `json:"kind"`
			Status      int    `json:"status"`
			ContentType string `json:"contentType"`
			Body        string `json:"body"`
		} `json:"exchanges"`
	}
	decodeOutput(t, out, &got)

	got.SubtractPositional.wantResult(t, "subtract [42,23]", `19`)
	got.SubtractNamed.wantResult(t, "subtract by name", `19`)
	got.Sum.wantResult(t, "sum", `6.5`)
	got.GetData.wantResult(t, "get_data", `["hello",5]`)
	got.Echo.wantResult(t, "echo", `{"s":"h\u00e9llo \u2028 😀 \"q\" \\","n":[1,2.5,-3e-7],"o":{"a":[true,false]}}`)
	got.Error.wantError(t, "error", -32042, "custom failure", `{"why":"test","n":7}`)
	got.UnknownMethod.wantError(t, "unknown method", -32601, "", "")
	got.BadParams.wantError(t, "bad params", -32602, "", "")
	got.AskPeer.wantError(t, "ask_peer over HTTP", -32603, "", "")

	// The batch's responses, matched by id by the library (in request order).
	if len(got.Batch) != 3 {
		t.Fatalf("batch: %d responses, want 3: %+v", len(got.Batch), got.Batch)
	}
	for i, want := range []struct {
		id, result string
		code       int64
	}{{`"b1"`, `6`, 0}, {`"b2"`, ``, -32601}, {`"b3"`, `-2`, 0}} {
		r := got.Batch[i]
		if r.JSONRPC != "2.0" || string(r.ID) != want.id {
			t.Errorf("batch response %d: jsonrpc %q id %s, want 2.0 %s", i, r.JSONRPC, r.ID, want.id)
		}
		switch {
		case want.code != 0 && (r.Error == nil || r.Error.Code != want.code):
			t.Errorf("batch response %s: %+v, want error %d", want.id, r, want.code)
		case want.code == 0 && (r.Error != nil || !jsonEqual(t, r.Result, []byte(want.result))):
			t.Errorf("batch response %s: result %s error %+v, want %s", want.id, r.Result, r.Error, want.result)
		}
	}

	if len(got.Concurrent) != 16 {
		t.Fatalf("concurrent: %d results, want 16", len(got.Concurrent))
	}
	for i, r := range got.Concurrent {
		if r == nil || !jsonEqual(t, r, []byte(strconv.Itoa(i-1))) {
			t.Errorf("concurrent subtract [%d,1] = %s", i, r)
		}
	}

	// What the server recorded: the notification, the batched one, and the
	// two of the all-notification batch (in either order).
	var records []string
	for range 4 {
		var v any
		if err := json.Unmarshal(rec.next(t), &v); err != nil {
			t.Fatal(err)
		}
		records = append(records, string(mustJSON(t, v)))
	}
	slices.Sort(records)
	if want := []string{`["batched"]`, `["only-1"]`, `["only-2"]`, `{"from":"json-rpc-2.0"}`}; !slices.Equal(records, want) {
		t.Errorf("recorded %q, want %q", records, want)
	}

	// HTTP status rules, as the library saw them.
	seen := map[string]bool{}
	for _, x := range got.Exchanges {
		seen[x.Kind] = true
		switch {
		case x.Kind == "notification:record" || x.Kind == "batch:nn":
			if x.Status != 204 || x.Body != "" {
				t.Errorf("%s: HTTP %d with body %q, want 204 and no body", x.Kind, x.Status, x.Body)
			}
		default: // a call or a batch with calls, including those answered with an error
			if x.Status != 200 || !strings.HasPrefix(x.ContentType, "application/json") {
				t.Errorf("%s: HTTP %d %q, want 200 application/json", x.Kind, x.Status, x.ContentType)
			}
		}
	}
	for _, kind := range []string{"call:subtract", "call:error", "call:no_such_method", "notification:record", "batch:cncc", "batch:nn"} {
		if !seen[kind] {
			t.Errorf("no exchange of kind %s in %+v", kind, got.Exchanges)
		}
	}
}
