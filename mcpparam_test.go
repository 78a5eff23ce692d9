package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// sqlSchema marks arguments for Mcp-Param-* headers: a string, an
// integer, a boolean, a nested string; a number and a property under
// items are annotations the revision does not allow (not expected).
const sqlSchema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"limit":{"type":"integer","x-mcp-header":"Limit"},
	"dry":{"type":"boolean","x-mcp-header":"Dry"},
	"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
	"ratio":{"type":"number","x-mcp-header":"Ratio"},
	"list":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string","x-mcp-header":"Item"}}}},
	"query":{"type":"string"}}}`

// clientSQLSchema is sqlSchema as a tools/list shows it to clients: without
// the forbidden annotations, which make a client reject the tool.
const clientSQLSchema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"limit":{"type":"integer","x-mcp-header":"Limit"},
	"dry":{"type":"boolean","x-mcp-header":"Dry"},
	"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}},
	"query":{"type":"string"}}}`

// sqlServer serves mux under 2026-07-28 with sqlSchema as the inputSchema
// of the tool "sql" (ToolInputSchema); it stops with the test.
func sqlServer(t *testing.T, mux *jsonrpc.Mux) *httptest.Server {
	srv := &jsonrpc.Server{Handler: mux}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		StatelessVersions: []string{jsonrpc.MCPVersion2026},
		ToolInputSchema: func(tool string) json.RawMessage {
			if tool == "sql" {
				return json.RawMessage(sqlSchema)
			}
			return nil
		},
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestMcpParamHeaders: under 2026-07-28, with ToolInputSchema, each
// argument a tool's schema marks with x-mcp-header must come in its
// Mcp-Param-* header, once, with valid characters, equal to the body's
// value after decoding (integers as numbers); a header for a value the
// body lacks is refused too; headers no valid annotation names are
// ignored. Refusals are 400 with -32020 and the handler never runs.
func TestMcpParamHeaders(t *testing.T) {
	ran := 0
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/call", func(context.Context, json.RawMessage) (string, error) {
		ran++
		return "ok", nil
	})
	ts := sqlServer(t, mux)
	call := func(t *testing.T, args string, params ...string) (int, string) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sql","arguments":` + args + `,` + meta2026 + `}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("MCP-Protocol-Version", jsonrpc.MCPVersion2026)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "sql")
		for i := 0; i+1 < len(params); i += 2 {
			req.Header.Add(params[i], params[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	full := `{"region":"us-west1","limit":42,"dry":true,"opts":{"tenant":"Grüße"},"query":"SELECT 1"}`
	fullHeaders := []string{"Mcp-Param-Region", "us-west1", "Mcp-Param-Limit", "42", "Mcp-Param-Dry", "true", "Mcp-Param-Tenant", jsonrpc.EncodeMCPHeaderValue("Grüße")}
	with := func(name, value string) []string { // fullHeaders with one replaced (value "": removed)
		var out []string
		for i := 0; i < len(fullHeaders); i += 2 {
			if strings.EqualFold(fullHeaders[i], name) {
				if value != "" {
					out = append(out, name, value)
				}
				continue
			}
			out = append(out, fullHeaders[i], fullHeaders[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		args    string
		headers []string
		refused string // "" when served
	}{
		{"all match", full, fullHeaders, ""},
		{"header names in any case", full, []string{"mcp-param-region", "us-west1", "MCP-PARAM-LIMIT", "42", "mcp-param-dry", "true", "Mcp-Param-Tenant", "=?base64?R3LDvMOfZQ==?="}, ""},
		{"base64 sentinel of a plain value", full, with("Mcp-Param-Region", "=?base64?dXMtd2VzdDE=?="), ""},
		{"integer compared as a number", full, with("Mcp-Param-Limit", "42.0"), ""},
		{"unannotated and disallowed annotations ignored", full, append(with("", ""), "Mcp-Param-Query", "DROP TABLE", "Mcp-Param-Ratio", "x", "Mcp-Param-Item", "y"), ""},
		{"null and absent values need no header", `{"region":"us-west1","limit":null}`, []string{"Mcp-Param-Region", "us-west1"}, ""},
		{"missing", full, with("Mcp-Param-Region", ""), "Mcp-Param-Region header missing"},
		{"nested missing", full, with("Mcp-Param-Tenant", ""), "Mcp-Param-Tenant header missing"},
		{"different", full, with("Mcp-Param-Region", "us-east1"), `Mcp-Param-Region header value \"us-east1\" does not match body value \"us-west1\"`},
		{"repeated", full, append(with("", ""), "Mcp-Param-Region", "us-west1"), "Mcp-Param-Region header repeated"},
		{"integer differs", full, with("Mcp-Param-Limit", "43"), "Mcp-Param-Limit header value"},
		{"integer not a number", full, with("Mcp-Param-Limit", "42abc"), "Mcp-Param-Limit header value"},
		{"boolean case", full, with("Mcp-Param-Dry", "TRUE"), "Mcp-Param-Dry header value"},
		{"raw non-ASCII", full, with("Mcp-Param-Tenant", "Grüße"), "Mcp-Param-Tenant header has invalid characters"},
		{"broken base64", full, with("Mcp-Param-Region", "=?base64?!!!?="), "invalid characters or encoding"},
		{"base64 of another value", full, with("Mcp-Param-Region", jsonrpc.EncodeMCPHeaderValue("us-east1 ")), "does not match"},
		{"header without a body value", `{"region":"us-west1"}`, []string{"Mcp-Param-Region", "us-west1", "Mcp-Param-Limit", "5"}, "Mcp-Param-Limit header present but the body has no value"},
		{"body value of another type", `{"region":5}`, []string{"Mcp-Param-Region", "5"}, "is not of type string"},
		{"fractional integer", `{"limit":4.5}`, []string{"Mcp-Param-Limit", "4.5"}, "is not of type integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran
			status, body := call(t, tc.args, tc.headers...)
			if tc.refused == "" {
				if status != 200 || body != `{"jsonrpc":"2.0","id":1,"result":"ok"}` || ran != before+1 {
					t.Fatalf("%d %s", status, body)
				}
				return
			}
			if status != 400 || !strings.Contains(body, `"code":-32020`) || !strings.Contains(body, tc.refused) || ran != before {
				t.Fatalf("%d %s (handler ran %d times)", status, body, ran-before)
			}
		})
	}
}

// TestMcpParamHeadersFromTheClient: an MCP client of 2026-07-28 learns
// the x-mcp-header annotations from tools/list and mirrors the arguments
// into Mcp-Param-* headers (encoded when needed), so the server's checks
// pass; before tools/list it sends none, and after the server's -32020
// it lists the tools and sends the call again.
func TestMcpParamHeadersFromTheClient(t *testing.T) {
	noLeaks(t)
	mux := jsonrpc.NewMux()
	var lists, calls atomic.Int32
	jsonrpc.Register(mux, "tools/list", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		lists.Add(1)
		return json.RawMessage(`{"tools":[{"name":"sql","inputSchema":` + clientSQLSchema + `},{"name":"plain","inputSchema":{"type":"object"}}]}`), nil
	})
	var seen http.Header
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, _ json.RawMessage) (string, error) {
		calls.Add(1)
		if p, ok := jsonrpc.PeerFromContext(ctx); ok {
			seen = p.Header.Clone()
		}
		return "ok", nil
	})
	ts := sqlServer(t, mux)
	ctx := context.Background()
	c, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"name": "sql", "arguments": map[string]any{"region": " padded ", "limit": 7, "dry": false, "opts": map[string]any{"tenant": "Grüße"}, "query": "SELECT 1"}}
	// Before any tools/list the client knows no annotation: the server
	// refuses the call (-32020), and the client lists the tools and sends
	// it again, with the headers.
	var got string
	if err := c.Call(ctx, "tools/call", args, &got); err != nil || got != "ok" || lists.Load() != 1 || calls.Load() != 1 {
		t.Fatalf("first call: %q %v (tools/list %d times, tools/call ran %d times)", got, err, lists.Load(), calls.Load())
	}
	if err := c.Call(ctx, "tools/call", args, &got); err != nil || got != "ok" || lists.Load() != 1 || calls.Load() != 2 {
		t.Fatalf("second call: %q %v (tools/list %d times)", got, err, lists.Load())
	}
	// A refusal that tools/list does not cure is the call's error.
	var e *jsonrpc.Error
	bad := map[string]any{"name": "sql", "arguments": map[string]any{"region": 5}}
	if err := c.Call(ctx, "tools/call", bad, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeHeaderMismatch || lists.Load() != 2 {
		t.Fatalf("uncurable: %v (tools/list %d times)", err, lists.Load())
	}
	want := map[string]string{"Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?=", "Mcp-Param-Limit": "7", "Mcp-Param-Dry": "false", "Mcp-Param-Tenant": "=?base64?R3LDvMOfZQ==?="}
	for k, v := range want {
		if seen.Get(k) != v {
			t.Errorf("%s: %q, want %q", k, seen.Get(k), v)
		}
	}
	for k := range seen {
		if strings.HasPrefix(k, "Mcp-Param-") && want[k] == "" {
			t.Errorf("unexpected header %s", k)
		}
	}
}

// TestMcpToolWithInvalidHeaderRejected: under 2026-07-28 the client must
// reject a tool definition with an x-mcp-header annotation the revision
// forbids: tools/list comes back without it, and a call of it fails before
// it is sent.
func TestMcpToolWithInvalidHeaderRejected(t *testing.T) {
	noLeaks(t)
	tools := map[string]string{
		"good":     `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
		"plain":    `{"type":"object"}`,
		"noted":    `{"type":"object","description":"x-mcp-header","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`,
		"inItems":  `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`,
		"onObject": `{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"O"}}}`,
		"twice":    `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Same"},"b":{"type":"string","x-mcp-header":"same"}}}`,
		"notToken": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`,
		"inAnyOf":  `{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
	}
	var list []string
	for name, schema := range tools {
		list = append(list, `{"name":"`+name+`","inputSchema":`+schema+`}`)
	}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "tools/list", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"tools":[` + strings.Join(list, ",") + `],"nextCursor":"c2"}`), nil
	})
	var calls atomic.Int32
	jsonrpc.Register(mux, "tools/call", func(context.Context, json.RawMessage) (string, error) {
		calls.Add(1)
		return "ok", nil
	})
	ts := sqlServer(t, mux)
	ctx := context.Background()
	c, err := jsonrpc.DialStreamableHTTP(ctx, ts.URL, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026), jsonrpc.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := c.Call(ctx, "tools/list", nil, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range got.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "good,noted,plain" || got.NextCursor != "c2" {
		t.Fatalf("tools/list kept %v (cursor %q), want good,noted,plain (c2)", names, got.NextCursor)
	}
	for _, name := range []string{"inItems", "onObject", "twice", "notToken", "inAnyOf"} {
		err := c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, nil)
		if !errors.Is(err, jsonrpc.ErrToolRejected) || !strings.Contains(err.Error(), name) {
			t.Errorf("call of %s: %v, want ErrToolRejected naming it", name, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("a rejected tool was called %d times", n)
	}
	if err := c.Call(ctx, "tools/call", map[string]any{"name": "good", "arguments": map[string]any{"r": "eu"}}, nil); err != nil || calls.Load() != 1 {
		t.Fatalf("call of good: %v", err)
	}
}
