package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRequestState(t *testing.T) {
	oldKey, newKey := []byte("0123456789abcdef-old"), []byte("0123456789abcdef-new")
	now := time.Unix(1_800_000_000, 0)
	answers := map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)}
	bound := Binding("tools/call", "Bearer a", "deploy", []byte(`{"env":"prod"}`))
	state, err := SealState([][]byte{oldKey}, answers, bound, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// Verified by any key of the list (rotation), with its answers.
	got, err := OpenState([][]byte{newKey, oldKey}, state, bound, now)
	if err != nil || string(got["confirm"]) != `{"action":"accept"}` {
		t.Fatalf("OpenState = %v, %v", got, err)
	}
	enc, sig, _ := strings.Cut(state, ".")
	changed := "A" + enc[1:]
	if enc[0] == 'A' {
		changed = "B" + enc[1:]
	}
	refused := map[string]struct {
		keys    [][]byte
		state   string
		binding string
		at      time.Time
		want    error
	}{
		"unknown key":     {[][]byte{newKey}, state, bound, now, ErrStateInvalid},
		"another subject": {[][]byte{oldKey}, state, Binding("tools/call", "Bearer b", "deploy", []byte(`{"env":"prod"}`)), now, ErrStateInvalid},
		"other arguments": {[][]byte{oldKey}, state, Binding("tools/call", "Bearer a", "deploy", []byte(`{"env":"dev"}`)), now, ErrStateInvalid},
		"body changed":    {[][]byte{oldKey}, changed + "." + sig, bound, now, ErrStateInvalid},
		"no signature":    {[][]byte{oldKey}, enc, bound, now, ErrStateInvalid},
		"expired":         {[][]byte{oldKey}, state, bound, now.Add(time.Minute), ErrStateExpired},
	}
	for name, c := range refused {
		if _, err := OpenState(c.keys, c.state, c.binding, c.at); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := SealState([][]byte{[]byte("short")}, answers, bound, now); !errors.Is(err, ErrStateKey) {
		t.Errorf("a 5-byte key: %v, want ErrStateKey", err)
	}
}

func TestBindingSeparatesFields(t *testing.T) {
	// The fields are separated: moving bytes from one to the next changes
	// the binding.
	if Binding("ab", "c", "", nil) == Binding("a", "bc", "", nil) {
		t.Fatal("method and subject are not separated")
	}
	if Binding("m", "", "x", []byte("y")) == Binding("m", "", "xy", nil) {
		t.Fatal("target and arguments are not separated")
	}
}

func TestAnswers(t *testing.T) {
	keys := [][]byte{[]byte("0123456789abcdef-key")}
	now := time.Unix(1_800_000_000, 0)
	bound := Binding("tools/call", "", "deploy", nil)
	kept := map[string]json.RawMessage{"a": json.RawMessage(`1`), "b": json.RawMessage(`2`)}
	state, err := SealState(keys, kept, bound, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The inputResponses go over the state's answers.
	got, e := Answers(keys, state, bound, now, map[string]json.RawMessage{"b": json.RawMessage(`3`), "c": json.RawMessage(`4`)})
	if e != nil || len(got) != 3 || string(got["a"]) != "1" || string(got["b"]) != "3" || string(got["c"]) != "4" {
		t.Fatalf("Answers = %s, %v", got, e)
	}
	if got, e := Answers(keys, "", bound, now, nil); e != nil || len(got) != 0 {
		t.Fatalf("no state, no responses: %s, %v", got, e)
	}
	for name, c := range map[string]struct {
		binding string
		now     time.Time
		why     error
	}{
		"another request": {Binding("tools/call", "", "other", nil), now, ErrStateInvalid},
		"expired":         {bound, now.Add(time.Hour), ErrStateExpired},
	} {
		_, e := Answers(keys, state, c.binding, c.now, nil)
		if e == nil || e.Code != CodeInvalidParams || !strings.Contains(e.Message, c.why.Error()) {
			t.Errorf("%s: %v, want -32602 naming %v", name, e, c.why)
		}
	}
	if _, err := SealState(nil, kept, bound, now); !errors.Is(err, ErrStateKey) {
		t.Fatalf("SealState without keys: %v", err)
	}
}

func TestMissingCapability(t *testing.T) {
	has := func(c string) bool { return c == "sampling" }
	if e := MissingCapability("sampling/createMessage", has); e != nil {
		t.Fatalf("declared capability refused: %v", e)
	}
	if e := MissingCapability("tools/call", has); e != nil {
		t.Fatalf("a request needing no capability refused: %v", e)
	}
	e := MissingCapability("elicitation/create", has)
	if e == nil || e.Code != CodeMissingClientCapability || string(e.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Fatalf("missing elicitation: %+v (data %s)", e, e.Data)
	}
}
