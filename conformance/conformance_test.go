package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/conformance"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// listen serves the demo service on rawURL for the test's duration.
func listen(t *testing.T, rawURL string) string {
	t.Helper()
	s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	l, err := s.Listen(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return l.URL
}

// TestOwnServer runs the whole suite, hostile checks included, against
// our server on every transport: no check fails.
func TestOwnServer(t *testing.T) {
	targets := map[string]func(t *testing.T) conformance.Target{
		"stdio": func(t *testing.T) conformance.Target {
			t.Setenv(stdioServerEnv, "1")
			return &conformance.CommandTarget{Path: os.Args[0], Args: []string{"-test.run=^$"}, Framing: jsonrpc.FramingLine}
		},
	}
	for name, u := range map[string]string{"http": "http://127.0.0.1:0/", "ws": "ws://127.0.0.1:0/", "tcp": "tcp://127.0.0.1:0", "unix": "unix://" + filepath.Join(t.TempDir(), "s.sock")} {
		targets[name] = func(t *testing.T) conformance.Target {
			target, err := conformance.URL(listen(t, u), jsonrpc.FramingLine, nil)
			if err != nil {
				t.Fatal(err)
			}
			return target
		}
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			s := &conformance.Suite{Discover: true, Hostile: &conformance.Hostile{MaxBytes: 64 << 10, Duration: 3 * time.Second}}
			rep := s.Run(t, target(t))
			for _, c := range rep.Checks {
				if c.Status == conformance.Fail {
					t.Errorf("%s %s: %s", c.Level, c.Name, c.Detail)
				}
			}
			if len(rep.Checks) < 130 {
				t.Errorf("only %d checks", len(rep.Checks))
			}
		})
	}
}
