package httpx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// How an HTTP listener stops (HTTPDrain.Shutdown) without losing a request a
// proxy has already sent:
//
//  1. Keep-alives end: idle connections close, and every answer from now on
//     carries "Connection: close".
//  2. The listener stops listening, and the connections the kernel had
//     already completed are accepted and served. A plain close would reset
//     them after their clients had sent a request, which a proxy cannot
//     resend; a connect that comes later is refused, which it can. On Linux
//     the listener first stops answering connects (a socket filter), then
//     the handshakes under way complete, then the last accept and the end
//     of listening are two system calls in a row; elsewhere the listener
//     is simply closed.
//  3. Every accepted connection is served until it closes (one silent for
//     longer than drainSilentConn does not count), and only then does
//     http.Server.Shutdown run: it drops a request read after it has begun.
const (
	drainSilentConn = 5 * time.Second // like net/http: a new connection silent this long is idle
	drainPoll       = 5 * time.Millisecond
)

// Listen listens on a TCP address for an HTTP server. It asks for plain
// TCP, not Go's default Multipath TCP: an MPTCP socket takes no socket
// filter, so its drain could not stop answering connects first (step 2).
func Listen(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp", addr)
}

// drainListener hands out, once stop is called, the connections the kernel
// had queued, then reports net.ErrClosed.
type drainListener struct {
	net.Listener
	stopping  atomic.Bool
	stopped   chan struct{} // closed once queued is set
	queued    []net.Conn    // then taken by Accept (net/http calls it from one goroutine)
	closeOnce sync.Once
	closeErr  error
}

func newDrainListener(l net.Listener) *drainListener {
	return &drainListener{Listener: l, stopped: make(chan struct{})}
}

func (l *drainListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil || !l.stopping.Load() {
		return c, err
	}
	<-l.stopped
	if len(l.queued) > 0 {
		c, l.queued = l.queued[0], l.queued[1:]
		return c, nil
	}
	l.Close()
	return nil, net.ErrClosed
}

func (l *drainListener) Close() error {
	l.closeOnce.Do(func() { l.closeErr = l.Listener.Close() })
	return l.closeErr
}

// stop ends listening and queues for Accept the connections the kernel had
// completed; where that cannot be done, it closes the listener.
func (l *drainListener) stop() {
	if l.stopping.Swap(true) {
		return
	}
	var ok bool
	l.queued, ok = unlisten(l.Listener)
	close(l.stopped)
	if !ok {
		l.Close()
	}
}

// connTracker holds an http.Server's connections that may still carry a
// request: a new one with the time it came, an active one with the zero
// time (idle ones are not held, nor hijacked ones, which belong to their Conn).
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]time.Time
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew:
		t.conns[c] = time.Now()
	case http.StateActive:
		t.conns[c] = time.Time{}
	default:
		delete(t.conns, c)
	}
}

// busy tells whether a connection may still bring or be serving a request.
func (t *connTracker) busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, since := range t.conns {
		if since.IsZero() || time.Since(since) < drainSilentConn {
			return true
		}
	}
	return false
}

// HTTPDrain runs an http.Server and stops it as described at the top of
// this file.
type HTTPDrain struct {
	hs     *http.Server
	l      *drainListener
	conns  connTracker
	served chan struct{} // closed when hs.Serve has returned: every accepted connection is tracked
	h2     bool          // HTTP/2 may be served: its GOAWAY tells a client what was served, so no drain
}

// Serve runs the server until Shutdown, then returns http.ErrServerClosed.
func (d *HTTPDrain) Serve() error {
	defer close(d.served)
	var err error
	if d.hs.TLSConfig != nil {
		err = d.hs.ServeTLS(d.l, "", "")
	} else {
		err = d.hs.Serve(d.l)
	}
	if d.l.stopping.Load() && errors.Is(err, net.ErrClosed) {
		return http.ErrServerClosed
	}
	return err
}

// Shutdown stops the server; at ctx's end it closes what remains.
func (d *HTTPDrain) Shutdown(ctx context.Context) error {
	if !d.h2 {
		d.hs.SetKeepAlivesEnabled(false)
		d.l.stop()
		select {
		case <-d.served:
		case <-ctx.Done():
		}
		tick := time.NewTicker(drainPoll)
		defer tick.Stop()
		for d.conns.busy() && ctx.Err() == nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}
	err := d.hs.Shutdown(ctx)
	if err != nil {
		d.hs.Close()
	}
	return err
}
