// Package wsconn is the WebSocket side of the jsonrpc package's WebSocket
// transport, on github.com/coder/websocket, with nothing of JSON-RPC in it
// but one message per text frame: the Channel (whole messages, or one
// written in frames; a message handed to a reader of its own as it arrives;
// pings on a timer, with no goroutine while idle) and the server's
// handshake helpers.
package wsconn
