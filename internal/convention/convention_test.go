package convention

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The progress params each convention sends, and the cancels.
func TestRender(t *testing.T) {
	cases := []struct{ got, want string }{
		{string(AppendMCPProgress([]byte(`"t"`), 1.5, 10, "half \"way\"")), `{"progressToken":"t","progress":1.5,"total":10,"message":"half \"way\""}`},
		{string(AppendMCPProgress([]byte(`7`), 3, 0, "")), `{"progressToken":7,"progress":3}`},
		{string(AppendLSPProgress([]byte(`"w"`), 5, 20, "Indexing", true)), `{"token":"w","value":{"kind":"begin","title":"Indexing","percentage":25}}`},
		{string(AppendLSPProgress([]byte(`"w"`), 150, 0, "", false)), `{"token":"w","value":{"kind":"report","percentage":100}}`},
		{string(AppendLSPProgress([]byte(`"w"`), -1, 0, "m", false)), `{"token":"w","value":{"kind":"report","message":"m","percentage":0}}`},
		{string(LSPEnd([]byte(`1`))), `{"token":1,"value":{"kind":"end"}}`},
		{string(CancelParams(LSP, []byte(`"a"`), "ignored")), `{"id":"a"}`},
		{string(CancelParams(MCP, []byte(`3`), "context deadline exceeded")), `{"requestId":3,"reason":"context deadline exceeded"}`},
		{string(CancelParams(None, []byte(`3`), "")), ``},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
		if c.want != "" && !json.Valid([]byte(c.got)) {
			t.Errorf("not JSON: %s", c.got)
		}
	}
}

// The token a request carries, and the id a cancel names, by convention.
func TestFind(t *testing.T) {
	mcp := []byte(`{"workDoneToken":"no","_meta":{"progressToken":"p1"}}`)
	lsp := []byte(`{"_meta":{"progressToken":"no"},"workDoneToken":42}`)
	if got := string(TokenOf(mcp, MCP)); got != `"p1"` {
		t.Errorf("MCP token %s", got)
	}
	if got := string(TokenOf(lsp, LSP)); got != `42` {
		t.Errorf("LSP token %s", got)
	}
	if got := TokenOf([]byte(`{}`), MCP); got != nil {
		t.Errorf("no token: %s", got)
	}
	if got := string(CancelledID([]byte(`{"id":1,"requestId":2}`), LSP)); got != "1" {
		t.Errorf("LSP cancel id %s", got)
	}
	if got := string(CancelledID([]byte(`{"id":1,"requestId":"two"}`), MCP)); got != `"two"` {
		t.Errorf("MCP cancel id %s", got)
	}
}

// A received progress report, in each convention; none without a token.
func TestParseProgress(t *testing.T) {
	mcp := `{"progressToken":"t","progress":2,"total":4,"message":"m\u00e9"}`
	got, ok := ParseProgress([]byte(mcp), MCP)
	want := Report{Token: json.RawMessage(`"t"`), Progress: 2, Total: 4, Message: "mé", Params: json.RawMessage(mcp)}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("MCP: %+v %v", got, ok)
	}
	lsp := `{"token":9,"value":{"kind":"begin","title":"Build","percentage":30}}`
	got, ok = ParseProgress([]byte(lsp), LSP)
	want = Report{Token: json.RawMessage(`9`), Progress: 30, Total: 100, Message: "Build", Kind: "begin", Params: json.RawMessage(lsp)}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("LSP: %+v %v", got, ok)
	}
	if _, ok := ParseProgress([]byte(`{"progress":1}`), MCP); ok {
		t.Error("a report without a token was read")
	}
}
