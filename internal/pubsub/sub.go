package pubsub

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrClosed is PushEvent's error once the subscription has ended (it wraps
// the reason when there is one); the root package sets it to its own
// (jsonrpc.ErrSubscriptionClosed) in init.
var ErrClosed = errors.New("jsonrpc: subscription closed")

// Sub is one live subscription on the server: its id, its producer's
// context and the Outbox its events wait in.
type Sub struct {
	Outbox
	ID     string
	Ctx    context.Context         // the producer's
	Cancel context.CancelCauseFunc // cancels Ctx with a cause

	topic atomic.Pointer[topic] // the topic it joined (Fanout.Join)
	relay *relay                // under topic.mu
	left  bool                  // under topic.mu: it has left (or ended before it joined)
}

// Start readies s for sub, under a fresh id: the producer's context keeps
// ctx's values (a principal, say) but lives as long as the subscription,
// not the subscribe call. Each event is sent as a notification of method.
func (s *Sub) Start(ctx context.Context, method string, buffer int, policy Policy, sub Subscriber) {
	s.Ctx, s.Cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	s.ID = NewID()
	s.Init(buffer, policy, Prefix(method, s.ID), sub)
}

// PushEvent queues one encoded event, applying the overflow policy. Once
// the subscription has ended it returns an error wrapping ErrClosed.
func (s *Sub) PushEvent(raw []byte) error {
	if s.Push(raw) {
		return nil
	}
	if cause := context.Cause(s.Ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return errors.Join(ErrClosed, cause)
	}
	return ErrClosed
}

// ProducerDone ends the subscription when its producer returns err: what
// it sent is still delivered, then its error if it failed.
func (s *Sub) ProducerDone(err error) {
	if s.Ctx.Err() != nil {
		err = nil
	}
	s.End(err, true)
}
