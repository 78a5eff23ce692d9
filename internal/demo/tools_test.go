package demo_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
)

// exchange sends one raw message and returns the raw reply.
type exchange func(t *testing.T, msg string) string

func lineExchange(t *testing.T, nc net.Conn) exchange {
	br := bufio.NewReader(nc)
	return func(t *testing.T, msg string) string {
		t.Helper()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(nc, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
}

func newServer() *jsonrpc.Server { return &jsonrpc.Server{Handler: demo.Shared{}.NewMux()} }

// transports returns the exchanges over every transport jrpc serve offers
// (stdio is the same stream as the pipe).
func transports(t *testing.T) map[string]exchange {
	out := map[string]exchange{}

	a, b := net.Pipe()
	go newServer().ServeConn(context.Background(), jsonrpc.NewStream(a, jsonrpc.StreamOptions{}))
	t.Cleanup(func() { b.Close() })
	out["pipe"] = lineExchange(t, b)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer()
	go srv.Serve(l)
	t.Cleanup(func() { l.Close() })
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	out["tcp"] = lineExchange(t, nc)

	hs := httptest.NewServer(newServer())
	t.Cleanup(hs.Close)
	out["http"] = func(t *testing.T, msg string) string {
		t.Helper()
		resp, err := http.Post(hs.URL, "application/json", strings.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(body))
	}

	ws := httptest.NewServer(newServer().WebSocketHandler(jsonrpc.WebSocketOptions{}))
	t.Cleanup(ws.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ws.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wc.CloseNow() })
	out["websocket"] = func(t *testing.T, msg string) string {
		t.Helper()
		if err := wc.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, data, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return out
}

// TestToolsCallWorkedExample is issue 8's exchange, byte for byte, over
// every transport.
func TestToolsCallWorkedExample(t *testing.T) {
	cases := []struct{ req, want string }{
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}},"id":7}`,
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}},"id":"7"}`,
			`{"jsonrpc":"2.0","id":"7","result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":0.5,"b":-3e2}},"id":7.0}`,
			`{"jsonrpc":"2.0","id":7.0,"result":{"content":[{"type":"text","text":"-299.5"}],"structuredContent":{"sum":-299.5},"isError":false}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"héllo \"you\""}},"id":8}`,
			`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"héllo \"you\""}],"structuredContent":{"text":"héllo \"you\""},"isError":false}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"nope","arguments":{}},"id":9}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Unknown tool: nope"}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":"2","b":3}},"id":10}`,
			`{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"invalid params: /arguments/a: expected number, got string","data":[{"path":"/arguments/a","problem":"expected number, got string"}]}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":2}},"id":11}`,
			`{"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"invalid params: /arguments/b: missing required member","data":[{"path":"/arguments/b","problem":"missing required member"}]}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3,"c":4}},"id":12}`,
			`{"jsonrpc":"2.0","id":12,"error":{"code":-32602,"message":"invalid params: /arguments/c: unknown member","data":[{"path":"/arguments/c","problem":"unknown member"}]}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{}},"id":13}`,
			`{"jsonrpc":"2.0","id":13,"error":{"code":-32602,"message":"invalid params: /name: missing required member","data":[{"path":"/name","problem":"missing required member"}]}}`},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"sleep","arguments":{"ms":-1}},"id":14}`,
			`{"jsonrpc":"2.0","id":14,"error":{"code":-32602,"message":"invalid params: /arguments/ms: must be >= 0","data":[{"path":"/arguments/ms","problem":"must be >= 0"}]}}`},
	}
	for name, ex := range transports(t) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				if got := ex(t, c.req); got != c.want {
					t.Errorf("%s\n got %s\nwant %s", c.req, got, c.want)
				}
			}
		})
	}
}

func TestToolsList(t *testing.T) {
	c := pipeClient(t)
	var res struct {
		Tools []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := c.Call(context.Background(), "tools/list", nil, &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"add":   `{"type":"object","properties":{"a":{"type":"number","description":"The first number."},"b":{"type":"number","description":"The second number."}},"required":["a","b"],"additionalProperties":false}`,
		"echo":  `{"type":"object","properties":{"text":{"type":"string","description":"The text to echo.","x-mcp-header":"Text"}},"required":["text"],"additionalProperties":false}`,
		"now":   `{"type":"object","properties":{},"additionalProperties":false}`,
		"sleep": `{"type":"object","properties":{"ms":{"type":"integer","description":"How long to sleep, in milliseconds.","minimum":0,"maximum":600000}},"required":["ms"],"additionalProperties":false}`,
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
	}
	for i, tool := range res.Tools {
		if i > 0 && res.Tools[i-1].Name >= tool.Name {
			t.Errorf("tools not sorted: %s before %s", res.Tools[i-1].Name, tool.Name)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if !bytes.Contains(tool.OutputSchema, []byte(`"type":"object"`)) {
			t.Errorf("%s outputSchema %s", tool.Name, tool.OutputSchema)
		}
		if got := string(tool.InputSchema); got != want[tool.Name] {
			t.Errorf("%s inputSchema\n got %s\nwant %s", tool.Name, got, want[tool.Name])
		}
	}
	// tools/list accepts the params MCP clients send.
	for _, p := range []any{map[string]any{}, map[string]any{"cursor": "x", "_meta": map[string]any{"progressToken": 1}}} {
		if err := c.Call(context.Background(), "tools/list", p, &res); err != nil {
			t.Errorf("tools/list %v: %v", p, err)
		}
	}
}

func pipeClient(t *testing.T) *jsonrpc.Conn {
	a, b := net.Pipe()
	srv := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), newServer())
	cli := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	t.Cleanup(func() { cli.Close(); srv.Close() })
	return cli
}

func TestToolsNowAndSleep(t *testing.T) {
	c := pipeClient(t)
	ctx := context.Background()
	var res demo.CallResult
	before := time.Now().Add(-time.Second)
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "now"}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("now: %+v", res)
	}
	at, err := time.Parse(time.RFC3339, res.Content[0].Text)
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("now: %q (%v)", res.Content[0].Text, err)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["time"] != res.Content[0].Text {
		t.Errorf("now: structuredContent %v, text %q", res.StructuredContent, res.Content[0].Text)
	}

	start := time.Now()
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 30}}, &res); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || res.Content[0].Text != "slept 30 ms" {
		t.Errorf("sleep: %v after %v", res, d)
	}

	// A call that times out stops the tool at once and is reported as such.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = c.Call(short, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60000}}, &res)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("sleep past the deadline: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep took %v after cancellation", d)
	}
}

// TestToolsCancelledOnServer checks that the tool itself sees the
// cancellation (not only the client): the Tools API passes ctx through and
// reports its error, not a tool failure.
func TestToolsCancelledOnServer(t *testing.T) {
	ts := demo.DemoTools()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := ts.Call(ctx, "sleep", []byte(`{"ms":60000}`))
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("got %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

// TestAddToolOneFunction shows the typed API: a tool is one function, its
// schema comes from its arguments type, and a failing run is isError.
func TestAddToolOneFunction(t *testing.T) {
	type Args struct {
		Word  string `json:"word" jsonschema:"The word to shout."`
		Times int    `json:"times,omitempty" jsonschema:"minimum=1,maximum=5"`
	}
	type Result struct {
		Shout string `json:"shout"`
	}
	ts := &demo.Tools{}
	demo.AddTool(ts, "shout", "Shouts a word.", func(_ context.Context, a Args) (Result, error) {
		if a.Word == "" {
			return Result{}, errors.New("nothing to shout")
		}
		return Result{Shout: strings.Repeat(strings.ToUpper(a.Word)+"!", max(a.Times, 1))}, nil
	})
	ctx := context.Background()
	res, err := ts.Call(ctx, "shout", []byte(`{"word":"hey","times":2}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if want := `{"content":[{"type":"text","text":"{\"shout\":\"HEY!HEY!\"}"}],"structuredContent":{"shout":"HEY!HEY!"},"isError":false}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	res, err = ts.Call(ctx, "shout", []byte(`{"word":""}`))
	if err != nil || !res.IsError || res.Content[0].Text != "nothing to shout" {
		t.Errorf("failing tool: %+v, %v", res, err)
	}
	_, err = ts.Call(ctx, "shout", []byte(`{"word":"x","times":9}`))
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams || string(e.Data) != `[{"path":"/arguments/times","problem":"must be <= 5"}]` {
		t.Errorf("bad arguments: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddTool accepted a duplicate name")
		}
	}()
	demo.AddTool(ts, "shout", "", func(context.Context, Args) (Result, error) { return Result{}, nil })
}

// TestDemoDiscover checks that the demo offers rpc.discover with a
// description of each method and validates params.
func TestDemoDiscover(t *testing.T) {
	c := pipeClient(t)
	ctx := context.Background()
	var raw json.RawMessage
	if err := c.Call(ctx, "rpc.discover", nil, &raw); err != nil {
		t.Fatal(err)
	}
	doc, err := openrpc.ParseDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenRPC != "1.3.2" || doc.Info.Title == "" || doc.Info.Version == "" {
		t.Errorf("info: %+v", doc)
	}
	for _, m := range doc.Methods {
		if m.Summary == "" {
			t.Errorf("%s has no summary", m.Name)
		}
	}
	if got := doc.Method("subtract").Signature(); got != "subtract(minuend number, subtrahend number) number" {
		t.Errorf("subtract signature %q", got)
	}
	// Validation is on: -32602 lists each problem.
	// Raw params, so that the members come in this order (a map's do not).
	err = c.Call(ctx, "subtract", json.RawMessage(`{"minuend":"a","subtrahend":"b"}`), nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams ||
		!bytes.Equal(e.Data, []byte(`[{"path":"/minuend","problem":"expected number, got string"},{"path":"/subtrahend","problem":"expected number, got string"}]`)) {
		t.Errorf("subtract with bad params: %v", err)
	}
	if err := c.Call(ctx, "big", map[string]any{"n": -1}, nil); !errors.As(err, &e) || string(e.Data) != `[{"path":"/n","problem":"must be >= 0"}]` {
		t.Errorf("big -1: %v", err)
	}
}

// The MCP demo's sleep tool reports progress to a caller that sent a
// progress token, increasing, all before its result, and a cancelled call
// (notifications/cancelled, sent by a client with WithConvention) stops it.
func TestSleepProgressAndCancel(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	var mu sync.Mutex
	var reports []jsonrpc.Progress
	c, err := jsonrpc.Dial(context.Background(), l.URL, jsonrpc.WithConvention(jsonrpc.ConventionMCP),
		jsonrpc.WithProgress(func(_ context.Context, p jsonrpc.Progress) {
			mu.Lock()
			reports = append(reports, p)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var res demo.CallResult
	params := map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 200}, "_meta": map[string]any{"progressToken": "s1"}}
	if err := c.Call(ctx, "tools/call", params, &res); err != nil || res.IsError {
		t.Fatalf("sleep: %+v %v", res, err)
	}
	// Progress notifications are read before the response that follows them.
	mu.Lock()
	got := reports
	mu.Unlock()
	if len(got) < 3 {
		t.Fatalf("%d progress reports for a 200 ms sleep, want about 9", len(got))
	}
	for i, p := range got {
		if string(p.Token) != `"s1"` || p.Total != 200 || p.Progress <= 0 || p.Progress >= 200 || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Fatalf("report %d: %+v (all: %+v)", i, p, got)
		}
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := c.Call(short, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60000}}, &res); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sleep past the deadline: %v", err)
	}
	// The server stopped the tool: a graceful shutdown has nothing left to wait for.
	stop, cancelStop := context.WithTimeout(ctx, 5*time.Second)
	defer cancelStop()
	if err := srv.Shutdown(stop); err != nil {
		t.Fatalf("Shutdown: %v (the cancelled sleep still ran)", err)
	}
}
