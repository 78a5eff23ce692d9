// Package pubsub holds the buffers of the jsonrpc package's subscriptions,
// with nothing of a connection in them. On the server, an Outbox is the
// bounded queue of one subscription's events with its overflow policy
// (wait, drop the oldest, or end), and the goroutine that writes them in
// order once the subscribe response has gone (server.go); a Sub is one
// live subscription (its id, its producer's context, its Outbox), and Live
// the registry of them by connection and id, with the per-connection cap,
// that ends a connection's subscriptions when it ends (sub.go, live.go, with
// the ids, the method names and the split of a subscribe call's params).
// A Fanout hands the events of topics, kinds whose events are published
// rather than produced per subscription, to their subscriptions: itself
// without a broker, or through one (a state.Broker), each instance relaying
// the broker's events of a topic to its own subscriptions (topic.go).
// On the client,
// a Registry routes each event notification, on the read goroutine and in
// order, to the bounded Queue of its subscription, holding the events that
// arrive before the subscribe call's caller has claimed the id (client.go).
// Memory stays bounded however fast events come: a queue that overflows
// ends its subscription with ErrOverflow.
package pubsub
