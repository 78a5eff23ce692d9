// Package convention reads and writes the cancel and progress messages of
// the Language Server Protocol ($/cancelRequest, $/progress with a
// work-done token) and of the Model Context Protocol
// (notifications/cancelled, notifications/progress with
// _meta.progressToken), with nothing of a connection in them, and keeps
// the bookkeeping of a connection that serves under one: the requests read
// but not yet started that a cancel must still reach (Queued), and one
// request's progress reports (Progress). The jsonrpc package routes them.
package convention
