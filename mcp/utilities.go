package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/seedhq/jsonrpc"
)

// LogLevels are MCP's log levels, least severe first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref struct {
		Type string `json:"type"` // "ref/prompt" or "ref/resource"
		Name string `json:"name,omitzero"`
		URI  string `json:"uri,omitzero"`
	} `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitzero"`
	} `json:"context,omitzero"`
	Meta json.RawMessage `json:"_meta,omitzero"`
}

// Completion is the completion of an argument's value.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitzero"`
	HasMore bool     `json:"hasMore"`
}

type completeResult struct {
	era
	Completion Completion `json:"completion"`
}

type setLevelParams struct {
	Level string          `json:"level"`
	Meta  json.RawMessage `json:"_meta,omitzero"`
}

// logMessage is the params of notifications/message.
type logMessage struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitzero"`
	Data   any    `json:"data"`
}

func (s *Server) registerUtilities(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "completion/complete", func(ctx context.Context, p CompleteParams) (completeResult, error) {
		c := Completion{Values: []string{}}
		if s.Complete != nil {
			var err error
			if c, err = s.Complete(ctx, p); err != nil {
				return completeResult{}, err
			}
			if c.Values == nil {
				c.Values = []string{}
			}
		}
		return completeResult{era: s.era(ctx), Completion: c}, nil
	})
	jsonrpc.Register(mux, "logging/setLevel", func(ctx context.Context, p setLevelParams) (era, error) {
		i := slices.Index(LogLevels, p.Level)
		if i < 0 {
			return era{}, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: unknown log level %q", p.Level)
		}
		if v := jsonrpc.MCPSessionValues(ctx); v != nil {
			if err := v.Set(ctx, levelKey, strconv.AppendInt(nil, int64(i), 10)); err != nil {
				return era{}, storeFailed(err)
			}
		} else if ss := s.join(ctx); ss != nil {
			s.mu.Lock()
			ss.level = i
			s.mu.Unlock()
		}
		return s.era(ctx), nil
	})
}

// Log sends a log message (notifications/message) about the request ctx
// belongs to, when its client wants that level: under the stateless era
// the request's _meta logLevel (none: no message), on the request's own
// stream; under the session era the level the session set with
// logging/setLevel (none set: every message), on the request's stream;
// with a SessionStore, the level as the store told this instance at the
// request's session check (SessionStaleness: set through another instance
// up to that long ago may be missed).
func (s *Server) Log(ctx context.Context, level, logger string, data any) {
	i := slices.Index(LogLevels, level)
	if i < 0 {
		return
	}
	if m := jsonrpc.MCPMetaFromContext(ctx); m != nil {
		if min := slices.Index(LogLevels, m.LogLevel); min < 0 || i < min {
			return
		}
	} else if v := jsonrpc.MCPSessionValues(ctx); v != nil {
		if min, err := strconv.Atoi(string(v.Value(levelKey))); err == nil && i < min {
			return
		}
	} else if sc := jsonrpc.SessionConn(ctx); sc != nil {
		s.mu.RLock()
		ss := s.sessions[sc]
		s.mu.RUnlock()
		if ss != nil && ss.level >= 0 && i < ss.level {
			return
		}
	}
	_ = jsonrpc.ConnFromContext(ctx).Notify(context.WithoutCancel(ctx), "notifications/message", logMessage{Level: level, Logger: logger, Data: data})
}

// Ask asks the client of the request ctx belongs to for input (key names
// the question): elicitation/create, sampling/createMessage or
// roots/list, with s.Rounds (see jsonrpc.InputRounds.Ask: a call over the
// session, or a multi round-trip); in a task, it parks the task in
// input_required until tasks/update answers. A client that did not declare
// the capability gets -32021 in both eras, and is not asked.
func (s *Server) Ask(ctx context.Context, key string, req jsonrpc.InputRequest, result any) error {
	return s.AskAll(ctx, []jsonrpc.Question{{Key: key, Request: req, Result: result}})
}

// AskAll asks several questions at once (one round under 2026-07-28, one
// input_required in a task): see jsonrpc.InputRounds.AskAll.
func (s *Server) AskAll(ctx context.Context, qs []jsonrpc.Question) error {
	if tr, _ := ctx.Value(taskKey{}).(*taskRun); tr != nil {
		if tr.active.Load() {
			return s.askInTask(ctx, tr, qs)
		}
	}
	return s.Rounds.AskAll(ctx, qs)
}
