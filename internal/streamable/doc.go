// Package streamable is the HTTP side of the Streamable HTTP transport
// (MCP's), with no JSON-RPC engine in it.
//
// The server's side (server.go, answer.go): the session table (ids, idle
// expiry, the bound on live sessions, each session's standalone stream,
// event store and the numbered streams of its POSTs), GET (the standalone
// stream, or the resumption of a stream with Last-Event-ID), DELETE and
// the 405 of other methods, the MCP-Protocol-Version check, the answer to
// one POST (one JSON body, or an event stream once anything but the reply
// is sent), the inbox of a server connection's Channel, and the routes that bring the client's answers, POSTed apart,
// back to the connection whose call they answer (Route).
//
// The client's side (client.go): its Channel (a POST per message, its
// answer read as JSON or as an event stream, or a JSON answer lent to the
// call it answers (LendReply: CallIter decodes it as it arrives), the session and
// protocol-version headers, the standalone GET stream, the resumption of a
// stream cut off, DELETE at Close) and the counting of the calls and
// responses a message holds (messages.go).
//
// With a state.SessionStore (ServerConfig.Store) the sessions are shared
// with the other instances using it (store.go): created there by
// initialize, looked up there by every request, adopted by an instance
// that does not hold them, ended everywhere by DELETE or expiry. With a
// shared state.EventStore (ServerConfig.Shared) the streams' events are
// kept there (shared.go): a GET with Last-Event-ID for a POST's stream
// that this instance does not serve follows it in the store, and answers
// its calls with -32001 if the instance writing it falls silent.
//
// It imports only internal/sse, internal/mcp, internal/wire,
// internal/connrt (the ids of the server's calls) and state. What it needs of the
// root package comes in as funcs (ServerConfig.WriteTimeout and OnEnd;
// ClientConfig's ReadReply, LendReply, Failed, ContextHeader, Logger), as the
// io.Closer of a session's connection and as the Target of a route. The
// root keeps the JSON-RPC side: a POST is dispatched once, like any
// message, with a sink that answers it (JSON or an event stream, served on
// a connection of its own), the stateless revision's checks, SessionConn.
package streamable
