// Command stdioserver serves the interop service (see package interop) on
// standard input and output, for the interop tests that drive it from other
// JSON-RPC implementations (vscode-jsonrpc). Content-Length framing, as
// language servers use, unless -framing says otherwise; -convention lsp
// makes $/cancelRequest cancel requests (answered -32800). Logs go to standard
// error. It exits once standard input ends and every request read has been
// answered.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/interop"
)

func main() {
	framingFlag := flag.String("framing", "header", "message framing: header (Content-Length), line or auto")
	convention := flag.String("convention", "none", "cancellation and progress convention: none, lsp or mcp")
	flag.Parse()
	cv, ok := map[string]jsonrpc.Convention{"none": jsonrpc.ConventionNone, "lsp": jsonrpc.ConventionLSP, "mcp": jsonrpc.ConventionMCP}[*convention]
	if !ok {
		fmt.Fprintln(os.Stderr, "stdioserver: -convention must be none, lsp or mcp")
		os.Exit(2)
	}
	framing, err := jsonrpc.ParseFraming(*framingFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stdioserver:", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := &jsonrpc.Server{Handler: interop.NewMux(nil), Logger: logger, Convention: cv}
	l, err := srv.Listen("stdio:", jsonrpc.ListenFraming(framing))
	if err != nil {
		logger.Error("stdioserver: listen", "error", err)
		os.Exit(1)
	}
	<-l.Done()
	if err := l.Err(); err != nil {
		logger.Error("stdioserver: stopped", "error", err)
		os.Exit(1)
	}
}
