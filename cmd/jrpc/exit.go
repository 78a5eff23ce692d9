package main

import (
	"errors"
	"net/http"
	"strings"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
)

// The exit code rule, the same for every command, flag and transport:
// when the server answered the request with a refusal (a JSON-RPC error
// object, including its limits: -32600 for a message too large, -32005 for
// a rate limit, whether it came as a response, in an HTTP 413 or 429, or as
// a WebSocket close 1009), jrpc exits 1 and prints the error as one JSON
// object on stderr; when the exchange itself failed (no connection, lost
// connection, timeout, an answer that is not JSON-RPC, any other HTTP
// status), it exits 3 with a sentence and a hint.

// refusal returns the JSON-RPC error by which the server refused a request,
// or nil when err is a failure of the exchange. A refusal that did not
// come as a JSON-RPC error object (HTTP 413 with a text body, HTTP 429
// without a body, WebSocket close 1009) is given the code the server uses
// for it on streams.
func refusal(err error) *jsonrpc.Error {
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		return re
	}
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		msg := strings.TrimPrefix(strings.TrimSpace(he.Body), "jsonrpc: ")
		if strings.HasPrefix(msg, "<") || msg == "" { // an HTML error page (a proxy's), or nothing
			msg = strings.ToLower(http.StatusText(he.StatusCode))
		}
		switch he.StatusCode {
		case http.StatusRequestEntityTooLarge:
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: cut(msg) + " (HTTP 413)"}
		case http.StatusTooManyRequests:
			return &jsonrpc.Error{Code: jsonrpc.CodeLimitExceeded, Message: cut(msg) + " (HTTP 429)"}
		}
		return nil
	}
	var ce websocket.CloseError
	if errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		return nil // our own limit (--max-message-size) on the server's answer
	}
	if errors.As(err, &ce) && ce.Code == websocket.StatusMessageTooBig {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "message too large: the server closed the WebSocket with 1009 (" + cut(ce.Reason) + ")"}
	}
	return nil
}
