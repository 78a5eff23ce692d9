package demo

import (
	"context"
	"encoding/json"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// Shared is what the instances of the demo share behind a load balancer
// (`jrpc serve --state`): each nil member is this process's memory, so
// that a zero Shared serves one process.
type Shared struct {
	// Broker carries demo_broadcast's values to the broadcast subscribers
	// of every instance (SubscriptionsOptions.Broker), and
	// test_trigger_tool_change's changes to every subscriptions/listen
	// (ChangeFeed.Broker).
	Broker state.Broker
	// KeyRing signs the requestState of greet's multi round-trips (MCP
	// 2026-07-28), so that any instance finishes what another started.
	KeyRing state.KeyRing
}

// BroadcastParams are the params of demo_broadcast.
type BroadcastParams struct {
	Value json.RawMessage `json:"value" jsonschema:"Any JSON value, sent to every broadcast subscriber."`
	Meta  json.RawMessage `json:"_meta,omitzero" jsonschema:"Request metadata (MCP 2026-07-28)."`
}

// registerBroadcast adds the broadcast subscription kind to subs and
// demo_broadcast to mux: demo_subscribe ["broadcast"] receives every value
// published with demo_broadcast {"value": V} after it subscribed, on
// whichever instance sharing subs's Broker it was published, in the
// Broker's order.
func registerBroadcast(mux *jsonrpc.Mux, subs *jsonrpc.Subscriptions) {
	jsonrpc.AddTopic[json.RawMessage](subs, "broadcast")
	jsonrpc.Register(mux, "demo_broadcast", func(ctx context.Context, p BroadcastParams) (bool, error) {
		if len(p.Value) == 0 {
			return false, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: /value: missing")
		}
		if err := subs.Publish(ctx, "broadcast", p.Value); err != nil {
			return false, stateError(ctx, "demo_broadcast", err)
		}
		return true, nil
	}, jsonrpc.MethodDoc{
		Summary:  `Sends value to every "broadcast" subscriber (demo_subscribe ["broadcast"]) of every instance sharing the broker; returns true.`,
		Examples: []jsonrpc.Example{{Name: "a number", Params: []byte(`{"value":7}`), Result: []byte(`true`)}},
	})
}

// CodeStateUnavailable answers a call that needs the shared state when it
// cannot be reached (a NATS server down): the call did nothing, and may be
// tried again.
const CodeStateUnavailable = -32050

// stateError is the error of a call whose shared state failed: the
// call's own end (ctx's error) as it is, anything else (a store's own
// timeout included) as CodeStateUnavailable.
func stateError(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &jsonrpc.Error{Code: CodeStateUnavailable, Message: method + ": shared state unavailable: " + err.Error()}
}
