package jsonrpc_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// A stateless answer that is a single error gets the HTTP status its error
// asks (404 for an unknown method) when it is gzipped too, whether the
// client takes an event stream or not.
func TestStatelessErrorStatusGzipped(t *testing.T) {
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux(), Convention: jsonrpc.ConventionMCP, HTTPCompressMinSize: 1}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{StatelessVersions: []string{"2026-07-28"}}))
	defer ts.Close()
	for _, accept := range []string{"application/json", "application/json, text/event-stream"} {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"nope","params":{`+meta2026+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "nope")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("Accept %q: status %d, Content-Encoding %q: %v", accept, resp.StatusCode, resp.Header.Get("Content-Encoding"), err)
		}
		body, _ := io.ReadAll(zr)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "-32601") {
			t.Errorf("Accept %q: status %d, body %s; want 404 with -32601", accept, resp.StatusCode, body)
		}
	}
}
