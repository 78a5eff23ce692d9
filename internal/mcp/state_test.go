package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

func TestRequestState(t *testing.T) {
	oldKey, newKey := []byte("0123456789abcdef-old"), []byte("0123456789abcdef-new")
	now := time.Unix(1_800_000_000, 0)
	answers := map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept"}`)}
	bound := Binding("tools/call", "Bearer a", "deploy", []byte(`{"env":"prod"}`))
	state, err := sealState([][]byte{oldKey}, answers, bound, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// Verified by any key of the list (rotation), with its answers.
	got, err := openState([][]byte{newKey, oldKey}, state, bound, now)
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
		if _, err := openState(c.keys, c.state, c.binding, c.at); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := sealState([][]byte{[]byte("short")}, answers, bound, now); !errors.Is(err, ErrStateKey) {
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
	state, err := sealState(keys, kept, bound, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	// The inputResponses go over the state's answers.
	got, e := Answers(t.Context(), &StateKeys{Static: keys}, state, bound, now, map[string]json.RawMessage{"b": json.RawMessage(`3`), "c": json.RawMessage(`4`)})
	if e != nil || len(got) != 3 || string(got["a"]) != "1" || string(got["b"]) != "3" || string(got["c"]) != "4" {
		t.Fatalf("Answers = %s, %v", got, e)
	}
	if got, e := Answers(t.Context(), &StateKeys{Static: keys}, "", bound, now, nil); e != nil || len(got) != 0 {
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
		_, err := Answers(t.Context(), &StateKeys{Static: keys}, state, c.binding, c.now, nil)
		if e, ok := err.(*Error); !ok || e.Code != CodeInvalidParams || !strings.Contains(e.Message, c.why.Error()) {
			t.Errorf("%s: %v, want -32602 naming %v", name, err, c.why)
		}
	}
	if _, err := sealState(nil, kept, bound, now); !errors.Is(err, ErrStateKey) {
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

// countingRing is a memory ring that counts its reads and fails them
// with err when err is set.
type countingRing struct {
	*state.MemoryKeyRing
	reads int
	err   error
}

func (r *countingRing) Keys(ctx context.Context) ([]state.Key, error) {
	r.reads++
	if r.err != nil {
		return nil, r.err
	}
	return r.MemoryKeyRing.Keys(ctx)
}

func TestRequestStateKeyRing(t *testing.T) {
	ctx := t.Context()
	now := time.Unix(1_800_000_000, 0)
	answers := map[string]json.RawMessage{"q": json.RawMessage(`1`)}
	bound := Binding("tools/call", "", "greet", nil)
	k1 := state.Key{ID: "k1", Secret: []byte("0123456789abcdef-one")}
	k2 := state.Key{ID: "k2", Secret: []byte("0123456789abcdef-two")}
	mem, err := state.NewMemoryKeyRing(3, k1)
	if err != nil {
		t.Fatal(err)
	}
	ring := &countingRing{MemoryKeyRing: mem}
	keys := func() *StateKeys { return &StateKeys{Ring: ring} }
	s1, err := keys().Seal(ctx, answers, bound, now.Add(time.Minute))
	if err != nil || strings.Count(s1, ".") != 2 || !strings.HasPrefix(s1, base64.RawURLEncoding.EncodeToString([]byte("k1"))+".") {
		t.Fatalf("Seal with a ring = %q, %v: want KID.PAYLOAD.MAC naming k1", s1, err)
	}
	// One read of the ring serves a request's verification and sealing.
	ring.reads = 0
	k := keys()
	if got, err := k.Open(ctx, s1, bound, now); err != nil || string(got["q"]) != "1" {
		t.Fatalf("Open = %s, %v", got, err)
	}
	if _, err := k.Seal(ctx, answers, bound, now); err != nil || ring.reads != 1 {
		t.Fatalf("Open then Seal: %v, %d reads of the ring, want 1", err, ring.reads)
	}
	// After a rotation the new key signs, and the old one still verifies
	// until it is removed.
	if err := ring.Rotate(ctx, k2); err != nil {
		t.Fatal(err)
	}
	s2, err := keys().Seal(ctx, answers, bound, now.Add(time.Minute))
	if err != nil || !strings.HasPrefix(s2, base64.RawURLEncoding.EncodeToString([]byte("k2"))+".") {
		t.Fatalf("Seal after rotation = %q, %v", s2, err)
	}
	if _, err := keys().Open(ctx, s1, bound, now); err != nil {
		t.Fatalf("state of the previous key: %v", err)
	}
	if err := ring.Remove(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(s2, ".")
	v1, err := sealState([][]byte{k2.Secret}, answers, bound, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		keys  *StateKeys
		state string
	}{
		"removed key":                 {keys(), s1},
		"another id of the ring":      {keys(), base64.RawURLEncoding.EncodeToString([]byte("k1")) + "." + rest},
		"id dropped (v2 as v1)":       {&StateKeys{Static: [][]byte{k2.Secret}, Ring: ring}, rest},
		"v2 without a ring":           {&StateKeys{Static: [][]byte{k2.Secret}}, s2},
		"id not base64":               {keys(), "k2!." + rest},
		"one dot too many":            {keys(), "a." + s2},
		"v1 by a key of neither list": {&StateKeys{Static: [][]byte{k1.Secret}}, v1},
	} {
		if _, err := c.keys.Open(ctx, c.state, bound, now); !errors.Is(err, ErrStateInvalid) {
			t.Errorf("%s: %v, want ErrStateInvalid", name, err)
		}
	}
	// A v1 state (static keys) verifies by the ring's keys, and by Keys
	// beside a ring; a v2 one by the ring beside Keys.
	for name, k := range map[string]*StateKeys{"ring": keys(), "static beside": {Static: [][]byte{k2.Secret}, Ring: ring}} {
		if _, err := k.Open(ctx, v1, bound, now); err != nil {
			t.Errorf("v1 state, %s: %v", name, err)
		}
	}
	if _, err := (&StateKeys{Static: [][]byte{k1.Secret}, Ring: ring}).Open(ctx, s2, bound, now); err != nil {
		t.Errorf("v2 state beside Keys: %v", err)
	}
	// A ring that fails gives its error (not a forged state's); an empty
	// one cannot sign.
	down := errors.New("ring down")
	ring.err = down
	if _, err := keys().Open(ctx, s2, bound, now); !errors.Is(err, down) || errors.Is(err, ErrStateInvalid) {
		t.Fatalf("Open with a failing ring: %v", err)
	}
	if _, err := keys().Seal(ctx, answers, bound, now); !errors.Is(err, down) {
		t.Fatalf("Seal with a failing ring: %v", err)
	}
	if _, err := Answers(ctx, keys(), s2, bound, now, nil); !errors.Is(err, down) {
		t.Fatalf("Answers with a failing ring: %v", err)
	}
	empty, _ := state.NewMemoryKeyRing(1)
	if _, err := (&StateKeys{Ring: empty, Static: [][]byte{k1.Secret}}).Seal(ctx, answers, bound, now); !errors.Is(err, ErrStateKey) {
		t.Fatalf("Seal with an empty ring: %v", err)
	}
}

// sealState and openState seal and open a v1 requestState with static keys.
func sealState(keys [][]byte, answers map[string]json.RawMessage, binding string, expires time.Time) (string, error) {
	return (&StateKeys{Static: keys}).Seal(context.Background(), answers, binding, expires)
}

func openState(keys [][]byte, s, binding string, now time.Time) (map[string]json.RawMessage, error) {
	return (&StateKeys{Static: keys}).Open(context.Background(), s, binding, now)
}
