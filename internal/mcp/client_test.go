package mcp

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestRounds(t *testing.T) {
	ask := json.RawMessage(`{"resultType":"input_required","inputRequests":{"ok":{"method":"elicitation/create","params":{"message":"sure?"}}},"requestState":"s1"}`)
	var sent []string
	call := func(asks int) func(json.RawMessage) (json.RawMessage, error) {
		return func(p json.RawMessage) (json.RawMessage, error) {
			sent = append(sent, string(p))
			if len(sent) <= asks {
				return ask, nil
			}
			return json.RawMessage(`{"content":[]}`), nil
		}
	}
	answer := func(method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "elicitation/create" || string(params) != `{"message":"sure?"}` {
			t.Fatalf("asked %s %s", method, params)
		}
		return json.RawMessage(`{"action":"accept"}`), nil
	}
	raw, err := Rounds("tools/call", json.RawMessage(`{"name":"x"}`), 8, call(1), answer)
	if err != nil || string(raw) != `{"content":[]}` {
		t.Fatalf("Rounds = %s, %v", raw, err)
	}
	if len(sent) != 2 || sent[1] != `{"inputResponses":{"ok":{"action":"accept"}},"name":"x","requestState":"s1"}` {
		t.Fatalf("sent %q", sent)
	}
	sent = nil
	if _, err := Rounds("tools/call", json.RawMessage(`{}`), 2, call(10), answer); !errors.Is(err, ErrTooManyInputRounds) || len(sent) != 3 {
		t.Fatalf("past the rounds: %v after %d calls", err, len(sent))
	}
	sent = nil
	refuse := func(string, json.RawMessage) (json.RawMessage, error) { return nil, errors.New("no handler") }
	if _, err := Rounds("tools/call", json.RawMessage(`{}`), 2, call(1), refuse); err == nil || !strings.Contains(err.Error(), `input "ok" of tools/call`) {
		t.Fatalf("an answer that fails: %v", err)
	}
}

func TestEraOfDiscover(t *testing.T) {
	failed := errors.New("the call's error")
	for _, c := range []struct {
		name      string
		supported []string
		err       error
		reached   bool
		rpcErr    *Error
		era       Era
		version   string
		fails     bool
	}{
		{"a result naming no revision", nil, nil, false, nil, EraStateless, Version2026, false},
		{"a result naming 2026", []string{Version2025, Version2026}, nil, false, nil, EraStateless, Version2026, false},
		{"a result naming 2025 only", []string{Version2025}, nil, false, nil, EraSession, Version2025, false},
		{"not reached", nil, failed, false, nil, EraUnknown, "", true},
		{"unsupported, naming 2025", nil, failed, true, &Error{Code: CodeUnsupportedProtocolVersion, Data: json.RawMessage(`{"supported":["2025-06-18"],"more":1}`)}, EraSession, Version2025, false},
		{"unsupported, naming none known", nil, failed, true, &Error{Code: CodeUnsupportedProtocolVersion, Data: json.RawMessage(`{"supported":["2030-01-01"]}`)}, EraUnknown, "", true},
		{"header mismatch", nil, failed, true, &Error{Code: CodeHeaderMismatch}, EraUnknown, "", true},
		{"method not found", nil, failed, true, &Error{Code: CodeMethodNotFound}, EraSession, Version2025, false},
		{"an HTTP status", nil, failed, true, nil, EraSession, Version2025, false},
	} {
		era, version, err := EraOfDiscover(c.supported, c.err, c.reached, c.rpcErr)
		if era != c.era || version != c.version || (err != nil) != c.fails || c.fails && c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: %v %q %v; want %v %q, fails %v", c.name, era, version, err, c.era, c.version, c.fails)
		}
	}
}

func TestClientHeaders(t *testing.T) {
	cs, err := NewClientState("c", "1", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	call := []byte(`{"name":"w\u00e9ather","arguments":{"region":"eu"}}`)
	first := cs.Headers(nil, Version2026, "tools/call", call)
	want := http.Header{VersionHeader: {Version2026}, MethodHeader: {"tools/call"}, NameHeader: {EncodeHeaderValue("wéather")}}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("Headers = %v, want %v", first, want)
	}
	caller := http.Header{"X-Trace": {"t1"}, MethodHeader: {"stale"}}
	if got := cs.Headers(caller, Version2026, "tools/call", call); got.Get("X-Trace") != "t1" || got.Get(MethodHeader) != "tools/call" || got.Get(NameHeader) != want.Get(NameHeader) {
		t.Fatalf("with the caller's headers: %v", got)
	}
	if !reflect.DeepEqual(cs.Headers(nil, Version2026, "tools/call", call), want) || len(caller) != 2 {
		t.Fatalf("the caller's headers leaked into the shared ones, or were changed: %v", caller)
	}
	if got := cs.Headers(nil, Version2026, "resources/read", []byte(`{"uri":"file:///a","name":"n"}`)); got.Get(NameHeader) != "file:///a" {
		t.Fatalf("resources/read: %v", got)
	}
	// tools/list teaches an annotation: the next call carries its header.
	cs.LearnTools([]byte(`{"tools":[{"name":"wéather","inputSchema":{"properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}`))
	if got := cs.Headers(nil, Version2026, "tools/call", call); got.Get(ParamPrefix+"Region") != "eu" {
		t.Fatalf("after tools/list: %v", got)
	}
	p, err := cs.WithMeta(nil, map[string]int{"a": 1}, Version2026)
	if err != nil || !strings.HasPrefix(string(p), `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}`) || !strings.HasSuffix(string(p), `},"a":1}`) || !json.Valid(p) {
		t.Fatalf("WithMeta = %s, %v", p, err)
	}
	if p, err := cs.WithMeta(nil, nil, Version2026); err != nil || !json.Valid(p) || strings.Count(string(p), "_meta") != 1 {
		t.Fatalf("WithMeta(nil) = %s, %v", p, err)
	}
	if _, err := cs.WithMeta(nil, []int{1}, Version2026); err == nil {
		t.Fatal("WithMeta of an array: no error")
	}
}
