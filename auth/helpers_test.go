package auth_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
	"github.com/seedhq/jsonrpc/openrpc"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // refusals are logged
	goleak.VerifyTestMain(m)
}

// newServer serves sum, subtract and whoami (the caller as
// "method:subject") with rpc.discover, behind the test policy: sum needs
// calc:sum or calc:all (or to be client-1), subtract calc:all, whoami an authenticated caller;
// rpc.discover is open to anyone.
func newServer(t *testing.T) *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "sum", func(_ context.Context, xs []float64) (float64, error) {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
	jsonrpc.Register(mux, "subtract", func(_ context.Context, xs [2]float64) (float64, error) { return xs[0] - xs[1], nil })
	jsonrpc.Register(mux, "whoami", func(ctx context.Context, _ struct{}) (string, error) {
		p, _ := auth.FromContext(ctx)
		return p.Method + ":" + p.Subject, nil
	})
	openrpc.Register(mux, openrpc.Info{Title: "test", Version: "1"})
	policy := auth.NewPolicy(map[string]auth.Rule{
		"sum":          auth.AnyOf(auth.Scope("calc:sum", "calc:all"), auth.Subject("client-1")),
		"subtract":     auth.Scope("calc:all"),
		"whoami":       auth.Authenticated(),
		"rpc.discover": auth.Anyone(),
	})
	return &jsonrpc.Server{Handler: mux, Authorize: policy.Authorize, Logger: slog.New(slog.DiscardHandler)}
}

// listenAll serves srv on each URL with opt and returns the URLs as
// listening; the server shuts down at the end of the test.
func listenAll(t *testing.T, srv *jsonrpc.Server, opt jsonrpc.ListenOption, urls ...string) []string {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	var out []string
	for _, u := range urls {
		l, err := srv.Listen(u, opt)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.URL)
	}
	return out
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
