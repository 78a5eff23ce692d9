package chaos

import (
	"context"
	"io"
)

// Pipe runs the proxy between two byte streams, a client's and a target's
// (newline or Content-Length framing, detected), as one connection, until
// either ends or ctx ends; jrpc chaos --exec runs it between its stdin and
// stdout and a subprocess. It returns the faults injected.
func Pipe(ctx context.Context, client, target io.ReadWriteCloser, opts Options) []Event {
	p := newProxy(opts)
	stop := context.AfterFunc(ctx, func() { close(p.closed) })
	defer stop()
	p.pipe(client, target)
	return p.Events()
}
