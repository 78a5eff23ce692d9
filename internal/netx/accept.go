package netx

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// Acceptor accepts a listener's stream connections and serves each, with a
// bound on how many are open at once.
type Acceptor struct {
	// Limit bounds the connections open at once; one accepted over it is
	// closed at once, after Refused has seen it.
	Limit int64
	// Closing reports whether the server is shutting down: an Accept error
	// then ends Run with ErrClosed.
	Closing func() bool
	// Serve serves nc; it calls done once the connection has ended. It runs
	// on the accepting goroutine, so it must start its own goroutines.
	Serve func(nc net.Conn, done func())
	// Refused is told of a connection closed over Limit.
	Refused func(nc net.Conn)
}

// ErrClosed is returned by Acceptor.Run when the listener failed because
// the server is shutting down.
var ErrClosed = errors.New("netx: listener closed by shutdown")

// maxAcceptDelay bounds the wait after a temporary Accept failure (say, out
// of file descriptors); the wait doubles from 5 ms up to it.
const maxAcceptDelay = time.Second

// Run accepts connections on l until it fails: with ErrClosed when
// Closing reports true, otherwise with Accept's error. Temporary failures
// (timeouts) are retried after a doubling wait.
func (a *Acceptor) Run(l net.Listener) error {
	var delay time.Duration
	var open atomic.Int64
	done := func() { open.Add(-1) }
	for {
		nc, err := l.Accept()
		if err != nil {
			if a.Closing() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), maxAcceptDelay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if open.Add(1) > a.Limit {
			done()
			a.Refused(nc)
			nc.Close()
			continue
		}
		a.Serve(nc, done)
	}
}
