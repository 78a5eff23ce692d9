package streamable

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// TestSessionsAdopt: a session another instance created in the store is
// adopted with its client restored, up to MaxSessions (then 503); one
// deleted from the store ends here (OnEnd) and gets 404.
func TestSessionsAdopt(t *testing.T) {
	store := state.NewMemorySessionStore(nil)
	cfg := testConfig()
	cfg.MaxSessions, cfg.Store = 1, store
	ended := make(chan string, 2)
	cfg.OnEnd = func(id string) { ended <- id }
	tab := NewSessions(cfg)
	for _, id := range []string{"one", "two"} {
		if err := store.Create(t.Context(), state.Session{ID: id, ProtocolVersion: "2025-11-25",
			ClientCapabilities: json.RawMessage(`{"roots":{}}`), ClientInfo: json.RawMessage(`{"name":"c"}`),
			Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	post := func(id string) (*Session, int) {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set(mcp.SessionHeader, id)
		w := httptest.NewRecorder()
		s := tab.ForPOST(w, r, nil, nil)
		return s, w.Code
	}
	s, _ := post("one")
	if d := s.Declared(); s == nil || d.ProtocolVersion != "2025-11-25" || string(d.ClientCapabilities) != `{"roots":{}}` || string(d.ClientInfo) != `{"name":"c"}` {
		t.Fatalf("adopted: %+v", s)
	}
	if again, _ := post("one"); again != s {
		t.Fatal("a second request adopted the session again")
	}
	if _, code := post("two"); code != http.StatusServiceUnavailable {
		t.Fatalf("an adoption past MaxSessions: %d", code)
	}
	if err := store.Delete(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if _, code := post("one"); code != http.StatusNotFound || <-ended != "one" {
		t.Fatalf("a session deleted from the store: %d", code)
	}
	if s, _ := post("two"); s == nil {
		t.Fatal("no room once the deleted session ended here")
	}
}
