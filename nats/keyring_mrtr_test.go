package nats_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

const mrtrMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// mrtrInstance serves mrtrHandler(ring) on loopback and returns its URL.
func mrtrInstance(t testing.TB, ring state.KeyRing) string {
	t.Helper()
	ts := httptest.NewServer(mrtrHandler(ring))
	t.Cleanup(ts.Close)
	return ts.URL
}

// mrtrHandler serves MCP 2026-07-28 over Streamable HTTP with one tool,
// greet, which asks the client's name in a multi round-trip whose
// requestState is signed with ring's keys.
func mrtrHandler(ring state.KeyRing) http.Handler {
	rounds := &jsonrpc.InputRounds{KeyRing: ring}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, _ map[string]any) (any, error) {
		var a struct {
			Content struct{ Name string } `json:"content"`
		}
		var input *jsonrpc.InputRequiredError
		if err := rounds.Ask(ctx, "name", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": "Name?"}}, &a); errors.As(err, &input) {
			return input.Result, nil
		} else if err != nil {
			return nil, err
		}
		return map[string]any{"structuredContent": map[string]string{"greeting": "Hello, " + a.Content.Name + "!"}}, nil
	})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP, ExposeInternalErrors: true}
	return srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}, SSE: jsonrpc.SSENever})
}

// mrtrRound posts greet's first round (state "") or its answer with
// state, and returns the body.
func mrtrRound(t testing.TB, url, state string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(mrtrRequest(ctx, url, mrtrParams(state)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mrtrParams are the params of greet's first round (state "") or of its
// answer with state.
func mrtrParams(state string) string {
	if state == "" {
		return `{"name":"greet",` + mrtrMeta + `}`
	}
	return `{"name":"greet",` + mrtrMeta + `,"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":"` + state + `"}`
}

// mrtrRequest is the POST of a greet round with params to url.
func mrtrRequest(ctx context.Context, url, params string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", jsonrpc.MCPVersion2026)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	return req
}

// mrtrState runs greet's first round on url and returns its requestState.
func mrtrState(t testing.TB, url string) string {
	t.Helper()
	body := mrtrRound(t, url, "")
	var r struct{ Result jsonrpc.InputRequiredResult }
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("first round: %s", body)
	}
	return r.Result.RequestState
}

// mrtrGreeted reports whether greet's answer round with state on url is
// answered (false: refused as a state that cannot be trusted).
func mrtrGreeted(t testing.TB, url, state string) bool {
	t.Helper()
	body := mrtrRound(t, url, state)
	if strings.Contains(body, `"greeting":"Hello, Ada!"`) {
		return true
	}
	if !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, jsonrpc.ErrRequestStateInvalid.Error()) {
		t.Fatalf("answer round refused, but not as a state that cannot be trusted: %s", body)
	}
	return false
}

// mrtrWithin polls cond every 10ms for up to d and returns how long it took
// to hold, failing the test when it never does.
func mrtrWithin(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not mrtrWithin %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func mrtrKey(id string) state.Key {
	return state.Key{ID: id, Secret: []byte("0123456789abcdef-secret-" + id)}
}

// TestKeyRingInputRoundsAcrossInstances: two instances, each with its own
// NATS connection and nats.KeyRing on one bucket, serve greet over
// Streamable HTTP. A multi round-trip started on A is finished on B; a key
// rotated in on either is honoured by the other within a second (A signs
// with it at once, B verifies); a key removed on B is refused by A within
// a second; with the NATS server down the rounds still finish on the keys
// last seen, without waiting on NATS.
func TestKeyRingInputRoundsAcrossInstances(t *testing.T) {
	ns := runJetStream(t)
	reconnect := []natsgo.Option{natsgo.MaxReconnects(-1), natsgo.ReconnectWait(50 * time.Millisecond)}
	ra := newKeyRing(t, jsConn(t, ns, reconnect...), "mrtr", 3)
	rb := newKeyRing(t, jsConn(t, ns, reconnect...), "mrtr", 3)
	a, b := mrtrInstance(t, ra), mrtrInstance(t, rb)
	ctx := t.Context()
	if err := ra.Rotate(ctx, mrtrKey("k1")); err != nil {
		t.Fatal(err)
	}
	s1 := mrtrState(t, a)
	t.Logf("k1 rotated in on A, seen by B after %v", mrtrWithin(t, time.Second, "a state of A finished on B", func() bool { return mrtrGreeted(t, b, s1) }))

	if err := ra.Rotate(ctx, mrtrKey("k2")); err != nil {
		t.Fatal(err)
	}
	s2 := mrtrState(t, a)
	t.Logf("k2 rotated in on A, seen by B after %v", mrtrWithin(t, time.Second, "a state of A's new key verified on B", func() bool { return mrtrGreeted(t, b, s2) }))
	if err := rb.Rotate(ctx, mrtrKey("k3")); err != nil {
		t.Fatal(err)
	}
	s3 := mrtrState(t, b)
	t.Logf("k3 rotated in on B, seen by A after %v", mrtrWithin(t, time.Second, "a state of B's new key verified on A", func() bool { return mrtrGreeted(t, a, s3) }))

	if !mrtrGreeted(t, b, s1) {
		t.Fatal("a state of a key still in the ring refused")
	}
	if err := rb.Remove(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if mrtrGreeted(t, b, s1) {
		t.Fatal("a state of the key removed on B accepted by B")
	}
	t.Logf("k1 removed on B, refused by A after %v", mrtrWithin(t, time.Second, "a state of the removed key refused on A", func() bool { return !mrtrGreeted(t, a, s1) }))

	ns.Shutdown()
	ns.WaitForShutdown()
	start := time.Now()
	if s := mrtrState(t, a); !mrtrGreeted(t, b, s) || !mrtrGreeted(t, a, s3) || time.Since(start) > 2*time.Second {
		t.Fatalf("with NATS down, the rounds failed or took %v", time.Since(start))
	}
}
