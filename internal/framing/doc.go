// Package framing cuts JSON-RPC messages from a byte stream and frames the
// messages written to it: newline-delimited JSON, Content-Length headers
// (the LSP base protocol), or either, detected from the first bytes.
//
// A Stream lends each message as a slice of its read buffer, answers a
// message over the size limit with an *Error (and resynchronises when it
// can), queues concurrent writers behind the one writing, holds replies
// back while a read loop still has input (Hold, Release), lends a message
// whose start its owner recognises to a reader that decodes it as it
// arrives, a line or a Content-Length body (lend.go), and on TCP and
// unix sockets waits for input holding no read buffer (idleread_unix.go).
// Read buffers are reused once their messages are given back, except one
// that lent a message of LargeMessage bytes or more: that one is never
// reused nor written again, and says so (wire.MarkStable), so that the
// strings decoded from its messages share its memory (reuse.go).
//
// It knows nothing of JSON-RPC beyond the byte-order mark and the error
// codes it reports; the root package wraps it as the Channel of
// jsonrpc.NewStream.
package framing
