package interop

import (
	"encoding/json"
	"testing"
)

// TestNodeClientsReadStreamedResult has npm clients that know nothing of
// streaming call "items" (a jsonrpc.Stream of about 1 MiB) and
// "items_slice" (the same elements in a slice) through
// node/stream_client.js, and checks that both results are the same array:
// json-rpc-2.0 over HTTP with Node's fetch (the streamed reply is chunked
// and gzipped), json-rpc-2.0 over stdio with newline framing (one message
// written in pieces) and vscode-jsonrpc over stdio with Content-Length
// framing (encoded whole, its length first).
func TestNodeClientsReadStreamedResult(t *testing.T) {
	requireNode(t, "json-rpc-2.0")
	requireNode(t, "vscode-jsonrpc")
	_, l := startServer(t, "http://127.0.0.1:0/rpc", nil)
	bin := buildStdioServer(t, testContext(t))
	for _, tc := range []struct {
		mode string
		args []string
	}{
		{"http", []string{l.URL}},
		{"stdio-line", []string{bin, "-framing", "line"}},
		{"stdio-lsp", []string{bin}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out := runNode(t, testContext(t), "stream_client.js", append([]string{tc.mode}, tc.args...)...)
			var got struct {
				Streamed         []Item          `json:"streamed"`
				Slice            []Item          `json:"slice"`
				After            json.RawMessage `json:"after"`
				ContentEncoding  *string         `json:"contentEncoding"`
				TransferEncoding *string         `json:"transferEncoding"`
			}
			decodeOutput(t, out, &got)
			if len(got.Streamed) != 5000 || len(got.Slice) != 5000 {
				t.Fatalf("%d streamed elements, %d in the slice; want 5000", len(got.Streamed), len(got.Slice))
			}
			for i := range got.Slice {
				if got.Streamed[i] != got.Slice[i] || got.Slice[i] != item(i) {
					t.Fatalf("element %d: streamed %+v, slice %+v, want %+v", i, got.Streamed[i], got.Slice[i], item(i))
				}
			}
			if string(got.After) != "3" {
				t.Fatalf("the call after the stream: %s", got.After)
			}
			if tc.mode == "http" {
				if got.ContentEncoding == nil || *got.ContentEncoding != "gzip" || got.TransferEncoding == nil || *got.TransferEncoding != "chunked" {
					t.Fatalf("the streamed reply's Content-Encoding %v, Transfer-Encoding %v; want gzip, chunked", deref(got.ContentEncoding), deref(got.TransferEncoding))
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
