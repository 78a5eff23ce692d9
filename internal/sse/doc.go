// Package sse is the server-sent events side of Streamable HTTP, with
// nothing of JSON-RPC in it: the reader of an event stream (a client's,
// sse.go), the numbered event streams a server writes, each with its
// bounded outbox and its attached HTTP response (eventstream.go), and the
// store of recent events that lets a client resume with Last-Event-ID
// (eventstore.go), and a stream's events in a state.EventStore shared by
// a server's instances, followed by another instance (shared.go).
package sse
