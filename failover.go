package jsonrpc

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
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
	eps      []*endpoint
	next     atomic.Uint64 // round robin
	interval time.Duration
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

type endpoint struct {
	url  string
	dial func(context.Context) (Client, error)

	mu     sync.Mutex
	client Client // nil until dialled, and once set aside
	down   bool
	probed bool // a probe runs
}

// DialFailover returns a client over the endpoints named by urls. They are
// dialled when first used; the options apply to each (see [Dial]).
func DialFailover(ctx context.Context, urls []string, opts ...DialOption) (*FailoverClient, error) {
	if len(urls) == 0 {
		return nil, errors.New("jsonrpc: DialFailover needs at least one URL")
	}
	cfg := newDialConfig(opts)
	f := &FailoverClient{interval: cfg.probeInterval, stop: make(chan struct{})}
	if f.interval <= 0 {
		f.interval = DefaultProbeInterval
	}
	for _, u := range urls {
		u := u
		f.eps = append(f.eps, &endpoint{url: u, dial: func(ctx context.Context) (Client, error) { return dialConfigured(ctx, u, cfg) }})
	}
	return f, nil
}

// get returns the endpoint's client, dialling it when needed; an endpoint
// that cannot be dialled is set aside.
func (f *FailoverClient) get(ctx context.Context, ep *endpoint) (Client, bool) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.down {
		return nil, false
	}
	if ep.client == nil {
		c, err := ep.dial(ctx)
		if err != nil {
			f.setAsideLocked(ep, nil)
			return nil, false
		}
		ep.client = c
	}
	return ep.client, true
}

// setAside marks ep down (if its client is still c) and starts its probe.
func (f *FailoverClient) setAside(ep *endpoint, c Client) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.client == c {
		f.setAsideLocked(ep, c)
	}
}

func (f *FailoverClient) setAsideLocked(ep *endpoint, c Client) {
	if c != nil {
		go c.Close()
	}
	ep.client, ep.down = nil, true
	if ep.probed {
		return
	}
	select {
	case <-f.stop:
		return
	default:
	}
	ep.probed = true
	f.wg.Add(1)
	go f.probe(ep)
}

// probe dials ep every interval until it answers, then brings it back.
func (f *FailoverClient) probe(ep *endpoint) {
	defer f.wg.Done()
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), f.interval)
		c, err := ep.dial(ctx)
		if err == nil {
			err = probeReach(ctx, c)
		}
		cancel()
		if err != nil {
			if c != nil {
				c.Close()
			}
			continue
		}
		ep.mu.Lock()
		ep.client, ep.down, ep.probed = c, false, false
		ep.mu.Unlock()
		return
	}
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
	if err == errNotSent {
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
		return conn.Err() != nil || brokenStream(err)
	}
	var ue *url.Error
	return errors.As(err, &ue)
}

// brokenStream reports whether err is a socket's read or write failure:
// a write that failed may have carried part of the message (or, coalesced,
// all of an earlier one), so it counts as in flight, never resent.
func brokenStream(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op != "dial"
}

// do runs op on one endpoint after another, from the next in turn, until
// one takes the message.
func (f *FailoverClient) do(ctx context.Context, op func(Client) error) error {
	start := f.next.Add(1)
	for i := range len(f.eps) {
		ep := f.eps[(int(start)+i)%len(f.eps)]
		c, ok := f.get(ctx, ep)
		if !ok {
			continue
		}
		err := op(c)
		if err == nil || !neverLeft(err) {
			if err != nil && ctx.Err() == nil && lostOn(c, err) {
				f.setAside(ep, c)
				return errors.Join(ErrConnectionLost, err)
			}
			return err
		}
		f.setAside(ep, c)
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
	f.once.Do(func() { close(f.stop) })
	f.wg.Wait()
	for _, ep := range f.eps {
		ep.mu.Lock()
		c := ep.client
		ep.client, ep.down = nil, true
		ep.mu.Unlock()
		if c != nil {
			c.Close()
		}
	}
	return nil
}
