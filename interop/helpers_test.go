package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// testTimeout bounds every test's conversation with a peer.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// recorder collects the params of the "record" method.
type recorder chan json.RawMessage

func newRecorder() recorder { return make(recorder, 64) }

func (r recorder) rec(p json.RawMessage) { r <- p }

// next waits for the next recorded params.
func (r recorder) next(t *testing.T) json.RawMessage {
	t.Helper()
	select {
	case p := <-r:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a recorded notification")
		return nil
	}
}

// startServer serves the interop service on url (e.g. "tcp://127.0.0.1:0")
// and shuts it down when the test ends.
func startServer(t *testing.T, url string, rec recorder, opts ...jsonrpc.ListenOption) (*jsonrpc.Server, *jsonrpc.Listener) {
	t.Helper()
	var fn func(json.RawMessage)
	if rec != nil {
		fn = rec.rec
	}
	srv := &jsonrpc.Server{Handler: NewMux(fn), Logger: testLogger(t)}
	l, err := srv.Listen(url, opts...)
	if err != nil {
		t.Fatalf("Listen(%s): %v", url, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		select {
		case <-l.Done():
		case <-ctx.Done():
			t.Errorf("listener %s did not stop", l.URL)
		}
	})
	return srv, l
}

// jsonEqual reports whether a and b are the same JSON value (numbers compared
// by their text, object members in any order).
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := decodeNumbers(a, &va); err != nil {
		t.Fatalf("invalid JSON %s: %v", a, err)
	}
	if err := decodeNumbers(b, &vb); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hostPort(url string) string {
	_, hp, _ := strings.Cut(url, "://")
	return strings.TrimSuffix(hp, "/")
}
