package bench

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seedhq/jsonrpc"
)

// MCP's path: a tools/call over Streamable HTTP, stateless, answered by
// ours (StreamableHTTPHandler; "ours2026": under MCP's stateless revision
// 2026-07-28, called by our MCP client of that revision, WithMCPVersion, which
// puts its headers and _meta on every request; "ours2025": the session era,
// our MCP client of 2025-11-25 after initialize, with its session's and
// revision's headers on every request) and by the official MCP Go SDK's server
// (peer "mcpsdk", Stateless), both driven by our Streamable HTTP client;
// "http" is our plain HTTP JSON-RPC (the Server as an http.Handler, an
// HTTPClient) on the same handler, the limit ours should stay within 1.5× of.

// toolText returns the text of the tool's result: "hello", or n bytes of
// JSON as a tool returns it, inside a string: Ethereum-like log records
// whose hashes and data are pseudo-random hex (as incompressible as real
// ones), the rest repeated field names and addresses.
func toolText(n int) string {
	if n == 0 {
		return "hello"
	}
	rng := rand.New(rand.NewPCG(1, 2))
	hex := func(sb *strings.Builder, bytes int) {
		const digits = "0123456789abcdef"
		for range bytes * 2 {
			sb.WriteByte(digits[rng.IntN(16)])
		}
	}
	addresses := []string{"0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", "0xdac17f958d2ee523a2206206994597c13d831ec7", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"}
	var sb strings.Builder
	sb.WriteByte('[')
	for i := 0; sb.Len() < n-600; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"address":"` + addresses[i%3] + `","topics":["0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef","0x000000000000000000000000`)
		hex(&sb, 20)
		sb.WriteString(`"],"data":"0x`)
		hex(&sb, 32)
		sb.WriteString(`","blockNumber":"0x` + strconv.FormatInt(int64(19000000+i/8), 16) + `","transactionHash":"0x`)
		hex(&sb, 32)
		sb.WriteString(`","logIndex":"0x` + strconv.FormatInt(int64(i%200), 16) + `","removed":false}`)
	}
	sb.WriteByte(']')
	return sb.String()
}

type toolContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content []toolContent `json:"content"`
}

type toolParams struct {
	Name      string          `json:"name"`
	Arguments map[string]any  `json:"arguments,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitzero"` // as the mcp package's tools/call params
}

// oursToolServer serves tools/call with a typed handler.
func oursToolServer(text string) *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	result := toolResult{Content: []toolContent{{Type: "text", Text: text}}}
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, p toolParams) (toolResult, error) {
		if p.Name != "echo" {
			return toolResult{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no tool " + p.Name}
		}
		return result, nil
	})
	// Uncompressed, as the SDK's replies are: on loopback gzip only costs
	// (compression is measured on its own, BenchmarkCompression).
	return &jsonrpc.Server{Handler: mux, HTTPCompressMinSize: -1}
}

func sdkToolHandler(text string) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "returns a text"}, func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
}

// mcpImpls are the servers of the MCP scenarios, in this pass's order.
func mcpImpls() []string {
	names := []string{"ours", "ours2025", "ours2026", "mcpsdk", "http"}
	if *reverse {
		slices.Reverse(names)
	}
	return names
}

// startMCP serves the implementation on a loopback HTTP server and returns
// a client of ours for it.
func startMCP(tb testing.TB, name, text string) jsonrpc.Client {
	tb.Helper()
	var h http.Handler
	var srv *jsonrpc.Server
	switch name {
	case "ours":
		srv = oursToolServer(text)
		h = srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{})
	case "ours2025":
		srv = oursToolServer(text)
		mux := srv.Handler.(*jsonrpc.Mux)
		jsonrpc.Register(mux, "initialize", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"protocolVersion":"` + jsonrpc.MCPVersion2025 + `","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1.0.0"}}`), nil
		})
		jsonrpc.Register(mux, "notifications/initialized", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
		h = srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: true})
	case "ours2026":
		srv = oursToolServer(text)
		h = srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{jsonrpc.MCPVersion2026}})
	case "http":
		srv = oursToolServer(text)
		h = srv
	default:
		h = sdkToolHandler(text)
	}
	ts := httptest.NewServer(h)
	hc := HTTPClient()
	var c jsonrpc.Client
	var err error
	switch name {
	case "http":
		c = jsonrpc.NewHTTPClient(ts.URL, jsonrpc.WithHTTPClient(hc))
	case "ours2025", "ours2026":
		// Our MCP client of the revision: its headers (and, in 2026, _meta) on every request.
		c, err = jsonrpc.DialStreamableHTTP(context.Background(), ts.URL, jsonrpc.WithHTTPClient(hc), jsonrpc.WithMCPVersion(mcpVersions[name]))
	default:
		c, err = jsonrpc.DialStreamableHTTP(context.Background(), ts.URL, jsonrpc.WithHTTPClient(hc))
	}
	if err != nil {
		ts.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		c.Close()
		hc.CloseIdleConnections()
		ts.CloseClientConnections()
		ts.Close()
		if srv != nil {
			shutdown(srv)
		}
	})
	return c
}

// mcpVersions are the revisions our MCP clients of the scenarios speak.
var mcpVersions = map[string]string{"ours2025": jsonrpc.MCPVersion2025, "ours2026": jsonrpc.MCPVersion2026}

// callTool calls the tool and checks its result.
func callTool(ctx context.Context, c jsonrpc.Client, want int) error {
	var res toolResult
	if err := c.Call(ctx, "tools/call", toolParams{Name: "echo", Arguments: map[string]any{}}, &res); err != nil {
		return err
	}
	if len(res.Content) != 1 || len(res.Content[0].Text) != want {
		return errBadEcho
	}
	return nil
}

var errBadEcho = &jsonrpc.Error{Code: -1, Message: "bench: the tool's result is not the text it returns"}

// runMCP makes b.N tools/call calls from workers goroutines.
func runMCP(b *testing.B, size, workers int) {
	text := toolText(size)
	for _, name := range mcpImpls() {
		b.Run(name, func(b *testing.B) {
			c := startMCP(b, name, text)
			ctx := context.Background()
			if err := callTool(ctx, c, len(text)); err != nil {
				b.Fatalf("warm-up call: %v", err)
			}
			var next atomic.Int64
			var firstErr atomic.Pointer[error]
			n := int64(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for next.Add(1) <= n {
						if err := callTool(ctx, c, len(text)); err != nil {
							firstErr.CompareAndSwap(nil, &err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if p := firstErr.Load(); p != nil {
				b.Fatal(*p)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkMCPSeq: tools/call over Streamable HTTP, a small result, one call at a time.
func BenchmarkMCPSeq(b *testing.B) { runMCP(b, 0, 1) }

// BenchmarkMCPPar8: the same, 8 workers.
func BenchmarkMCPPar8(b *testing.B) { runMCP(b, 0, 8) }

// BenchmarkMCPPar64: the same, 64 workers.
func BenchmarkMCPPar64(b *testing.B) { runMCP(b, 0, 64) }

// BenchmarkMCP100KiBSeq: a tools/call whose result's text is 100 KiB of JSON, one at a time.
func BenchmarkMCP100KiBSeq(b *testing.B) { runMCP(b, 100<<10, 1) }

// BenchmarkMCP100KiBPar8: the same, 8 workers.
func BenchmarkMCP100KiBPar8(b *testing.B) { runMCP(b, 100<<10, 8) }

// TestMCPTools checks every MCP server of the benchmarks before anything
// is timed: the small and the large result, one and 8 callers.
func TestMCPTools(t *testing.T) {
	for _, size := range []int{0, 100 << 10} {
		text := toolText(size)
		if size > 0 && (!json.Valid([]byte(text)) || len(text) < size-600) {
			t.Fatalf("the %d-byte text is %d bytes of JSON: %v", size, len(text), json.Valid([]byte(text)))
		}
		for _, name := range mcpImpls() {
			c := startMCP(t, name, text)
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					if err := callTool(t.Context(), c, len(text)); err != nil {
						t.Errorf("%s, %d bytes: %v", name, size, err)
					}
				})
			}
			wg.Wait()
			if v := mcpVersions[name]; v != "" && c.(*jsonrpc.Conn).MCPVersion() != v {
				t.Errorf("%s: the client speaks MCP %q, not %s", name, c.(*jsonrpc.Conn).MCPVersion(), v)
			}
		}
	}
}
