package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// statelessServer serves both eras: sessions for initialize-first
// clients, per request for 2026-07-28. "tools/call" answers with the
// tool's name and the protocol version its _meta gave (or "session");
// "slow" reports progress then waits to be cancelled.
func statelessServer(t *testing.T, sse jsonrpc.SSEPolicy, canceled chan<- error) *httptest.Server {
	t.Helper()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, p struct {
		Name string          `json:"name"`
		Meta json.RawMessage `json:"_meta,omitzero"`
	}) (string, error) {
		if m := jsonrpc.MCPMetaFromContext(ctx); m != nil {
			return p.Name + "@" + m.ProtocolVersion, nil
		}
		return p.Name + "@session", nil
	})
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ map[string]any) (string, error) {
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "notifications/progress", map[string]any{"progress": 1}); err != nil {
			return "", err
		}
		<-ctx.Done()
		canceled <- ctx.Err()
		return "", ctx.Err()
	})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, SSE: sse,
		ProtocolVersions:  []string{"2025-11-25", "2025-06-18"},
		StatelessVersions: []string{jsonrpc.MCPVersion2026},
	}))
	t.Cleanup(ts.Close)
	return ts
}

func post2026(t *testing.T, url, body string, headers map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readAll(t, resp)
}

func TestStatelessAndSessionErasOnOneEndpoint(t *testing.T) {
	ts := statelessServer(t, jsonrpc.SSEAuto, nil)
	// 2026-07-28: no initialize, no session header, answered at once.
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
	resp, body := post2026(t, ts.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo",`+meta2026+`}}`, h)
	if resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":7,"result":"echo@2026-07-28"}` || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("2026 call: %d %q session %q", resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id"))
	}
	// 2025-11-25: initialize mints a session, which later requests need.
	c := &streamClient{t: t, url: ts.URL}
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "application/json, text/event-stream")
	readAll(t, r)
	if c.session = r.Header.Get("Mcp-Session-Id"); c.session == "" {
		t.Fatal("initialize minted no session")
	}
	if got := readAll(t, c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`, "application/json")); got != `{"jsonrpc":"2.0","id":2,"result":"echo@session"}` {
		t.Fatalf("session call: %s", got)
	}
	c.session = ""
	if r := c.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`, "application/json"); readAll(t, r) == "" || r.StatusCode != 400 {
		t.Fatalf("session-era call without a session: %d", r.StatusCode)
	}
}

func TestStatelessRefusals(t *testing.T) {
	ts := statelessServer(t, jsonrpc.SSEAuto, nil)
	call := func(name, version string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	hd := func(version, method, name string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name}
	}
	for _, tc := range []struct {
		name       string
		body       string
		headers    map[string]string
		status     int
		code       int64
		reply      string // the whole reply, when set
		errContain string
	}{
		{"method header missing", call("echo", "2026-07-28"), hd("2026-07-28", "", "echo"), 400, -32020, "", "Mcp-Method header missing"},
		{"method header differs", call("echo", "2026-07-28"), hd("2026-07-28", "tools/list", "echo"), 400, -32020, "", `"tools/list" does not match body value "tools/call"`},
		{"name header missing", call("echo", "2026-07-28"), hd("2026-07-28", "tools/call", ""), 400, -32020, "", "Mcp-Name header missing"},
		{"name header differs", call("echo", "2026-07-28"), hd("2026-07-28", "tools/call", "add"), 400, -32020, "", `"add" does not match body value "echo"`},
		{"name in base64", call("日本", "2026-07-28"), hd("2026-07-28", "tools/call", jsonrpc.EncodeMCPHeaderValue("日本")), 200, 0, `{"jsonrpc":"2.0","id":1,"result":"日本@2026-07-28"}`, ""},
		{"name base64 broken", call("echo", "2026-07-28"), hd("2026-07-28", "tools/call", "=?base64?!!?="), 400, -32020, "", "invalid characters or encoding"},
		{"meta version differs", call("echo", "2025-11-25"), hd("2026-07-28", "tools/call", "echo"), 400, -32020, "", `"2026-07-28" does not match _meta`},
		{"unknown version", call("echo", "1900-01-01"), hd("1900-01-01", "tools/call", "echo"), 400, -32022,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"1900-01-01"}}}`, ""},
		{"no capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, hd("2026-07-28", "tools/list", ""), 400, -32602, "", "clientCapabilities is required"},
		{"no meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hd("2026-07-28", "tools/list", ""), 400, -32602, "", "protocolVersion is required"},
		{"batch", `[` + call("echo", "2026-07-28") + `]`, hd("2026-07-28", "tools/call", "echo"), 400, -32600, "", "not a batch"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"nope","params":{` + meta2026 + `}}`, hd("2026-07-28", "nope", ""), 404, -32601, "", ""},
		{"session-era method", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{` + meta2026 + `}}`, hd("2026-07-28", "ping", ""), 404, -32601, "", "not part of MCP 2026-07-28"},
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, hd("2026-07-28", "initialize", ""), 404, -32601, "", "not part of MCP 2026-07-28"},
		{"parse error", `{"jsonrpc":`, hd("2026-07-28", "tools/call", "echo"), 400, -32700, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post2026(t, ts.URL, tc.body, tc.headers)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d (%s), want %d: %s", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, body)
			}
			if tc.reply != "" {
				if body != tc.reply {
					t.Fatalf("reply %s\nwant  %s", body, tc.reply)
				}
				return
			}
			var r struct{ Error jsonrpc.Error }
			if err := json.Unmarshal([]byte(body), &r); err != nil || r.Error.Code != tc.code || !strings.Contains(r.Error.Message, tc.errContain) {
				t.Fatalf("reply %s: want code %d with %q", body, tc.code, tc.errContain)
			}
		})
	}
	// No GET stream, no DELETE in the stateless revision.
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, ts.URL, nil)
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != 405 {
			t.Fatalf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	// A notification is accepted, with no body.
	if resp, body := post2026(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`, hd("2026-07-28", "notifications/whatever", "")); resp.StatusCode != 202 || body != "" {
		t.Fatalf("notification: %d %q", resp.StatusCode, body)
	}
}

// Closing the answer's event stream cancels the call: its context ends.
func TestStatelessStreamCloseCancels(t *testing.T) {
	canceled := make(chan error, 1)
	ts := statelessServer(t, jsonrpc.SSEAuto, canceled)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"s","method":"slow","params":{`+meta2026+`}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "slow")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "id:") || strings.HasPrefix(line, "retry:") {
			t.Fatalf("a stateless stream has event ids or retry (resumption): %q", line)
		}
		lines = append(lines, line)
		if strings.HasPrefix(line, "data: ") {
			break
		}
	}
	if !strings.Contains(strings.Join(lines, ""), `"notifications/progress"`) {
		t.Fatalf("first event: %q", lines)
	}
	cancel()
	resp.Body.Close()
	select {
	case err := <-canceled:
		if err == nil {
			t.Fatal("no context error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the stream did not cancel the call")
	}
}

// MCPStateless serves the stateless revision on a stream transport: the
// handler sees the _meta, an unknown revision is -32022, initialize-era
// requests pass untouched.
func TestMCPStatelessMiddlewareOnStream(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "who", func(ctx context.Context, _ map[string]any) (string, error) {
		if m := jsonrpc.MCPMetaFromContext(ctx); m != nil {
			return m.ProtocolVersion + " " + string(m.ClientInfo) + " elicitation=" + boolString(m.HasCapability("elicitation")), nil
		}
		return "session era", nil
	})
	srv := &jsonrpc.Server{Handler: mux, Middleware: []jsonrpc.Middleware{jsonrpc.MCPStateless(jsonrpc.MCPVersion2026)}}
	c := pipeClient(t, srv)
	ctx := context.Background()
	var got string
	if err := c.Call(ctx, "who", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`), &got); err != nil || got != `2026-07-28 {"name":"t","version":"1"} elicitation=true` {
		t.Fatalf("2026 request: %q %v", got, err)
	}
	if err := c.Call(ctx, "who", json.RawMessage(`{}`), &got); err != nil || got != "session era" {
		t.Fatalf("session-era request: %q %v", got, err)
	}
	err := c.Call(ctx, "who", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`), &got)
	var e *jsonrpc.Error
	if !asError(err, &e) || e.Code != jsonrpc.CodeUnsupportedProtocolVersion || string(e.Data) != `{"supported":["2026-07-28"],"requested":"2099-01-01"}` {
		t.Fatalf("unknown revision: %v", err)
	}
	err = c.Call(ctx, "who", json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`), &got)
	if !asError(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("no capabilities: %v", err)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestEncodeMCPHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	} {
		if got := jsonrpc.EncodeMCPHeaderValue(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// pipeClient returns a client connection to srv over an in-memory stream.
func pipeClient(t *testing.T, srv *jsonrpc.Server) *jsonrpc.Conn {
	t.Helper()
	a, b := net.Pipe()
	server := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client
}

func asError(err error, target **jsonrpc.Error) bool { return errors.As(err, target) }

// subscriptions/listen over stateless Streamable HTTP: the acknowledgement
// (with the honoured filter) first, then the changes asked for, each
// tagged with the subscription id; closing the stream ends the
// subscription, and Close ends the others gracefully (a result).
func TestChangeFeedListen(t *testing.T) {
	feed := &jsonrpc.ChangeFeed{}
	mux := jsonrpc.NewMux()
	mux.Handle("subscriptions/listen", feed)
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}}))
	defer ts.Close()
	open := func(ctx context.Context, id string) (*http.Response, *bufio.Reader) {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + meta2026 + `,"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///a"]}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, bufio.NewReader(resp.Body)
	}
	next := func(br *bufio.Reader) string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := strings.CutPrefix(line, "data: "); ok {
				return strings.TrimSpace(s)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, br := open(ctx, `"L1"`)
	if got, want := next(br), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"},"notifications":{"toolsListChanged":true,"promptsListChanged":true}}}`; got != want {
		t.Fatalf("ack: %s\nwant %s", got, want)
	}
	feed.Publish("resourcesListChanged") // not asked for
	feed.Publish("toolsListChanged")
	if got, want := next(br), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}}}`; got != want {
		t.Fatalf("change: %s\nwant %s", got, want)
	}
	cancel()
	resp.Body.Close()
	resp2, br2 := open(context.Background(), "2")
	defer resp2.Body.Close()
	next(br2)
	feed.Close()
	if got, want := next(br2), `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}`; got != want {
		t.Fatalf("graceful end: %s\nwant %s", got, want)
	}
}
