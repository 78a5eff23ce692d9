// Package wsconn is the WebSocket side of the jsonrpc package's WebSocket
// transport, on github.com/coder/websocket, with nothing of JSON-RPC in it
// but one message per text frame: the Channel that reads and writes the
// messages (whole, or a message written in frames), pings the peer on a
// timer (no goroutine while idle) and drops it when a pong does not come,
// maps close codes (channel.go); the Lending channel, which hands a
// message to a reader of its own as it arrives (lend.go); and the server's handshake helpers: small
// socket buffers for hijacked connections and the headers a connection
// keeps (accept.go).
package wsconn
