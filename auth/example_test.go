package auth_test

import (
	"context"
	"fmt"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

// A policy and a rate limit installed on a server: they hold on every
// transport the server listens on.
func ExamplePolicy() {
	mux := jsonrpc.NewMux()
	policy := auth.NewPolicy(map[string]auth.Rule{
		"sum":          auth.Scope("calc:read"),
		"subtract":     auth.Scope("calc:write"),
		"rpc.discover": auth.Anyone(),
	})
	srv := &jsonrpc.Server{
		Handler:   mux,
		Authorize: policy.Authorize,
		Admit:     auth.NewRateLimiter(100, 200).Admit, // per client
	}
	_ = srv

	// What a caller with scope calc:read gets:
	ctx := auth.NewContext(context.Background(), auth.Principal{Subject: "alice", Scopes: []string{"calc:read"}})
	fmt.Println(policy.Authorize(ctx, "sum"))
	fmt.Println(policy.Authorize(ctx, "subtract"))
	// Output:
	// <nil>
	// jsonrpc: code -32003: forbidden: subtract needs scope calc:write
}

// Serving HTTP and WebSocket behind geth-style shared-secret JWTs.
func ExampleSharedSecret() {
	secret, _, err := auth.ObtainSecret("/tmp/jwt.hex") // created if missing, like geth's
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux()}
	mw := jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(secret)))
	if _, err := srv.Listen("http://127.0.0.1:0/", mw); err != nil {
		fmt.Println(err)
	}
	srv.Shutdown(context.Background())
}
