// Command mcpserver serves the demo service as an MCP server (demo.NewMCPMux)
// on standard input and output, newline-delimited as MCP's stdio transport
// wants, for the interop tests that drive it with the official MCP Go SDK.
// Logs go to standard error. It exits once standard input ends.
package main

import (
	"log/slog"
	"os"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := &jsonrpc.Server{Handler: demo.NewMCPMux(), Logger: logger}
	l, err := srv.Listen("stdio:", jsonrpc.ListenFraming(jsonrpc.FramingLine))
	if err != nil {
		logger.Error("mcpserver: listen", "error", err)
		os.Exit(1)
	}
	<-l.Done()
}
