package demo

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

// SetLevelParams are the params of logging/setLevel.
type SetLevelParams struct {
	Level string  `json:"level" jsonschema:"enum=debug|info|notice|warning|error|critical|alert|emergency,description=The least severe level the client wants to receive."`
	Meta  ignored `json:"_meta,omitzero" jsonschema:"Request metadata (ignored)."`
}

// LogMessage is the params of notifications/message.
type LogMessage struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitzero"`
	Data   any    `json:"data"`
}

// mcpLog is MCP's logging utility for the demo: each client's level, set
// with logging/setLevel, and notifications/message sent on the client's
// session connection (jsonrpc.SessionConn: over Streamable HTTP, the
// session's GET stream) for the messages at that level or above. A client
// that never set a level gets no log messages. A session kept in a
// SessionStore keeps its level there (jsonrpc.MCPSessionValues), honoured
// by every instance.
type mcpLog struct {
	levels sync.Map // *jsonrpc.Conn -> its index in mcp.LogLevels; it leaves when the connection ends
}

// levelKey keys the level in the Values of a session kept in a
// SessionStore (as package mcp does), so that every instance honours it.
const levelKey = "mcp/level"

// setLevel records level for the session of the request ctx belongs to.
// Where no connection outlives the request (stateless Streamable HTTP)
// there is nowhere to send log messages later, and nothing is kept.
func (l *mcpLog) setLevel(ctx context.Context, level int) error {
	if v := jsonrpc.MCPSessionValues(ctx); v != nil {
		return v.Set(ctx, levelKey, strconv.AppendInt(nil, int64(level), 10))
	}
	if c := jsonrpc.SessionConn(ctx); c != nil {
		if _, known := l.levels.Swap(c, level); !known {
			go func() { <-c.Done(); l.levels.Delete(c) }()
		}
	}
	return nil
}

// log sends data at level to the session of the request ctx belongs to,
// if its client asked for that level. It never waits for the client and
// works after the request was cancelled (the message then travels on the
// session's standalone stream).
func (l *mcpLog) log(ctx context.Context, level int, data any) {
	var c *jsonrpc.Conn
	min, ok := 0, false
	if m := jsonrpc.MCPMetaFromContext(ctx); m != nil {
		// MCP 2026-07-28: the request names its level, and its messages go
		// on its own stream (none for a request without a level).
		c, min = jsonrpc.ConnFromContext(ctx), slices.Index(mcp.LogLevels, m.LogLevel)
		ok = min >= 0
	} else if c = jsonrpc.SessionConn(ctx); c == nil {
		return
	} else if v := jsonrpc.MCPSessionValues(ctx); v != nil {
		n, err := strconv.Atoi(string(v.Value(levelKey)))
		min, ok = n, err == nil
	} else if v, set := l.levels.Load(c); set {
		min, ok = v.(int), true
	}
	if ok && c != nil && level >= min {
		_ = c.Notify(context.WithoutCancel(ctx), "notifications/message", LogMessage{Level: mcp.LogLevels[level], Logger: "jrpc-demo", Data: data})
	}
}

// register serves logging/setLevel on mux.
func (l *mcpLog) register(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "logging/setLevel", func(ctx context.Context, p SetLevelParams) (struct{}, error) {
		i := slices.Index(mcp.LogLevels, p.Level)
		if i < 0 {
			return struct{}{}, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown log level %q", p.Level)
		}
		if err := l.setLevel(ctx, i); err != nil {
			return struct{}{}, jsonrpc.Errorf(-32030, "%v", err) // the session store failed
		}
		return struct{}{}, nil
	}, jsonrpc.MethodDoc{Summary: "MCP logging: the least severe level of the notifications/message the client wants (the demo logs the tool calls it stopped early, at notice)."})
}

// logStopped is a middleware that logs each tool call whose context ended
// before it returned (its client cancelled it, it timed out, the
// connection ended) once the tool has stopped: level notice, data
// {"event": "cancelled", "tool", "after_ms", "reason"}. It wraps the
// methods registered after it (jsonrpc.Mux.Use).
func (l *mcpLog) logStopped(next jsonrpc.Handler) jsonrpc.Handler {
	notice := slices.Index(mcp.LogLevels, "notice")
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method != "tools/call" {
			return next.ServeRPC(ctx, req)
		}
		start := time.Now()
		v, err := next.ServeRPC(ctx, req)
		if ctx.Err() != nil {
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(req.Params, &p)
			l.log(ctx, notice, map[string]any{"event": "cancelled", "tool": p.Name, "after_ms": time.Since(start).Milliseconds(), "reason": context.Cause(ctx).Error()})
		}
		return v, err
	})
}
