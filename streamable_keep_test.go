package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// A handler may keep its request's context past the POST's answer (an MCP
// task does): what the context says of the request (its _meta) stays
// true while later POSTs come and go, whether the client takes JSON or
// event streams.
func TestStreamableContextOutlivesPOST(t *testing.T) {
	for _, accept := range []string{"application/json", "application/json, text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			type kept struct {
				ctx  context.Context
				want string
			}
			keep := make(chan kept, 8)
			mux := jsonrpc.NewMux()
			jsonrpc.Register(mux, "tools/call", func(ctx context.Context, p struct {
				Name string          `json:"name"`
				Meta json.RawMessage `json:"_meta,omitzero"`
			}) (string, error) {
				if p.Name == "keep" {
					keep <- kept{ctx, string(p.Meta)}
				}
				return p.Name, nil
			})
			srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
			ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
				StatelessVersions: []string{jsonrpc.MCPVersion2026},
			}))
			defer ts.Close()
			call := func(name, level string) {
				meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"` + level + `"}`
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","_meta":` + meta + `}}`
				h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name, "Accept": accept}
				resp, got := post2026(t, ts.URL, body, h)
				if resp.StatusCode != 200 || !strings.Contains(got, `"result":"`+name+`"`) {
					t.Fatalf("%s: %d %s", name, resp.StatusCode, got)
				}
			}
			call("keep", "warning")
			k := <-keep
			for i := range 50 {
				call(fmt.Sprintf("other%d", i), strings.Repeat("e", i%7+1))
			}
			m := jsonrpc.MCPMetaFromContext(k.ctx)
			if m == nil || m.LogLevel != "warning" || m.ProtocolVersion != "2026-07-28" || string(m.Raw) != k.want || string(m.ClientCapabilities) != "{}" {
				t.Fatalf("the kept context's _meta changed: %+v, want %s", m, k.want)
			}
		})
	}
}
