package jsonrpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seedhq/jsonrpc/internal/redial"
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
var errNotSent = fmt.Errorf("%w", ErrClosed)

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
// the cause when its connection drops and with nil once it is connected again;
// calls made from f with nil go over the new connection. It implies
// WithReconnect.
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
	conns *redial.Redialer[*Conn]
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
	o := redial.Options[*Conn]{Min: orDefault(cfg.min, DefaultReconnectMinDelay), Max: cfg.max, Notify: cfg.notify, Done: (*Conn).Done, Cause: func(c *Conn) error { return cmp.Or(c.Err(), ErrClosed) }, Close: (*Conn).Close, Closed: ErrClosed}
	if o.Max < o.Min {
		o.Max = max(o.Min, DefaultReconnectMaxDelay)
	}
	return &ReconnectClient{conns: redial.Start(c, dial, o)}, nil
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

// Conn returns the current connection, waiting up to ctx while reconnecting.
func (r *ReconnectClient) Conn(ctx context.Context) (*Conn, error) { return r.conns.Acquire(ctx, nil) }

// retry runs op on the current connection, again on the next one if
// nothing was sent; an in-flight op cut by the drop fails with
// ErrConnectionLost.
func (r *ReconnectClient) retry(ctx context.Context, op func(*Conn) error) error {
	var prev *Conn
	for {
		c, err := r.conns.Acquire(ctx, prev)
		if err != nil {
			return err
		}
		err = op(c)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errNotSent):
			prev = c
			continue
		}
		return r.lostErr(ctx, c, err)
	}
}

// lostErr turns err, from a call on c, into an error matching
// ErrConnectionLost when c dropped under it.
func (r *ReconnectClient) lostErr(ctx context.Context, c *Conn, err error) error {
	if err == nil || ctx.Err() != nil || !lostOn(c, err) || r.conns.Closed() {
		return err
	}
	return errors.Join(ErrConnectionLost, err)
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
	r.conns.Close()
	return nil
}
