// Package wsconn is the WebSocket side of the jsonrpc package's WebSocket
// transport, on github.com/coder/websocket, with nothing of JSON-RPC in it
// but one message per text frame: the Channel (whole messages, or one
// written in frames; pings on a timer, with no goroutine while idle), the
// Lending channel that hands a message to a reader of its own as it
// arrives, and the server's handshake helpers.
package wsconn
