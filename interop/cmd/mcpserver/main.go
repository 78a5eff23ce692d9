// Command mcpserver serves the demo service as an MCP server (demo.Shared{}.NewMCPMux)
// on standard input and output, newline-delimited as MCP's stdio transport
// wants, for the interop tests that drive it with the official MCP Go SDK.
// It follows MCP's cancellation and progress conventions. Logs go to
// standard error (a call cancelled by the client is logged). It exits once
// standard input ends.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// A call whose handler returns with its context cancelled (the client
	// cancelled it) is logged, for the tests to see.
	logCancelled := func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			v, err := next.ServeRPC(ctx, req)
			if ctx.Err() != nil {
				logger.Info("mcpserver: call cancelled", "method", req.Method, "id", req.ID.String())
			}
			return v, err
		})
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Logger: logger, Convention: jsonrpc.ConventionMCP, Middleware: []jsonrpc.Middleware{logCancelled}}
	l, err := srv.Listen("stdio:", jsonrpc.ListenFraming(jsonrpc.FramingLine))
	if err != nil {
		logger.Error("mcpserver: listen", "error", err)
		os.Exit(1)
	}
	<-l.Done()
}
