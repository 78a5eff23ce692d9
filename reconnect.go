package jsonrpc

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Defaults of reconnection (WithReconnect, WithBackoff).
const (
	DefaultReconnectMinDelay = 100 * time.Millisecond // the first wait before a re-dial
	DefaultReconnectMaxDelay = 30 * time.Second       // the cap of the doubling waits
)

// ErrConnectionLost matches (errors.Is) the error of a call that was in flight
// when its connection dropped: the server may or may not have served it, so
// it is never sent again. It also matches [ErrClosed] and the drop's cause.
var ErrConnectionLost = errors.New("jsonrpc: connection lost while the call was in flight")

// errNotSent is the error of a call made on a connection that had already
// closed: nothing left, so a ReconnectClient sends it on the next
// connection. It reads and matches as ErrClosed.
var errNotSent error = notSentError{}

type notSentError struct{}

func (notSentError) Error() string { return ErrClosed.Error() }
func (notSentError) Unwrap() error { return ErrClosed }

type reconnectConfig struct {
	min, max time.Duration
	notify   func(error)
}

// WithReconnect makes Dial return a [*ReconnectClient] for stream URLs (tcp,
// tls, unix, ws, wss), which dials again whenever the connection drops, with
// doubling waits between attempts (see WithBackoff). Without it a dropped
// connection stays closed; the option costs nothing when unused.
func WithReconnect() DialOption {
	return func(c *dialConfig) {
		if c.reconnect == nil {
			c.reconnect = &reconnectConfig{}
		}
	}
}

// WithBackoff sets the waits between re-dials of a reconnecting client: the
// first is about min, each next one doubles, capped at max (defaults
// [DefaultReconnectMinDelay] and [DefaultReconnectMaxDelay]); each wait is
// drawn at random from its upper half, so that clients of a restarted server
// do not all come back at once. It implies WithReconnect.
func WithBackoff(min, max time.Duration) DialOption {
	return func(c *dialConfig) {
		WithReconnect()(c)
		c.reconnect.min, c.reconnect.max = min, max
	}
}

// WithOnReconnect calls f, on a goroutine of the reconnecting client, with
// the cause when its connection drops and with nil once it is connected again.
// It implies WithReconnect.
func WithOnReconnect(f func(err error)) DialOption {
	return func(c *dialConfig) {
		WithReconnect()(c)
		c.reconnect.notify = f
	}
}

// ReconnectClient is a client over a stream connection that is dialled
// again when it drops. Calls in flight at the drop fail with an error
// matching [ErrConnectionLost] (they are never resent); calls made while
// it reconnects wait for the new connection, up to their context. A
// handler given with WithHandler serves the peer's calls on every connection,
// and subscriptions made with [Resubscribe] are made again. Safe for
// concurrent use.
type ReconnectClient struct {
	dial func(context.Context) (*Conn, error)
	cfg  reconnectConfig

	mu     sync.Mutex
	conn   *Conn         // nil while reconnecting
	ready  chan struct{} // closed once conn is set, or the client closed
	closed bool
	stop   chan struct{} // closed by Close
	done   chan struct{} // closed when the reconnecting goroutine has ended
}

// NewReconnectClient dials with dial and returns a client that dials
// again, with it, whenever the connection drops: for example over a
// command's stdin and stdout, with [DialCommand], restarting the command.
// The first dial's error is returned as is. Options: WithBackoff,
// WithOnReconnect.
func NewReconnectClient(ctx context.Context, dial func(context.Context) (*Conn, error), opts ...DialOption) (*ReconnectClient, error) {
	cfg := newDialConfig(append([]DialOption{WithReconnect()}, opts...))
	return newReconnectClient(ctx, dial, cfg.reconnect)
}

func newReconnectClient(ctx context.Context, dial func(context.Context) (*Conn, error), cfg *reconnectConfig) (*ReconnectClient, error) {
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	r := &ReconnectClient{dial: dial, cfg: *cfg, conn: c, ready: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if r.cfg.min <= 0 {
		r.cfg.min = DefaultReconnectMinDelay
	}
	if r.cfg.max < r.cfg.min {
		r.cfg.max = max(r.cfg.min, DefaultReconnectMaxDelay)
	}
	close(r.ready)
	go r.run(c)
	return r, nil
}

// dialReconnecting is Dial with WithReconnect on a stream URL.
func dialReconnecting(ctx context.Context, rawURL string, cfg *dialConfig) (*ReconnectClient, error) {
	once := *cfg
	once.reconnect = nil
	return newReconnectClient(ctx, func(ctx context.Context) (*Conn, error) {
		c, err := dialConfigured(ctx, rawURL, &once)
		if err != nil {
			return nil, err
		}
		conn, ok := c.(*Conn)
		if !ok {
			c.Close()
			return nil, errors.New("jsonrpc: WithReconnect needs a stream URL (tcp, tls, unix, ws, wss): " + rawURL)
		}
		return conn, nil
	}, cfg.reconnect)
}

// run waits for each connection to end and dials the next one.
func (r *ReconnectClient) run(c *Conn) {
	defer close(r.done)
	for {
		select {
		case <-c.Done():
		case <-r.stop:
			c.Close()
			return
		}
		r.lost(c)
		if r.cfg.notify != nil {
			r.cfg.notify(causeOf(c))
		}
		if c = r.redial(); c == nil {
			return
		}
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			c.Close()
			return
		}
		r.conn = c
		close(r.ready)
		r.mu.Unlock()
		if r.cfg.notify != nil {
			r.cfg.notify(nil)
		}
	}
}

// causeOf returns why c ended, never nil.
func causeOf(c *Conn) error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

// lost marks c as gone, if it is still the current connection, so that new
// calls wait for the next one.
func (r *ReconnectClient) lost(c *Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == c && !r.closed {
		r.conn = nil
		r.ready = make(chan struct{})
	}
}

// redial dials until it succeeds, with capped, jittered, doubling waits; it
// returns nil once the client is closed.
func (r *ReconnectClient) redial() *Conn {
	delay := r.cfg.min
	for {
		wait := delay/2 + rand.N(delay/2+1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.stop:
			t.Stop()
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-r.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		c, err := r.dial(ctx)
		cancel()
		if err == nil {
			return c
		}
		delay = min(2*delay, r.cfg.max)
	}
}

// acquire returns the current connection, other than prev (a connection
// found closed), waiting for the next one up to ctx.
func (r *ReconnectClient) acquire(ctx context.Context, prev *Conn) (*Conn, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
		c, ready := r.conn, r.ready
		r.mu.Unlock()
		if c != nil && c != prev {
			return c, nil
		}
		if c == prev && c != nil {
			r.lost(c) // the connection is known closed: wait for the next
			continue
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Conn returns the current connection, waiting up to ctx while reconnecting.
func (r *ReconnectClient) Conn(ctx context.Context) (*Conn, error) { return r.acquire(ctx, nil) }

// retry runs op on the current connection, again on the next one if
// nothing was sent; an in-flight op cut by the drop fails with
// ErrConnectionLost.
func (r *ReconnectClient) retry(ctx context.Context, op func(*Conn) error) error {
	var prev *Conn
	for {
		c, err := r.acquire(ctx, prev)
		if err != nil {
			return err
		}
		err = op(c)
		switch {
		case err == nil:
			return nil
		case err == errNotSent:
			prev = c
			continue
		}
		return r.lostErr(ctx, c, err)
	}
}

// lostErr turns err, from a call on c, into an error matching
// ErrConnectionLost when c dropped under it.
func (r *ReconnectClient) lostErr(ctx context.Context, c *Conn, err error) error {
	var rpcErr *Error
	if err == nil || ctx.Err() != nil || errors.As(err, &rpcErr) || (c.Err() == nil && !brokenStream(err)) || r.isClosed() {
		return err
	}
	return errors.Join(ErrConnectionLost, err)
}

func (r *ReconnectClient) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Call is [Conn.Call] on the current connection (see ReconnectClient).
func (r *ReconnectClient) Call(ctx context.Context, method string, params, result any) error {
	return r.retry(ctx, func(c *Conn) error { return c.Call(ctx, method, params, result) })
}

// Notify is [Conn.Notify] on the current connection.
func (r *ReconnectClient) Notify(ctx context.Context, method string, params any) error {
	return r.retry(ctx, func(c *Conn) error { return c.Notify(ctx, method, params) })
}

// Batch is [Conn.Batch] on the current connection; the calls of a batch
// in flight at a drop fail with ErrConnectionLost.
func (r *ReconnectClient) Batch(ctx context.Context, b *Batch) error {
	return r.retry(ctx, func(c *Conn) error {
		err := c.Batch(ctx, b)
		if err == nil {
			for _, e := range b.elems {
				if !e.notify {
					e.Err = r.lostErr(ctx, c, e.Err)
				}
			}
		}
		return err
	})
}

// Close closes the connection and stops reconnecting; waiting calls fail
// with ErrClosed.
func (r *ReconnectClient) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return nil
	}
	r.closed = true
	close(r.stop)
	if r.conn == nil {
		close(r.ready) // wakes waiting calls, which find the client closed
	}
	r.mu.Unlock()
	<-r.done
	return nil
}
