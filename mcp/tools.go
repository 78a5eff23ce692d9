package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

// Tool describes a tool in tools/list. AddTool fills InputSchema and
// OutputSchema from the handler's types when they are nil.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitzero"`
	Description  string          `json:"description,omitzero"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitzero"`
	Annotations  map[string]any  `json:"annotations,omitzero"`
	Meta         map[string]any  `json:"_meta,omitzero"`
	// HeaderParams mirrors top-level arguments in HTTP headers under
	// 2026-07-28: property name -> header name (the client sends the value
	// in Mcp-Param-<header> too, and the server checks it). AddTool marks
	// them "x-mcp-header" in the inputSchema.
	HeaderParams map[string]string `json:"-"`
	// TaskSupport lets the tool run as a task (the Tasks extension):
	// TaskOptional or TaskRequired; "" for a plain call only.
	TaskSupport string `json:"-"`
	// DeferTask runs a task tool's handler in the request until it calls
	// StartTask: what it asks before is answered by multi round-trip (the
	// client calls again), and the call becomes a task there.
	DeferTask bool `json:"-"`
}

// ToolResult is a tool's result as MCP sends it. A handler returning
// *ToolResult (or ToolResult) chooses its content itself: any mix of
// TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink.
type ToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitzero"`
	IsError           bool      `json:"isError,omitzero"`
}

// Texter is implemented by a typed result that reads better as text than
// as JSON: its Text is the result's text content.
type Texter interface{ Text() string }

type tool struct {
	info  Tool
	check *openrpc.Validator // nil: arguments are not checked here
	call  func(ctx context.Context, args json.RawMessage) (*ToolResult, error)
}

// AddTool adds (or replaces) a tool whose arguments decode into A (its
// JSON Schema is the inputSchema, checked before fn runs: a mismatch is a
// result with isError naming the argument) and whose result is R: a
// *ToolResult or ToolResult as it is; otherwise R (a struct or map) is the
// structuredContent (its schema the outputSchema) and its text content is
// R's Text() or its JSON. An error from fn is a result with isError and
// its text, except a *jsonrpc.Error (the response's error), the context's
// errors, and what Ask returns.
func AddTool[A, R any](s *Server, t Tool, fn func(ctx context.Context, args A) (R, error)) {
	in, err := openrpc.SchemaFor[A]()
	if err != nil || in.Type != "object" {
		panic(fmt.Sprintf("mcp: tool %s: the arguments type %v needs an object schema (%v)", t.Name, reflect.TypeFor[A](), err))
	}
	if in.Properties == nil {
		in.Properties = map[string]*openrpc.Schema{}
	}
	check, err := openrpc.Compile(in, nil, "")
	if err != nil {
		panic("mcp: tool " + t.Name + ": " + err.Error())
	}
	markHeaders(t, in)
	if t.InputSchema == nil {
		t.InputSchema, _ = jsonv2.Marshal(in)
	}
	rt := reflect.TypeFor[R]()
	raw := rt == reflect.TypeFor[*ToolResult]() || rt == reflect.TypeFor[ToolResult]()
	if !raw && t.OutputSchema == nil {
		if out, err := openrpc.SchemaFor[R](); err == nil && out.Type == "object" {
			t.OutputSchema, _ = jsonv2.Marshal(out)
		}
	}
	s.addTool(&tool{info: t, check: check, call: func(ctx context.Context, b json.RawMessage) (*ToolResult, error) {
		var args A
		if err := jsonv2.Unmarshal(b, &args); err != nil {
			return nil, openrpc.ParamsError([]openrpc.Problem{{Path: "/arguments", Problem: err.Error()}})
		}
		r, err := fn(ctx, args)
		if err != nil {
			return nil, err
		}
		return toolResult(any(r))
	}})
}

// markHeaders marks t's HeaderParams "x-mcp-header" in its input schema.
func markHeaders(t Tool, in *openrpc.Schema) {
	for prop, header := range t.HeaderParams {
		p := in.Properties[prop]
		if p == nil {
			panic("mcp: tool " + t.Name + ": HeaderParams names no argument " + prop)
		}
		if p.Extra == nil {
			p.Extra = map[string]any{}
		}
		p.Extra["x-mcp-header"] = header
	}
}

// AddRawTool adds (or replaces) a tool whose inputSchema is t.InputSchema
// as given (any JSON Schema 2020-12 object schema, kept as it is) and
// whose handler takes the raw arguments object.
func (s *Server) AddRawTool(t Tool, fn func(ctx context.Context, args json.RawMessage) (*ToolResult, error)) {
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	s.addTool(&tool{info: t, call: fn})
}

// RemoveTool removes a tool (clients are told the list changed).
func (s *Server) RemoveTool(name string) {
	s.mu.Lock()
	_, ok := s.tools[name]
	delete(s.tools, name)
	s.toolOrder = slices.DeleteFunc(s.toolOrder, func(n string) bool { return n == name })
	s.mu.Unlock()
	if ok {
		s.changed("tools")
	}
}

func (s *Server) addTool(t *tool) {
	if t.info.Name == "" {
		panic("mcp: a tool needs a name")
	}
	s.mu.Lock()
	if s.tools[t.info.Name] == nil {
		s.toolOrder = append(s.toolOrder, t.info.Name)
	}
	s.tools[t.info.Name] = t
	s.mu.Unlock()
	s.changed("tools")
}

// toolResult is the result of a typed tool's value.
func toolResult(r any) (*ToolResult, error) {
	switch v := r.(type) {
	case *ToolResult:
		return v, nil
	case ToolResult:
		return &v, nil
	case Texter:
		return &ToolResult{Content: []Content{TextContent(v.Text())}, StructuredContent: r}, nil
	}
	b, err := jsonv2.Marshal(r)
	if err != nil {
		return nil, err
	}
	return &ToolResult{Content: []Content{TextContent(string(b))}, StructuredContent: json.RawMessage(b)}, nil
}

// inputSchema is the inputSchema of the tool named (nil for none), for
// the Mcp-Param-* header checks.
func (s *Server) inputSchema(name string) json.RawMessage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.tools[name]; t != nil {
		return t.info.InputSchema
	}
	return nil
}

type toolsListResult struct {
	era
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitzero"`
	cache
}

type callParams struct {
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments,omitzero"`
	Meta           json.RawMessage `json:"_meta,omitzero"`
	InputResponses json.RawMessage `json:"inputResponses,omitzero"`
	RequestState   string          `json:"requestState,omitzero"`
	Task           json.RawMessage `json:"task,omitzero"`
}

// callResult is tools/call's result, or the InputRequiredResult of a
// tool that needs input first (stateless era).
type callResult struct {
	era
	*ToolResult
	input *jsonrpc.InputRequiredResult
	task  *taskView // the tool runs as a task: CreateTaskResult
}

func (r callResult) MarshalJSON() ([]byte, error) {
	if r.input != nil {
		return jsonv2.Marshal(r.input)
	}
	if r.task != nil {
		return jsonv2.Marshal(r.task)
	}
	type plain struct {
		era
		*ToolResult
	}
	return jsonv2.Marshal(plain{r.era, r.ToolResult})
}

type requestMetaKey struct{}

// RequestMeta returns the _meta of the request a handler serves (the
// progressToken among others), nil without one.
func RequestMeta(ctx context.Context) json.RawMessage {
	m, _ := ctx.Value(requestMetaKey{}).(json.RawMessage)
	return m
}

func (s *Server) registerTools(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "tools/list", func(ctx context.Context, p *listParams) (toolsListResult, error) {
		s.mu.RLock()
		names := slices.Clone(s.toolOrder)
		s.mu.RUnlock()
		var cursor string
		if p != nil {
			cursor = p.Cursor
		}
		names, next, err := s.page(names, cursor)
		if err != nil {
			return toolsListResult{}, err
		}
		out := make([]Tool, 0, len(names))
		s.mu.RLock()
		for _, n := range names {
			if t := s.tools[n]; t != nil {
				out = append(out, t.info)
			}
		}
		s.mu.RUnlock()
		return toolsListResult{era: s.era(ctx), Tools: out, NextCursor: next, cache: s.cache(ctx, "public")}, nil
	})
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, p callParams) (callResult, error) {
		return s.callTool(context.WithValue(ctx, requestMetaKey{}, p.Meta), p.Name, p.Arguments)
	})
}

// callTool runs the tool name.
func (s *Server) callTool(ctx context.Context, name string, args json.RawMessage) (callResult, error) {
	s.mu.RLock()
	t := s.tools[name]
	s.mu.RUnlock()
	if t == nil {
		return callResult{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool: " + name}
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if t.check != nil {
		if probs := t.check.Validate(args); len(probs) > 0 {
			for i := range probs {
				probs[i].Path = "/arguments" + probs[i].Path
			}
			return callResult{era: s.era(ctx), ToolResult: &ToolResult{Content: []Content{TextContent(openrpc.ParamsError(probs).Message)}, IsError: true}}, nil
		}
	}
	if t.info.TaskSupport != "" {
		switch {
		case declaresTasks(ctx) && t.info.DeferTask:
			return s.deferTask(ctx, t, args)
		case declaresTasks(ctx):
			return s.startTask(ctx, t, args)
		case t.info.TaskSupport == TaskRequired:
			return callResult{}, missingTasks()
		}
	}
	r, err := t.call(ctx, args)
	return s.outcome(ctx, r, err)
}

// outcome is tools/call's answer to a tool's run.
func (s *Server) outcome(ctx context.Context, r *ToolResult, err error) (callResult, error) {
	switch input := asInput(err); {
	case err == nil:
		if r.Content == nil {
			r.Content = []Content{}
		}
		return callResult{era: s.era(ctx), ToolResult: r}, nil
	case input != nil:
		return callResult{input: &input.Result}, nil
	case errors.As(err, new(*jsonrpc.Error)), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		return callResult{}, err
	default:
		return callResult{era: s.era(ctx), ToolResult: &ToolResult{Content: []Content{TextContent(err.Error())}, IsError: true}}, nil
	}
}
