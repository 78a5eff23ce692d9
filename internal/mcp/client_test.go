package mcp

import (
	"encoding/json"
	"errors"
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
