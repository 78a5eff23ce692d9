package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

func TestStatelessServes(t *testing.T) {
	both := &Stateless{Versions: []string{Version2026}, SessionVersions: []string{Version2025}}
	onlyStateless := &Stateless{Versions: []string{Version2026}}
	none := &Stateless{SessionVersions: []string{Version2025}}
	for _, c := range []struct {
		s       *Stateless
		version string
		want    bool
	}{
		{both, Version2026, true},
		{both, Version2025, false},
		{both, "", false},
		{both, "1999-01-01", true}, // spoken by neither: a JSON-RPC error from the stateless path
		{onlyStateless, "1999-01-01", false},
		{onlyStateless, Version2026, true},
		{none, Version2026, false},
	} {
		if got := c.s.Serves(c.version); got != c.want {
			t.Errorf("%v/%v Serves(%q) = %v, want %v", c.s.Versions, c.s.SessionVersions, c.version, got, c.want)
		}
	}
}

func TestStatelessCheck(t *testing.T) {
	s := &Stateless{Versions: []string{Version2026}, SessionVersions: []string{Version2025},
		ToolInputSchema: func(string) json.RawMessage {
			return json.RawMessage(`{"properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
		}}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	headers := func(kv ...string) http.Header {
		h := http.Header{VersionHeader: {Version2026}, MethodHeader: {"tools/call"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	call := `{` + meta + `,"name":"deploy","arguments":{"region":"eu"}}`
	m, e := s.Check(headers(NameHeader, "deploy", "Mcp-Param-Region", "eu"), "tools/call", []byte(call), false, true)
	if e != nil || m.ProtocolVersion != Version2026 || m.Target != "deploy" || string(m.Arguments) != `{"region":"eu"}` {
		t.Fatalf("a matching call: %+v, %v", m, e)
	}
	for name, c := range map[string]struct {
		h      http.Header
		method string
		params string
		code   int64
	}{
		"Mcp-Name differs":     {headers(NameHeader, "other", "Mcp-Param-Region", "eu"), "tools/call", call, CodeHeaderMismatch},
		"Mcp-Param missing":    {headers(NameHeader, "deploy"), "tools/call", call, CodeHeaderMismatch},
		"Mcp-Param differs":    {headers(NameHeader, "deploy", "Mcp-Param-Region", "us"), "tools/call", call, CodeHeaderMismatch},
		"no _meta":             {headers(NameHeader, "deploy", "Mcp-Param-Region", "eu"), "tools/call", `{"name":"deploy","arguments":{"region":"eu"}}`, CodeInvalidParams},
		"session-era method":   {headers(), "initialize", `{}`, CodeMethodNotFound},
		"unknown revision":     {http.Header{VersionHeader: {"1999-01-01"}}, "tools/list", `{}`, CodeUnsupportedProtocolVersion},
		"params not an object": {headers(), "tools/call", `[1]`, CodeInvalidParams},
	} {
		if _, e := s.Check(c.h, c.method, []byte(c.params), false, true); e == nil || e.Code != c.code {
			t.Errorf("%s: %v, want code %d", name, e, c.code)
		}
	}
	// A notification without _meta needs only a known revision.
	if m, e := s.Check(http.Header{VersionHeader: {Version2026}}, "notifications/cancelled", []byte(`{"requestId":1}`), true, true); m.ProtocolVersion != "" || e != nil {
		t.Errorf("a notification without _meta: %v, %v", m, e)
	}
}

func TestUnsupportedVersionData(t *testing.T) {
	e := UnsupportedVersion("1999-01-01", []string{Version2026}, []string{Version2025})
	if e.Code != CodeUnsupportedProtocolVersion || string(e.Data) != `{"supported":["2026-07-28","2025-11-25"],"requested":"1999-01-01"}` {
		t.Fatalf("%d %s", e.Code, e.Data)
	}
	if HTTPStatus(e.Code) != http.StatusBadRequest || HTTPStatus(CodeMethodNotFound) != http.StatusNotFound || HTTPStatus(-32603) != 0 {
		t.Fatal("HTTPStatus")
	}
}

// ParseParams reads the members it needs by type, as a decoder would
// (a string, an object, or null), and RequestMeta copies what it keeps.
func TestParseParams(t *testing.T) {
	for params, ok := range map[string]bool{
		``: true, `{}`: true, `[1]`: false, `{"name":null,"_meta":null}`: true,
		`{"name":5}`: false, `{"uri":{}}`: false, `{"taskId":true}`: false, `{"requestState":1}`: false,
		`{"_meta":[]}`: false, `{"inputResponses":"x"}`: false, `{"inputResponses":{"a":{"x":1}}}`: true,
		`{"other":[1,{"name":5}],"name":"a"}`: true,
	} {
		if _, got := ParseParams([]byte(params)); got != ok {
			t.Errorf("ParseParams(%s): ok %v, want %v", params, got, ok)
		}
	}
	body := []byte(`{"name":"t\u00e9","arguments":{ "a" : 1 },"requestState":"s","inputResponses":{"q":{}},` +
		`"_meta":{ "io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{ },` +
		`"io.modelcontextprotocol/logLevel":"info","progressToken":7}}`)
	p, ok := ParseParams(body)
	if !ok || p.Name != "té" || p.RequestState != "s" || string(p.InputResponses["q"]) != `{}` {
		t.Fatalf("ParseParams: %+v, %v", p, ok)
	}
	m, present := p.RequestMeta("tools/call", true) // not compact: copied all the same
	want := `{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info","progressToken":7}`
	if !present || m.ProtocolVersion != Version2026 || m.LogLevel != "info" || string(m.ClientCapabilities) != `{}` ||
		string(m.Raw) != want || string(m.Arguments) != `{"a":1}` || m.Target != "té" || m.Method != "tools/call" {
		t.Fatalf("RequestMeta: %+v, %v", m, present)
	}
	for i := range body {
		body[i] = 'x' // what m keeps is its own
	}
	if string(m.Raw) != want || string(m.ClientCapabilities) != `{}` || string(m.Arguments) != `{"a":1}` {
		t.Fatalf("RequestMeta aliases the params: %s", m.Raw)
	}
	compact := []byte(`{"name":"t","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	p, _ = ParseParams(compact)
	if m, _ := p.RequestMeta("tools/call", true); &m.Arguments[0] != &compact[bytes.Index(compact, []byte(`{"a"`))] || &m.Raw[0] != &compact[bytes.LastIndexByte(compact[:len(compact)-1], '{')] {
		t.Fatalf("RequestMeta copies compact params it may alias: %s %s", m.Raw, m.Arguments)
	}
	p, _ = ParseParams(compact)
	m, _ = p.RequestMeta("tools/call", false)
	for i := range compact {
		compact[i] = 'x' // what m keeps is its own
	}
	if m.Target != "t" || string(m.Arguments) != `{"a":1}` || m.ProtocolVersion != Version2026 {
		t.Fatalf("RequestMeta without alias keeps the params' memory: %+v", m)
	}
	if _, present := (&Params{Meta: []byte(`{"progressToken":1}`)}).RequestMeta("x", false); present {
		t.Fatal("a _meta without a protocol version is present")
	}
}

func TestMethodString(t *testing.T) {
	name := []byte("tools/call")
	if n := testing.AllocsPerRun(100, func() { _ = MethodString(name) }); n != 0 || MethodString(name) != "tools/call" {
		t.Errorf("tools/call: %v allocations", n)
	}
	if got := MethodString([]byte("x/y")); got != "x/y" {
		t.Errorf("x/y: %q", got)
	}
}

func TestHasCapability(t *testing.T) {
	for caps, want := range map[string]bool{
		`{"elicitation":{}}`: true, `{ "sampling" : 1, "elicitation" : { "form" : {} } }`: true, `{"elicit\u0061tion":{}}`: true,
		`{"elicitation":true}`: false, `{"elicitation":null}`: false, `{"roots":{"elicitation":{}}}`: false, `{}`: false, ``: false,
	} {
		if got := HasCapability([]byte(caps), "elicitation"); got != want {
			t.Errorf("HasCapability(%s) = %v, want %v", caps, got, want)
		}
	}
}
