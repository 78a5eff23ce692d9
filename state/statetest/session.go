package statetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// MakeSessionStore returns a fresh, empty session store;
// it registers with t.Cleanup whatever must be closed.
type MakeSessionStore func(t *testing.T) state.SessionStore

// TestSessionStore checks the SessionStore contract: what a session keeps,
// refusals, deletion, expiry by the wall clock and its extension,
// concurrent creation of one id, values set, kept and bounded.
func TestSessionStore(t *testing.T, mk MakeSessionStore) {
	t.Run("Keep", func(t *testing.T) { testSessionKeep(t, mk(t)) })
	t.Run("Delete", func(t *testing.T) { testSessionDelete(t, mk(t)) })
	t.Run("Expiry", func(t *testing.T) { testSessionExpiry(t, mk(t)) })
	t.Run("Concurrent", func(t *testing.T) { testSessionConcurrent(t, mk(t)) })
	t.Run("Values", func(t *testing.T) { testSessionValues(t, mk(t)) })
}

func session(id string, ttl time.Duration) state.Session {
	return state.Session{
		ID: id, ProtocolVersion: "2025-11-25",
		ClientCapabilities: []byte(`{"elicitation":{}}`),
		ClientInfo:         []byte(`{"name":"statetest","version":"1"}`),
		Expires:            time.Now().Add(ttl),
	}
}

func wantSession(t *testing.T, s state.SessionStore, want state.Session) {
	t.Helper()
	got, err := s.Get(ctxOf(t), want.ID)
	if err != nil {
		t.Fatalf("Get(%s): %v", want.ID, err)
	}
	if got.ID != want.ID || got.ProtocolVersion != want.ProtocolVersion ||
		!bytes.Equal(got.ClientCapabilities, want.ClientCapabilities) || !bytes.Equal(got.ClientInfo, want.ClientInfo) ||
		got.Expires.Sub(want.Expires).Abs() > time.Millisecond || !sameValues(got.Values, want.Values) {
		t.Fatalf("Get(%s) = %+v, want %+v", want.ID, got, want)
	}
}

func sameValues(a, b map[string]json.RawMessage) bool {
	return maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

func wantGone(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, state.ErrNoSession) {
		t.Fatalf("%s: %v, want ErrNoSession", what, err)
	}
}

func testSessionKeep(t *testing.T, s state.SessionStore) {
	ctx := ctxOf(t)
	a := session("a", time.Hour)
	if err := s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	wantSession(t, s, a)
	if err := s.Create(ctx, session("a", time.Hour)); !errors.Is(err, state.ErrSessionExists) {
		t.Errorf("Create of a held id: %v, want ErrSessionExists", err)
	}
	_, err := s.Get(ctx, "never")
	wantGone(t, err, "Get of an unknown id")
	wantGone(t, s.Touch(ctx, "never", time.Now().Add(time.Hour)), "Touch of an unknown id")
}

func testSessionDelete(t *testing.T, s state.SessionStore) {
	ctx := ctxOf(t)
	if err := s.Create(ctx, session("d", time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err := s.Get(ctx, "d")
	wantGone(t, err, "Get after Delete")
	wantGone(t, s.Touch(ctx, "d", time.Now().Add(time.Hour)), "Touch after Delete")
	wantGone(t, s.Delete(ctx, "d"), "Delete after Delete")
	if err := s.Create(ctx, session("d", time.Hour)); err != nil {
		t.Errorf("Create of a deleted id: %v", err)
	}
}

func testSessionExpiry(t *testing.T, s state.SessionStore) {
	ctx := ctxOf(t)
	if err := s.Create(ctx, session("past", -time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, "past")
	wantGone(t, err, "Get of an expired session")
	if err := s.Create(ctx, session("past", time.Hour)); err != nil {
		t.Errorf("Create over an expired session: %v", err)
	}
	const ttl = 300 * time.Millisecond
	short, touched := session("short", ttl), session("touched", ttl)
	for _, x := range []state.Session{short, touched} {
		if err := s.Create(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	touched.Expires = time.Now().Add(time.Hour)
	if err := s.Touch(ctx, "touched", touched.Expires); err != nil {
		t.Fatalf("Touch: %v", err)
	}
	time.Sleep(time.Until(short.Expires) + 10*time.Millisecond)
	_, err = s.Get(ctx, "short")
	wantGone(t, err, "Get past Expires")
	wantSession(t, s, touched)
}

func testSessionConcurrent(t *testing.T, s state.SessionStore) {
	const n = 8
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			x := session("one", time.Hour)
			x.ClientInfo = fmt.Appendf(nil, `{"name":"c%d"}`, i)
			err := s.Create(ctxOf(t), x)
			switch {
			case err == nil:
				won.Add(1)
			case !errors.Is(err, state.ErrSessionExists):
				t.Errorf("Create: %v", err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d concurrent Creates of one id succeeded, want 1", won.Load())
	}
}

// TestSharedSessionStore checks that a and b, two handles on the same
// sessions (two instances), see each other's creations, touches, values
// and deletions at once, and lose none of their concurrent Sets.
func TestSharedSessionStore(t *testing.T, a, b state.SessionStore) {
	ctx := ctxOf(t)
	x := session("shared", time.Hour)
	if err := a.Create(ctx, x); err != nil {
		t.Fatal(err)
	}
	wantSession(t, b, x)
	x.Expires = time.Now().Add(2 * time.Hour)
	if err := b.Touch(ctx, x.ID, x.Expires); err != nil {
		t.Fatal(err)
	}
	wantSession(t, a, x)
	x.Values = map[string]json.RawMessage{"level": []byte(`"debug"`)}
	if err := a.Set(ctx, x.ID, "level", x.Values["level"]); err != nil {
		t.Fatal(err)
	}
	wantSession(t, b, x)
	setConcurrently(t, a, b, x)
	if err := b.Delete(ctx, x.ID); err != nil {
		t.Fatal(err)
	}
	_, err := a.Get(ctx, x.ID)
	wantGone(t, err, "Get through a after Delete through b")
}

func testSessionValues(t *testing.T, s state.SessionStore) {
	ctx := ctxOf(t)
	x := session("v", time.Hour)
	x.Values = map[string]json.RawMessage{"created": []byte(`1`)}
	if err := s.Create(ctx, x); err != nil {
		t.Fatal(err)
	}
	wantSession(t, s, x)
	for _, kv := range [][2]string{{"level", `"info"`}, {"sub/a", `true`}, {"level", `"error"`}, {"created", ``}} {
		if err := s.Set(ctx, "v", kv[0], json.RawMessage(kv[1])); err != nil {
			t.Fatalf("Set(%s): %v", kv[0], err)
		}
	}
	x.Values = map[string]json.RawMessage{"level": []byte(`"error"`), "sub/a": []byte(`true`)}
	wantSession(t, s, x)
	x.Expires = time.Now().Add(2 * time.Hour)
	if err := s.Touch(ctx, "v", x.Expires); err != nil {
		t.Fatal(err)
	}
	wantSession(t, s, x)
	big := json.RawMessage(`"` + strings.Repeat("x", state.MaxSessionValues) + `"`)
	if err := s.Set(ctx, "v", "big", big); !errors.Is(err, state.ErrSessionValuesFull) {
		t.Errorf("Set past MaxSessionValues: %v, want ErrSessionValuesFull", err)
	}
	wantSession(t, s, x)
	wantGone(t, s.Set(ctx, "never", "level", []byte(`"info"`)), "Set on an unknown id")
	setConcurrently(t, s, s, x)
}

// setConcurrently sets 8 keys of x at once, half through a and half
// through b, and checks that none is lost.
func setConcurrently(t *testing.T, a, b state.SessionStore, x state.Session) {
	var wg sync.WaitGroup
	for i := range 8 {
		via := a
		if i%2 == 1 {
			via = b
		}
		k, v := fmt.Sprintf("c%d", i), fmt.Appendf(nil, "%d", i)
		x.Values[k] = v
		wg.Go(func() {
			if err := via.Set(ctxOf(t), x.ID, k, v); err != nil {
				t.Errorf("Set(%s): %v", k, err)
			}
		})
	}
	wg.Wait()
	wantSession(t, a, x)
}
