package chaos

import (
	"context"
	"io"
	"time"
)

// Pipe runs the proxy between two byte streams, a client's and a target's
// (newline or Content-Length framing, detected), as one connection, until
// either ends or ctx ends; jrpc chaos --exec runs it between its stdin and
// stdout and a subprocess. It returns the faults injected, once the
// connection is over, without waiting long for a read of a side that
// closing cannot interrupt (such a pump ends with its process).
func Pipe(ctx context.Context, client, target io.ReadWriteCloser, opts Options) []Event {
	p := newProxy(opts)
	stop := context.AfterFunc(ctx, func() { close(p.closed) })
	defer stop()
	c := p.streamConn(client, target)
	ended := make(chan struct{})
	go func() { c.run(); close(ended) }()
	select {
	case <-ended:
	case <-c.done:
		// Over: a pump blocked on a read that closing cannot interrupt
		// (a process's own stdin) is not waited for long.
		select {
		case <-ended:
		case <-time.After(100 * time.Millisecond):
		}
	}
	return p.Events()
}
