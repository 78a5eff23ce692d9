// Package streamable is the HTTP side of the Streamable HTTP transport
// (MCP's), with no JSON-RPC engine in it.
//
// The server's side (server.go, answer.go): the session table (ids, idle
// expiry, the bound on live sessions, each session's standalone stream,
// event store and its POSTs' numbered streams), GET (the standalone stream,
// or a resumption with Last-Event-ID), DELETE, 405 for other methods, the
// MCP-Protocol-Version check, the answer to one POST (a JSON body, or an
// event stream once anything but the reply is sent), the inbox of a server
// connection's Channel, and the routes that bring the client's answers,
// POSTed apart, back to the connection whose call they answer (Route).
// With a state.SessionStore the sessions are shared by the instances using
// it (store.go); with a state.EventStore, the streams' events (shared.go):
// a GET with Last-Event-ID for a POST's stream served elsewhere follows it
// in the store, and answers its calls with -32001 if its instance falls
// silent.
//
// The client's side (client.go): its Channel (a POST per message, its answer
// read as JSON or as an event stream, or lent to the one call it answers
// (LendReply), the session and protocol-version headers, the standalone GET
// stream, the resumption of a stream cut off, DELETE at Close).
//
// What it needs of the root package comes in as funcs (ServerConfig's
// WriteTimeout, OnEnd and NewConn; ClientConfig's ReadReply, LendReply,
// Failed, ContextHeader, Logger) and as the Target of a route. The root
// keeps the JSON-RPC side: a POST is dispatched once, with a sink that
// answers it, the stateless revision's checks, SessionConn.
package streamable
