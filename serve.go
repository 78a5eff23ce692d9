package jsonrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// track records the connections a Server serves, for Shutdown.
func (s *Server) track(c *Conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.conns == nil {
			s.conns = make(map[*Conn]struct{})
		}
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
}

// onShutdown registers a function that Shutdown calls (to stop a listener
// or an HTTP server). It reports false if the server is already shutting down.
func (s *Server) onShutdown(f func(context.Context) error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.closers = append(s.closers, f)
	return true
}

// ErrServerClosed is returned by the Serve methods after Shutdown.
var ErrServerClosed = errors.New("jsonrpc: server closed")

// ServeConn serves one connection on ch until it ends, and returns why
// (nil when the peer closed it normally).
func (s *Server) ServeConn(ctx context.Context, ch Channel) error {
	c := NewConn(ch, s)
	select {
	case <-c.Done():
	case <-ctx.Done():
		c.Close()
	}
	if err := c.Err(); err != nil && err != io.EOF && !errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

// stdioEnded returns why a stdio listener stopped, given why its one
// connection ended: nil when the peer ended it (end of input, a message
// cut short, a stream that cannot be read further, already answered), the
// error when the server failed (it could not write). Either way it logs why.
func (s *Server) stdioEnded(err error) error {
	var fe *FrameError
	switch {
	case err == nil || errors.Is(err, ErrClosed):
		return nil
	case errors.Is(err, io.EOF):
		s.logger().Debug("jsonrpc: standard input ended") // the normal end: quiet
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.logger().Warn("jsonrpc: standard input ended in the middle of a message")
		return nil
	case errors.As(err, &fe):
		s.logger().Warn("jsonrpc: standard input cannot be read further; stopping", "error", fe.Msg)
		return nil
	}
	s.logger().Error("jsonrpc: stdio failed", "error", err)
	return err
}

// Serve accepts stream connections (TCP, unix) on l and serves each with the
// given framing (FramingAuto detects it per connection). It returns
// ErrServerClosed after Shutdown.
func (s *Server) Serve(l net.Listener, framing Framing) error {
	if !s.onShutdown(func(context.Context) error { return l.Close() }) {
		l.Close()
		return ErrServerClosed
	}
	var delay time.Duration
	var open atomic.Int64
	limit := int64(s.maxConns())
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if open.Add(1) > limit {
			open.Add(-1)
			s.logger().Warn("jsonrpc: connection refused: too many connections", "limit", limit, "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		if tc, ok := nc.(*tls.Conn); ok {
			go s.serveTLS(tc, framing, func() { open.Add(-1) })
			continue
		}
		s.serveStream(nc, nil, framing, func() { open.Add(-1) })
	}
}

// tlsHandshakeTimeout bounds the TLS handshake of a stream connection.
const tlsHandshakeTimeout = 10 * time.Second

// serveTLS completes the handshake of a TLS stream connection (off the
// accept loop, within tlsHandshakeTimeout), then serves it; a failed
// handshake is logged and closes the socket.
func (s *Server) serveTLS(tc *tls.Conn, framing Framing, onDone func()) {
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		s.logger().Info("jsonrpc: TLS handshake failed", "remote", tc.RemoteAddr().String(), "error", err)
		tc.Close()
		onDone()
		return
	}
	tc.SetDeadline(time.Time{})
	state := tc.ConnectionState()
	c := s.serveStream(tc, &state, framing, onDone)
	// Shutdown may have listed the connections during the handshake.
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		c.Shutdown(context.Background())
	}
}

// serveStream serves one accepted stream connection; its handlers see the
// peer (PeerFromContext).
func (s *Server) serveStream(nc net.Conn, state *tls.ConnectionState, framing Framing, onDone func()) *Conn {
	var remote, transport string
	if a := nc.RemoteAddr(); a != nil {
		remote, transport = a.String(), a.Network()
	}
	ctx := withPeer(context.Background(), s, Peer{Transport: transport, RemoteAddr: remote, TLS: state})
	return newConnContext(ctx, NewStream(nc, s.streamOptions(framing)), s, onDone)
}

// Shutdown stops the server gracefully: listeners stop accepting, every
// request already read is answered, then connections close. If ctx ends
// first, the remaining connections are closed at once and ctx's error is
// returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	var errs []error
	for _, f := range closers {
		if err := f(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	s.mu.Lock()
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range conns {
		wg.Go(func() {
			if err := c.Shutdown(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}
