package demo

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
)

// TickerParams are the arguments of the "ticker" subscription.
type TickerParams struct {
	IntervalMS int64 `json:"interval_ms,omitempty" jsonschema:"milliseconds between events (default 1000)"`
	Count      int64 `json:"count,omitempty" jsonschema:"events to send (0: until unsubscribed)"`
}

// LargeParams are the arguments of the "large" subscription.
type LargeParams struct {
	Size       int   `json:"size" jsonschema:"bytes of each event's string"`
	Count      int64 `json:"count,omitempty" jsonschema:"events to send (0: until unsubscribed)"`
	IntervalMS int64 `json:"interval_ms,omitempty" jsonschema:"milliseconds between events (0: as fast as the client reads)"`
}

// DefaultTickerInterval is the ticker's interval_ms when the params leave it
// out: an event a second.
const DefaultTickerInterval = 1000

// MaxLargeEvent bounds the size of a "large" event.
const MaxLargeEvent = 4 << 20

// RegisterSubscriptions adds the demo namespace's subscriptions to mux,
// with sh's shared state, in go-ethereum's form: demo_subscribe ["ticker",
// {"interval_ms": N, "count": K}] returns an id, then demo_subscription
// notifications carry 1, 2, … K as their result every N ms (default 1000),
// and the subscription ends quietly after the K-th (no message says so:
// the protocol has none); demo_unsubscribe [id] ends a subscription. The
// "large" kind sends strings of a given size, for tests; the "broadcast"
// kind, the values of demo_broadcast (registerBroadcast).
func (sh Shared) RegisterSubscriptions(mux *jsonrpc.Mux) *jsonrpc.Subscriptions {
	subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "demo", Broker: sh.Broker})
	jsonrpc.AddSubscription(subs, "ticker", func(ctx context.Context, p TickerParams, sink *jsonrpc.Sink[int64]) error {
		p.IntervalMS = cmp.Or(p.IntervalMS, DefaultTickerInterval)
		if p.IntervalMS < 1 || p.Count < 0 {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: interval_ms must be at least 1 (default 1000) and count not negative")
		}
		return tick(ctx, p.IntervalMS, p.Count, func(i int64) error { return sink.Send(i) })
	})
	jsonrpc.AddSubscription(subs, "large", func(ctx context.Context, p LargeParams, sink *jsonrpc.Sink[string]) error {
		if p.Size < 0 || p.Size > MaxLargeEvent || p.Count < 0 || p.IntervalMS < 0 {
			return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: size must be between 0 and %d, count and interval_ms not negative", MaxLargeEvent)
		}
		ev := strings.Repeat("x", p.Size)
		return tick(ctx, p.IntervalMS, p.Count, func(int64) error { return sink.Send(ev) })
	}, jsonrpc.SubscriptionKindOptions{Buffer: 16})
	registerBroadcast(mux, subs)
	return subs
}

// tick calls send with 1, 2, … count (forever when count is 0), every
// interval ms, until ctx ends or send fails.
func tick(ctx context.Context, intervalMS, count int64, send func(int64) error) error {
	var t *time.Ticker
	if intervalMS > 0 {
		t = time.NewTicker(time.Duration(intervalMS) * time.Millisecond)
		defer t.Stop()
	}
	for i := int64(1); count == 0 || i <= count; i++ {
		if t != nil {
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil
			}
		}
		if err := send(i); err != nil {
			return nil // the subscription ended
		}
	}
	return nil
}
