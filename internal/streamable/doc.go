// Package streamable is the HTTP side of the Streamable HTTP transport
// (MCP's), with no JSON-RPC engine in it: the client's Channel (client.go:
// a POST per message, its answer read as JSON or as an event stream, the
// session and protocol-version headers, the standalone GET stream, the
// resumption of a stream cut off with Last-Event-ID, DELETE at Close) and
// the counting of the calls and responses a message holds (messages.go).
//
// It imports only internal/sse, internal/mcp and internal/wire. What it
// needs of the root package comes in as funcs (ClientConfig): reading a
// JSON answer under the size limit, the error of a non-2xx status, the
// headers of a caller's context, the logger, the error of a closed
// channel.
package streamable
