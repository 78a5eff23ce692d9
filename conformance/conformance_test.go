package conformance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/conformance"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// listen serves the demo service on rawURL for the test's duration.
func listen(t *testing.T, rawURL string) string {
	t.Helper()
	s := &jsonrpc.Server{Handler: demo.NewMux()}
	l, err := s.Listen(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return l.URL
}

func TestOwnServer(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:0/", "ws://127.0.0.1:0/", "tcp://127.0.0.1:0", "unix://" + filepath.Join(t.TempDir(), "s.sock")} {
		t.Run(u[:3], func(t *testing.T) {
			target, err := conformance.URL(listen(t, u), jsonrpc.FramingLine, nil)
			if err != nil {
				t.Fatal(err)
			}
			rep := (&conformance.Suite{Discover: true, Hostile: &conformance.Hostile{}}).Run(t, target)
			for _, c := range rep.Checks {
				if c.Status != conformance.Pass {
					t.Logf("%s %s %s: %s", c.Status, c.Level, c.Name, c.Detail)
				}
			}
			t.Logf("%d checks", len(rep.Checks))
		})
	}
}
