package jsonrpc

import (
	"context"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/seedhq/jsonrpc/internal/redial"
)

// DefaultProbeInterval is how often a FailoverClient probes an endpoint it
// has set aside (WithProbeInterval).
const DefaultProbeInterval = time.Second

// ErrNoEndpoint is the error of a FailoverClient's call when every endpoint
// is down, or the call could leave through none of them.
var ErrNoEndpoint = errors.New("jsonrpc: no endpoint is available")

// WithProbeInterval sets how often a [FailoverClient] probes an endpoint
// that failed, to bring it back (default [DefaultProbeInterval]).
func WithProbeInterval(d time.Duration) DialOption {
	return func(c *dialConfig) { c.probeInterval = d }
}

// FailoverClient spreads calls over several endpoints of one service
// (http(s), ws(s), tcp, tls, unix URLs, in turn): an endpoint that cannot
// be reached is set aside for new calls, and probed (dialled again) until
// it answers; a call that never left through an endpoint goes to the next.
// A call that did leave and lost its connection fails with
// [ErrConnectionLost]: it is never sent twice. Safe for concurrent use.
type FailoverClient struct {
	pool *redial.Pool[Client]
}

// DialFailover returns a client over the endpoints named by urls. They are
// dialled when first used; the options apply to each (see [Dial]).
func DialFailover(ctx context.Context, urls []string, opts ...DialOption) (*FailoverClient, error) {
	if len(urls) == 0 {
		return nil, errors.New("jsonrpc: DialFailover needs at least one URL")
	}
	cfg := newDialConfig(opts)
	interval := orDefault(cfg.probeInterval, DefaultProbeInterval)
	var dials []func(context.Context) (Client, error)
	for _, u := range urls {
		dials = append(dials, func(ctx context.Context) (Client, error) { return dialConfigured(ctx, u, cfg) })
	}
	return &FailoverClient{pool: redial.NewPool(dials, interval, probeReach, Client.Close)}, nil
}

// probeReach checks that an HTTP endpoint (dialled without a connection)
// takes connections: a notification it must accept or refuse at once.
func probeReach(ctx context.Context, c Client) error {
	h, ok := c.(*HTTPClient)
	if !ok {
		return nil // a stream's dial made a connection
	}
	err := h.Notify(ctx, "rpc.probe", nil)
	if err != nil && neverLeft(err) {
		return err
	}
	return nil // any answer (even an HTTP error) shows it is up
}

// neverLeft reports whether err shows the message did not leave: the
// connection was closed before it was sent, or could not be made.
func neverLeft(err error) bool {
	if errors.Is(err, errNotSent) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// lostOn reports whether err, from a message that left through c, shows
// the connection was lost under it (not an error response, not a decoding
// error): a stream that ended, or an HTTP exchange cut by the transport.
func lostOn(c Client, err error) bool {
	var rpcErr *Error
	if errors.As(err, &rpcErr) {
		return false
	}
	if conn, ok := c.(*Conn); ok {
		// A socket's read or write failure: a write that failed may have
		// carried part of the message (or, coalesced, all of an earlier
		// one), so it counts as in flight, never resent.
		var op *net.OpError
		return conn.Err() != nil || errors.As(err, &op) && op.Op != "dial"
	}
	var ue *url.Error
	return errors.As(err, &ue)
}

// do runs op on one endpoint after another, from the next in turn, until
// one takes the message.
func (f *FailoverClient) do(ctx context.Context, op func(Client) error) error {
	for ep := range f.pool.InTurn {
		c, ok := f.pool.Get(ctx, ep)
		if !ok {
			continue
		}
		err := op(c)
		if err == nil || !neverLeft(err) {
			if err != nil && ctx.Err() == nil && lostOn(c, err) {
				f.pool.SetAside(ep, c)
				return errors.Join(ErrConnectionLost, err)
			}
			return err
		}
		f.pool.SetAside(ep, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return ErrNoEndpoint
}

// Call sends the call through the next endpoint that takes it.
func (f *FailoverClient) Call(ctx context.Context, method string, params, result any) error {
	return f.do(ctx, func(c Client) error { return c.Call(ctx, method, params, result) })
}

// Notify sends the notification through the next endpoint that takes it.
func (f *FailoverClient) Notify(ctx context.Context, method string, params any) error {
	return f.do(ctx, func(c Client) error { return c.Notify(ctx, method, params) })
}

// Batch sends the batch through the next endpoint that takes it.
func (f *FailoverClient) Batch(ctx context.Context, b *Batch) error {
	return f.do(ctx, func(c Client) error { return c.Batch(ctx, b) })
}

// Close stops the probes and closes every endpoint's client.
func (f *FailoverClient) Close() error {
	f.pool.Close()
	return nil
}
