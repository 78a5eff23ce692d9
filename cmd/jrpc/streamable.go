package main

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/seedhq/jsonrpc"
)

// mcpVersion is the MCP revision jrpc asks for when it initialises a session.
const mcpVersion = "2025-11-25"

// streamableClient is the client of --streamable. A server that requires a
// session (400 to a request without one, as MCP servers answer) is
// initialised the MCP way first, once (initialize, then
// notifications/initialized), and the request is sent again: a 400 means
// it was not processed.
type streamableClient struct {
	*jsonrpc.Conn
	mu          sync.Mutex
	initialized bool
}

func (c *streamableClient) conn() *jsonrpc.Conn { return c.Conn }

func (c *streamableClient) Call(ctx context.Context, method string, params, result any) error {
	return c.retry(ctx, method, func() error { return c.Conn.Call(ctx, method, params, result) })
}

func (c *streamableClient) Notify(ctx context.Context, method string, params any) error {
	return c.retry(ctx, method, func() error { return c.Conn.Notify(ctx, method, params) })
}

func (c *streamableClient) Batch(ctx context.Context, b *jsonrpc.Batch) error {
	return c.retry(ctx, "", func() error { return c.Conn.Batch(ctx, b) })
}

func (c *streamableClient) retry(ctx context.Context, method string, send func() error) error {
	err := send()
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusBadRequest || method == "initialize" {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initialized {
		return err
	}
	c.initialized = true
	params := map[string]any{
		"protocolVersion": mcpVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "jrpc", "version": version()},
	}
	if ierr := c.Conn.Call(ctx, "initialize", params, nil); ierr != nil {
		return err // not a session server after all: the first answer says why
	}
	if ierr := c.Conn.Notify(ctx, "notifications/initialized", nil); ierr != nil {
		return ierr
	}
	return send()
}
