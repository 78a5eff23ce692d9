// Package convention reads and writes the messages of the cancellation
// and progress conventions of the Language Server Protocol ($/cancelRequest,
// $/progress with a work-done token) and of the Model Context Protocol
// (notifications/cancelled, notifications/progress with
// _meta.progressToken), with nothing of a connection in them: the params
// of a cancel and of a progress report, the id a cancel names, the token
// a request carries, and a received progress report; and the bookkeeping
// of the requests a connection serves under a convention: the requests
// read but not yet started that a cancel must still reach (Queued), and
// the progress reports of one request (Progress: its token, values that
// must increase, nothing after its handler returned). The jsonrpc package
// routes them (cancel.go).
package convention
