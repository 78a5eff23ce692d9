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
	state, err := SealState(oldKey, answers, bound, now.Add(time.Minute))
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
	if _, err := SealState([]byte("short"), answers, bound, now); !errors.Is(err, ErrStateKey) {
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
