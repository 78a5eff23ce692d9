package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/state"
)

const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// mcp2026HTTP returns an exchange speaking MCP 2026-07-28 to the demo over
// Streamable HTTP (both eras on the endpoint), with its headers; the
// server's state keys are keys.
func mcp2026HTTP(t *testing.T, keys ...[]byte) func(method, name, params string) (int, string) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(keys...), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, ProtocolVersions: mcp.SessionVersions, StatelessVersions: mcp.StatelessVersions,
	}))
	t.Cleanup(ts.Close)
	return func(method, name, params string) (int, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

func TestDemoMCP2026(t *testing.T) {
	do := mcp2026HTTP(t)
	info := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"jrpc-demo","title":"` + demo.Info.Title + `","version":"` + demo.Info.Version + `"}}`
	status, body := do("server/discover", "", `{`+meta26+`}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + info + `,"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"capabilities":{"tools":{"listChanged":true}},"instructions":"Demo tools: add, echo, greet, now, sleep, test_trigger_tool_change. tools/list gives their schemas.","ttlMs":300000,"cacheScope":"public"}}`; status != 200 || body != want {
		t.Fatalf("discover: %d\n%s\nwant\n%s", status, body, want)
	}
	status, body = do("tools/list", "", `{`+meta26+`}`)
	if status != 200 || !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",`+info+`,"tools":[{"name":"add"`) || !strings.HasSuffix(body, `],"ttlMs":300000,"cacheScope":"public"}}`) || !strings.Contains(body, `"name":"greet"`) {
		t.Fatalf("tools/list: %d %s", status, body)
	}
	status, body = do("tools/call", "add", `{"name":"add","arguments":{"a":2,"b":3},`+meta26+`}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",` + info + `,"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false}}`; status != 200 || body != want {
		t.Fatalf("tools/call: %d %s", status, body)
	}
	status, body = do("tools/call", "nope", `{"name":"nope",`+meta26+`}`)
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}`; status != 200 || body != want {
		t.Fatalf("unknown tool: %d %s", status, body)
	}
	// ping and logging/setLevel are gone in 2026-07-28 but harmless; an
	// unknown method is 404.
	if status, body = do("resources/list", "", `{`+meta26+`}`); status != 404 || !strings.Contains(body, `"code":-32601`) {
		t.Fatalf("unknown method: %d %s", status, body)
	}
}

// The greet tool asks for a name: a multi round-trip in 2026-07-28, with a
// signed requestState bound to the call.
func TestDemoGreetMultiRoundTrip(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	do := mcp2026HTTP(t, key)
	status, body := do("tools/call", "greet", `{"name":"greet","arguments":{},`+meta26+`}`)
	var first struct {
		Result jsonrpc.InputRequiredResult
	}
	if err := json.Unmarshal([]byte(body), &first); status != 200 || err != nil || first.Result.ResultType != "input_required" || first.Result.InputRequests["name"].Method != "elicitation/create" || first.Result.RequestState == "" {
		t.Fatalf("first round: %d %s", status, body)
	}
	state := first.Result.RequestState
	again := func(state, answer string) (int, string) {
		return do("tools/call", "greet", `{"name":"greet","arguments":{},`+meta26+`,"inputResponses":{"name":`+answer+`},"requestState":"`+state+`"}`)
	}
	status, body = again(state, `{"action":"accept","content":{"name":"Ada"}}`)
	if !strings.Contains(body, `"content":[{"type":"text","text":"Hello, Ada!"}]`) || !strings.Contains(body, `"resultType":"complete"`) || status != 200 {
		t.Fatalf("second round: %d %s", status, body)
	}
	// Another instance with the same key resumes it (no server state); a
	// tampered state, or one from a server with another key, is refused.
	other := mcp2026HTTP(t, []byte("another key, another server....."), key)
	if _, body = other("tools/call", "greet", `{"name":"greet","arguments":{},`+meta26+`,"inputResponses":{"name":{"action":"accept","content":{"name":"Bob"}}},"requestState":"`+state+`"}`); !strings.Contains(body, "Hello, Bob!") {
		t.Fatalf("rotated key: %s", body)
	}
	tampered := "x" + state[1:]
	if _, body = again(tampered, `{"action":"accept","content":{"name":"Eve"}}`); !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "requestState") {
		t.Fatalf("tampered state: %s", body)
	}
	stranger := mcp2026HTTP(t, []byte("a key nobody else knows........."))
	if _, body = stranger("tools/call", "greet", `{"name":"greet","arguments":{},`+meta26+`,"inputResponses":{"name":{"action":"accept"}},"requestState":"`+state+`"}`); !strings.Contains(body, `"code":-32602`) {
		t.Fatalf("foreign key: %s", body)
	}
	// A client without the elicitation capability cannot be asked: -32021.
	noCaps := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if status, body = do("tools/call", "greet", `{"name":"greet",`+noCaps+`}`); status != 400 || !strings.Contains(body, `"code":-32021`) || !strings.Contains(body, `"requiredCapabilities":{"elicitation":{}}`) {
		t.Fatalf("no elicitation capability: %d %s", status, body)
	}
}

// Over a stream (stdio's framing) the demo serves 2026-07-28 requests too,
// beside initialize-era ones on the same connection.
func TestDemoMCP2026OverStream(t *testing.T) {
	a, b := net.Pipe()
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	go srv.ServeConn(context.Background(), jsonrpc.NewStream(a, jsonrpc.StreamOptions{}))
	t.Cleanup(func() { b.Close() })
	ex := lineExchange(t, b)
	if got := ex(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`+meta26+`}}`); !strings.Contains(got, `"resultType":"complete"`) || !strings.Contains(got, `"text":"hi"`) {
		t.Fatalf("2026 call: %s", got)
	}
	if got := ex(t, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`); !strings.Contains(got, `"code":-32022`) || !strings.Contains(got, `"requested":"2030-01-01"`) {
		t.Fatalf("unknown revision: %s", got)
	}
	if got := ex(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`); strings.Contains(got, "resultType") || !strings.Contains(got, `"isError":false`) {
		t.Fatalf("session-era call: %s", got)
	}
}

// subscriptions/listen on the demo: acknowledged with what it honours
// (tools list changes, nothing else).
func TestDemoListen(t *testing.T) {
	a, b := net.Pipe()
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	go srv.ServeConn(context.Background(), jsonrpc.NewStream(a, jsonrpc.StreamOptions{}))
	t.Cleanup(func() { b.Close() })
	ex := lineExchange(t, b)
	got := ex(t, `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{`+meta26+`,"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`)
	if want := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":9},"notifications":{"toolsListChanged":true}}}`; got != want {
		t.Fatalf("ack: %s\nwant %s", got, want)
	}
	// Cancelling the listen request (stdio) ends it: no answer, and the
	// connection serves on.
	if got := ex(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`+"\n"+`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":1},`+meta26+`}}`); !strings.Contains(got, `"id":10`) || !strings.Contains(got, `"text":"2"`) {
		t.Fatalf("after cancelling listen: %s", got)
	}
}

// TestDemoTriggerToolChange: test_trigger_tool_change on one instance
// sends notifications/tools/list_changed on a subscriptions/listen stream
// of another sharing its broker, one that asked for toolsListChanged,
// tagged with its subscription id.
func TestDemoTriggerToolChange(t *testing.T) {
	sh := demo.Shared{Broker: state.NewMemoryBroker(16)}
	instance := func() string {
		srv := &jsonrpc.Server{Handler: sh.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
		ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
			Sessions: true, ProtocolVersions: mcp.SessionVersions, StatelessVersions: mcp.StatelessVersions,
		}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	a, b := instance(), instance()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	post := func(url string, id int, method, name, params string) *http.Response {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	listen := post(a, 7, "subscriptions/listen", "", `{`+meta26+`,"notifications":{"toolsListChanged":true}}`)
	defer listen.Body.Close()
	lines := bufio.NewScanner(listen.Body)
	next := func() string {
		for lines.Scan() {
			if d, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return d
			}
		}
		t.Fatalf("listen stream ended: %v", lines.Err())
		return ""
	}
	if ack := next(); !strings.Contains(ack, `"notifications/subscriptions/acknowledged"`) {
		t.Fatalf("first message %s", ack)
	}
	resp := post(b, 8, "tools/call", "test_trigger_tool_change", `{"name":"test_trigger_tool_change","arguments":{},`+meta26+`}`)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), `"text":"Mutation triggered"`) {
		t.Fatalf("tools/call: %d %s", resp.StatusCode, out)
	}
	if got := next(); !strings.Contains(got, `"method":"notifications/tools/list_changed"`) || !strings.Contains(got, `"io.modelcontextprotocol/subscriptionId":7`) {
		t.Fatalf("after the trigger: %s", got)
	}
}
