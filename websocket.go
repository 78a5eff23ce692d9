package jsonrpc

import (
	"context"
	"errors"
	"net/http"
)

// WebSocketHandler returns an http.Handler that upgrades to WebSocket and
// serves one Conn per socket. (stub: being written)
func (s *Server) WebSocketHandler() http.Handler { return http.NotFoundHandler() }

func dialWebSocket(ctx context.Context, url string, cfg *dialConfig) (Client, error) {
	return nil, errors.New("not implemented")
}
