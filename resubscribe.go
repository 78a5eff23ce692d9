package jsonrpc

import (
	"context"
	"errors"
	"sync/atomic"
)

// SubscriptionGap is returned, once, by [Resubscription.Next] when the
// subscription was made again, on a new connection or after the server
// ended it for its broker's failure ([CodeSubscriptionBroker]): events
// between the end and the new subscription are lost, so the consumer may
// want to catch up (for example, fetch the blocks it missed). The next call
// of Next goes on with the new subscription's events.
type SubscriptionGap struct {
	OldID, NewID string // the subscription's ids before and after
	Cause        error  // why the old one ended (the connection's error, or the server's)
}

func (g *SubscriptionGap) Error() string {
	return "jsonrpc: subscription " + g.OldID + " was made again as " + g.NewID + "; events may have been missed"
}

func (g *SubscriptionGap) Unwrap() error { return g.Cause }

// Resubscription is a subscription of a [ReconnectClient] that survives
// reconnects: see [Resubscribe].
type Resubscription[E any] struct {
	r    *ReconnectClient
	opts SubscribeOptions
	args []any

	cur   atomic.Pointer[Subscription[E]]
	ended atomic.Bool // Unsubscribe was called
}

// Resubscribe is [SubscribeWith] on a reconnecting client: when the
// connection drops, the subscription is made again on the next one with the
// same arguments, and Next reports a [*SubscriptionGap] before the new
// events; so is one the server ended with [CodeSubscriptionBroker], on the
// same connection. It fails, and ends, only when the client is closed, the
// context of Next ends, or the server refuses the subscription (its *Error;
// after a CodeSubscriptionBroker refusal, the next call of Next tries again).
func Resubscribe[E any](ctx context.Context, r *ReconnectClient, opts SubscribeOptions, args ...any) (*Resubscription[E], error) {
	s := &Resubscription[E]{r: r, opts: opts, args: args}
	err := r.retry(ctx, func(c *Conn) error {
		sub, err := SubscribeWith[E](ctx, c, opts, args...)
		s.cur.Store(sub)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ID returns the current subscription's id.
func (s *Resubscription[E]) ID() string { return s.cur.Load().id }

// Next waits for the next event. After a reconnect it returns a
// *SubscriptionGap once (errors.As), then the new subscription's events.
func (s *Resubscription[E]) Next(ctx context.Context) (E, error) {
	cur := s.cur.Load()
	ev, err := cur.Next(ctx)
	var e *Error
	brokerEnded := errors.As(err, &e) && e.Code == CodeSubscriptionBroker
	if err == nil || ctx.Err() != nil || (cur.conn.Err() == nil && !brokerEnded) || s.ended.Load() {
		return ev, err // an event, or the subscription ended while its connection lives on
	}
	cause, prev := err, cur.conn
	if brokerEnded {
		prev = nil // the connection lives: subscribe again on it
	}
	for {
		c, err := s.r.conns.Acquire(ctx, prev)
		if err != nil {
			return ev, err
		}
		sub, err := SubscribeWith[E](ctx, c, s.opts, s.args...)
		if err != nil {
			if ctx.Err() == nil && c.Err() != nil {
				prev = c // dropped again: wait for the next connection
				continue
			}
			return ev, err
		}
		s.cur.Store(sub)
		return ev, &SubscriptionGap{OldID: cur.id, NewID: sub.id, Cause: cause}
	}
}

// Unsubscribe ends the subscription and tells the server; it is not made
// again.
func (s *Resubscription[E]) Unsubscribe(ctx context.Context) error {
	s.ended.Store(true)
	cur := s.cur.Load()
	err := cur.Unsubscribe(ctx)
	if cur.conn.Err() != nil && errors.Is(err, ErrClosed) {
		return nil // the connection is gone, and the subscription with it
	}
	return err
}
