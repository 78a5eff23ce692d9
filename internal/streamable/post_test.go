package streamable

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
)

func scanned(t *testing.T, data string) *wire.Message {
	t.Helper()
	var sc wire.Scanner
	m := new(wire.Message)
	if err := sc.Parse([]byte(data), MaxDepth, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestServeOther(t *testing.T) {
	for _, c := range []struct {
		enabled, standalone bool
		method              string
		want                int
		allow               string
	}{
		{false, true, http.MethodGet, http.StatusMethodNotAllowed, "POST"},
		{false, true, http.MethodDelete, http.StatusMethodNotAllowed, "POST"},
		{true, false, http.MethodGet, http.StatusMethodNotAllowed, "POST, DELETE"},
		{true, true, http.MethodPut, http.StatusMethodNotAllowed, "GET, POST, DELETE"},
		{true, true, http.MethodGet, http.StatusBadRequest, ""},     // ServeGET: no session header
		{true, false, http.MethodDelete, http.StatusBadRequest, ""}, // ServeDELETE: no session header
	} {
		cfg := testConfig()
		cfg.Enabled, cfg.Standalone = c.enabled, c.standalone
		r := httptest.NewRequest(c.method, "/", nil)
		r.Header.Set("Accept", "text/event-stream")
		w := httptest.NewRecorder()
		NewSessions(cfg).ServeOther(w, r)
		if w.Code != c.want || w.Header().Get("Allow") != c.allow {
			t.Errorf("sessions %v standalone %v %s: %d Allow %q, want %d Allow %q", c.enabled, c.standalone, c.method, w.Code, w.Header().Get("Allow"), c.want, c.allow)
		}
	}
}

func TestCheckVersion(t *testing.T) {
	for _, c := range []struct {
		header   string
		versions []string
		ok       bool
	}{
		{"", []string{"2025-11-25"}, true},
		{"2025-06-18", nil, true},
		{"2025-11-25", []string{"2025-06-18", "2025-11-25"}, true},
		{"2024-01-01", []string{"2025-06-18", "2025-11-25"}, false},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set(mcp.VersionHeader, c.header)
		w := httptest.NewRecorder()
		if ok := CheckVersion(w, r, c.versions); ok != c.ok || !ok && w.Code != http.StatusBadRequest {
			t.Errorf("%q among %v: %v (status %d), want %v", c.header, c.versions, ok, w.Code, c.ok)
		}
	}
}

// target records what Route delivers to it.
type target struct {
	session string
	got     []string
}

func (t *target) Deliver(data []byte) { t.got = append(t.got, string(data)) }
func (t *target) SessionID() string   { return t.session }

func TestRoute(t *testing.T) {
	var r Routes
	a, b, other := &target{session: "s"}, &target{session: "s"}, &target{session: "t"}
	ka, _ := r.Add(a)
	kb, _ := r.Add(b)
	ko, _ := r.Add(other)
	// A batch of responses only goes whole, once, to each connection it answers.
	data := `[{"jsonrpc":"2.0","id":` + itoa(ka<<32|1) + `,"result":1},{"jsonrpc":"2.0","id":` + itoa(ka<<32|2) + `,"result":2},{"jsonrpc":"2.0","id":` + itoa(kb<<32|1) + `,"error":{"code":1,"message":"m"}},{"jsonrpc":"2.0","id":` + itoa(ko<<32|1) + `,"result":3},{"jsonrpc":"2.0","id":"x","result":4}]`
	Route(&r, []byte(data), scanned(t, data).Elems, "s", false)
	if !slices.Equal(a.got, []string{data}) || !slices.Equal(b.got, []string{data}) || other.got != nil {
		t.Fatalf("whole batch: a %q, b %q, another session's %q", a.got, b.got, other.got)
	}
	// With requests in it, each response goes on its own (a request whose
	// id looks like a route's is no response: it goes nowhere).
	a.got, b.got = nil, nil
	mixed := `[{"jsonrpc":"2.0","id":` + itoa(ka<<32|3) + `,"result":1},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","method":"m","id":` + itoa(kb<<32|4) + `}]`
	Route(&r, []byte(mixed), scanned(t, mixed).Elems, "s", true)
	if want := `{"jsonrpc":"2.0","id":` + itoa(ka<<32|3) + `,"result":1}`; !slices.Equal(a.got, []string{want}) || b.got != nil {
		t.Fatalf("mixed: a %q, b %q; want a %q", a.got, b.got, want)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
