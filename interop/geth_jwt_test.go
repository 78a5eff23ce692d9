package interop

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

// A real go-ethereum client with the engine API's JWT authentication
// (rpc.WithHTTPAuth(node.NewJWTAuth(secret))) calls a server behind
// auth.SharedSecret, over HTTP and WebSocket; with another secret, or none,
// it is refused with 401.
func TestGethClientJWTAuth(t *testing.T) {
	ctx := testContext(t)
	var secret [32]byte
	copy(secret[:], "an engine-API secret of 32 bytes")
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "engine_sum", func(ctx context.Context, xs []int) (int, error) {
		if p, ok := auth.FromContext(ctx); !ok || p.Method != "jwt" {
			return 0, errors.New("no JWT principal")
		}
		s := 0
		for _, x := range xs {
			s += x
		}
		return s, nil
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: testLogger(t)}
	mw := jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(secret[:]), auth.WithLogger(slog.New(slog.DiscardHandler))))
	var urls []string
	for _, u := range []string{"http://127.0.0.1:0/", "ws://127.0.0.1:0/"} {
		l, err := srv.Listen(u, mw)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, l.URL)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })

	var wrong [32]byte
	copy(wrong[:], "another secret, also of 32 bytes")
	for _, url := range urls {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			c, err := rpc.DialOptions(ctx, url, rpc.WithHTTPAuth(node.NewJWTAuth(secret)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for range 3 { // a fresh token per request over HTTP
				var sum int
				if err := c.CallContext(ctx, &sum, "engine_sum", 1, 2, 3); err != nil || sum != 6 {
					t.Fatalf("engine_sum: %d, %v", sum, err)
				}
			}
			refused := func(opts ...rpc.ClientOption) {
				t.Helper()
				c, err := rpc.DialOptions(ctx, url, opts...)
				if err == nil {
					defer c.Close()
					var sum int
					err = c.CallContext(ctx, &sum, "engine_sum", 1)
				}
				// Over HTTP an rpc.HTTPError; the WebSocket handshake's
				// error only names the status.
				var he rpc.HTTPError
				if !(errors.As(err, &he) && he.StatusCode == http.StatusUnauthorized) && (err == nil || !strings.Contains(err.Error(), "401 Unauthorized")) {
					t.Fatalf("got %v, want HTTP 401", err)
				}
			}
			refused(rpc.WithHTTPAuth(node.NewJWTAuth(wrong)))
			refused()
		})
	}
}
