// Package state holds the seams through which a server keeps what outlives
// one call: the events of resumable Streamable HTTP streams (EventStore),
// MCP 2025 sessions (SessionStore), the events of subscriptions and change
// feeds (Broker) and the keys that authenticate MCP requestState
// (KeyRing). Each seam has
// an in-memory implementation here, the one a single process uses, and
// package state/statetest checks any implementation against the contracts
// below, so that a shared one (package github.com/seedhq/jsonrpc/nats has
// JetStream ones) can replace the memory one behind a load balancer.
//
// # EventStore
//
// An EventStore keeps the recent events of named streams. Append stores an
// event and returns its sequence number; the numbers of one stream strictly
// increase in the order Append returned (they need not be contiguous: a
// shared store may number every stream from one counter). After(stream,
// seq) returns the retained events of stream numbered above seq, oldest
// first, and complete, which is true only when no event of stream numbered
// above seq was evicted: a caller resuming exactly (Last-Event-ID) refuses
// an incomplete read rather than skip events. A seq that the stream never
// had is a point in its order, not an error; a stream never appended to has
// no events. When a store holds no event of stream at all it may not be
// able to tell "nothing after seq" from "everything evicted", and then
// reports complete false for any seq above 0.
//
// The bounds (Limits) apply to the store as a whole, all streams together:
// past MaxEvents events or MaxBytes bytes of data the oldest events are
// evicted (the newest is always kept, whatever its size), and an event
// older than MaxAge is evicted. A zero bound is no bound. Data is copied:
// the caller may reuse its buffer after Append, and must not modify the
// Data of the events After returns.
//
// A store that can tell a reader of a new event implements Follower:
// Wait(stream, seq) returns once an event of stream numbered above seq is
// stored (an event appended to another stream does not end it, nor does
// one evicted before Wait looked; it may end as an event is about to be
// stored), so that a reader following a stream appended to on another
// instance calls After when there is something to read.
//
// # KeyRing
//
// A KeyRing holds the keys that sign and verify requestState (HMAC):
// Keys lists them newest first; the first signs and any verifies, so a
// rotation (Rotate puts a new key first) never refuses a state signed just
// before it. A ring keeps its Retain newest keys and drops older ones;
// Remove drops one at once (a compromised key). Callers must not modify
// the Secrets Keys returns. A shared ring makes a
// rotation on one instance seen by every instance, without a restart.
// As jsonrpc.InputRounds.KeyRing, Keys is called by every request that
// signs or verifies a requestState, so it answers from memory (a shared
// ring keeps a copy current, as the JetStream one does by a watch); the
// key's id travels in the requestState in clear, so it is no secret.
//
// # SessionStore
//
// A SessionStore keeps what a server knows of an MCP 2025 session between
// requests: its id, negotiated protocol version, client capabilities and
// client info, and its expiry. Create refuses an id held by a live
// session (ErrSessionExists; of concurrent Creates of one id exactly one
// succeeds); a session past its Expires, or deleted, is gone: Get, Touch
// and Delete answer ErrNoSession, and its id may be created again. Touch
// moves the expiry (an idle timeout touches on every request). A session
// also keeps Values, what the server set for it after initialize (package
// mcp's log level and resource subscriptions): Set writes one value and
// keeps the others, so concurrent Sets of different keys, through any
// instances, are all kept (a shared store compares and swaps), and one
// that would take the values past MaxSessionValues bytes is refused
// (ErrSessionValuesFull). Create, Touch and Get keep Values as they are.
//
// # Broker
//
// A Broker carries events on topics. A Subscription receives every event
// published on its topic after Subscribe returned, once, in the topic's
// order: one order, the same for every subscriber on every instance,
// which keeps the order of any one caller's Publishes. Publish returns
// once the broker accepted the event. A subscriber that falls too far
// behind (a bound of the implementation) gets ErrSlowSubscriber after
// the events it was still owed, rather than a silent gap. Close ends a
// subscription: Next then returns ErrClosed.
//
// # Errors and concurrency
//
// Every method takes a context and is safe for concurrent use. A shared
// implementation that cannot reach its backing service returns an error
// (wrapping the cause) no later than the context's deadline, or its own
// default timeout when the context has none; it never blocks forever.
// Errors defined here are compared with errors.Is.
package state
