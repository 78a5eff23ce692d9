// Package pubsub holds the buffers of the jsonrpc package's subscriptions,
// with nothing of a connection in them. On the server: an Outbox is one
// subscription's bounded queue of events under its overflow policy,
// written in order once the subscribe response has gone; a Sub is one live
// subscription, Live the registry of them by connection (capped per
// connection, ended with it), and a Fanout hands the events of topics to
// their subscriptions, itself or through a state.Broker. On the client, a
// Registry routes each event, on the read goroutine and in order, to the
// bounded Queue of its subscription, holding those that arrive before the
// subscribe call's caller has claimed the id. Memory stays bounded however
// fast events come: a queue that overflows ends its subscription with
// ErrOverflow.
package pubsub
