package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/openrpc"
)

// Tools is a set of tools served the way Model Context Protocol clients call
// them: tools/list lists them and tools/call runs one. Add tools with
// AddTool, all of them before serving them with Register.
type Tools struct {
	tools map[string]*tool
	list  []ToolInfo // tools/list's, sorted by name

	// ArgumentErrorsAsResults answers arguments that do not fit a tool's
	// schema with a tool result whose isError is true (what MCP 2025-11-25
	// asks, so that a model can correct itself) instead of -32602.
	ArgumentErrorsAsResults bool
}

// ToolInfo is one entry of the tools/list result.
type ToolInfo struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitzero"`
	InputSchema  *openrpc.Schema `json:"inputSchema"`
	OutputSchema *openrpc.Schema `json:"outputSchema,omitzero"`
}

type tool struct {
	info  ToolInfo
	check *openrpc.Validator
	call  func(ctx context.Context, args []byte) (any, string, error)
}

// AddTool adds a tool to ts: fn runs with the call's arguments decoded into
// A, whose JSON Schema (openrpc.SchemaFor) is the tool's inputSchema and is
// checked before fn runs. Its result R, a struct or a map, is the call's
// structuredContent, and its text content is R's Text() when R is an mcp.Texter,
// its JSON otherwise. An error from fn is the call's result with isError
// true, except a *jsonrpc.Error (sent as the response's error) and the
// context's errors (the call was cancelled). AddTool panics when A has no
// object schema, R is not a struct or map, or the name is taken.
func AddTool[A, R any](ts *Tools, name, description string, fn func(ctx context.Context, args A) (R, error)) {
	in, err := openrpc.SchemaFor[A]()
	if err != nil || in.Type != "object" {
		panic(fmt.Sprintf("demo: tool %s: the arguments type %v needs an object schema (%v)", name, reflect.TypeFor[A](), err))
	}
	check, err := openrpc.Compile(in, nil, "")
	if err != nil {
		panic("demo: tool " + name + ": " + err.Error())
	}
	rt := reflect.TypeFor[R]()
	if k := rt.Kind(); k != reflect.Struct && k != reflect.Map && !(k == reflect.Pointer && rt.Elem().Kind() == reflect.Struct) {
		panic(fmt.Sprintf("demo: tool %s: the result type %v must be a struct or a map (structuredContent is an object)", name, rt))
	}
	out, _ := openrpc.SchemaFor[R]()
	t := &tool{
		info:  ToolInfo{Name: name, Description: description, InputSchema: in, OutputSchema: out},
		check: check,
		call: func(ctx context.Context, raw []byte) (any, string, error) {
			var args A
			if err := jsonv2.Unmarshal(raw, &args, jsonv2.RejectUnknownMembers(true)); err != nil {
				return nil, "", openrpc.ParamsError([]openrpc.Problem{{Path: "/arguments", Problem: err.Error()}})
			}
			r, err := fn(ctx, args)
			if err != nil {
				return nil, "", err
			}
			if tx, ok := any(r).(mcp.Texter); ok {
				return r, tx.Text(), nil
			}
			b, err := jsonv2.Marshal(r)
			return r, string(b), err
		},
	}
	if ts.tools == nil {
		ts.tools = make(map[string]*tool)
	}
	if _, dup := ts.tools[name]; dup || name == "" {
		panic("demo: tool name empty or taken: " + name)
	}
	ts.tools[name] = t
	ts.list = append(ts.list, t.info)
	slices.SortFunc(ts.list, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
}

// InputSchema returns the inputSchema of the tool named, nil when there is
// none: StreamableHTTPOptions.ToolInputSchema, so that the server checks
// the Mcp-Param-* headers of the tools' calls.
func (ts *Tools) InputSchema(name string) json.RawMessage {
	if t, ok := ts.tools[name]; ok {
		if b, err := jsonv2.Marshal(t.info.InputSchema); err == nil {
			return b
		}
	}
	return nil
}

// ListParams are the params of tools/list (all optional).
type ListParams struct {
	Cursor string  `json:"cursor,omitzero" jsonschema:"An opaque pagination cursor (the list has one page)."`
	Meta   ignored `json:"_meta,omitzero" jsonschema:"Request metadata (ignored)."`
}

// ListResult is the result of tools/list.
type ListResult struct {
	Era2026
	Tools []ToolInfo `json:"tools"`
	Cache
}

// ignored is a member decoded to nothing (no copy): metadata the demo does not read.
type ignored struct{}

func (*ignored) UnmarshalJSON([]byte) error { return nil }

// CallParams are the params of tools/call.
type CallParams struct {
	Name      string          `json:"name" jsonschema:"The name of the tool to call."`
	Arguments json.RawMessage `json:"arguments,omitzero" jsonschema:"The tool's arguments: an object matching its inputSchema."`
	Meta      ignored         `json:"_meta,omitzero" jsonschema:"Request metadata (ignored)."`
	// MCP 2026-07-28's multi round-trip: a call sent again with the input
	// it asked for (see jsonrpc.InputRounds).
	InputResponses json.RawMessage `json:"inputResponses,omitzero" jsonschema:"The client's answers to the input the previous round asked for, by key."`
	RequestState   string          `json:"requestState,omitzero" jsonschema:"The opaque state the previous round returned."`
}

// Content is one item of a tool's output.
type Content struct {
	Type string `json:"type" jsonschema:"enum=text"`
	Text string `json:"text"`
}

// CallResult is the result of tools/call.
type CallResult struct {
	Era2026
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitzero"`
	IsError           bool      `json:"isError"`

	input *jsonrpc.InputRequiredResult // the tool needs input first (MCP 2026-07-28)
}

// MarshalJSONTo encodes the result, or the InputRequiredResult of a tool
// that needs input from the client first; MarshalJSON too, in bytes.
func (r CallResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	if r.input != nil {
		return jsonv2.MarshalEncode(enc, r.input)
	}
	type plain CallResult
	return jsonv2.MarshalEncode(enc, plain(r))
}

func (r CallResult) MarshalJSON() ([]byte, error) { return jsonv2.Marshal(r) }

// Call runs the tool name with the raw JSON arguments (nil for none). An
// unknown name is -32602 "Unknown tool: NAME" (as MCP asks in both eras);
// arguments that do not match the tool's schema are -32602 with the
// problems at /arguments/NAME.
func (ts *Tools) Call(ctx context.Context, name string, arguments []byte) (CallResult, error) {
	t := ts.tools[name]
	if t == nil {
		return CallResult{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool: " + name}
	}
	if len(arguments) == 0 || string(arguments) == "null" {
		arguments = []byte("{}")
	}
	if probs := t.check.Validate(arguments); len(probs) > 0 {
		for i := range probs {
			probs[i].Path = "/arguments" + probs[i].Path
		}
		if ts.ArgumentErrorsAsResults {
			return CallResult{Era2026: era(ctx), Content: []Content{{Type: "text", Text: openrpc.ParamsError(probs).Message}}, IsError: true}, nil
		}
		return CallResult{}, openrpc.ParamsError(probs)
	}
	r, text, err := t.call(ctx, arguments)
	var input *jsonrpc.InputRequiredError
	switch {
	case err == nil:
		return CallResult{Era2026: era(ctx), Content: []Content{{Type: "text", Text: text}}, StructuredContent: r}, nil
	case errors.As(err, &input):
		return CallResult{input: &input.Result}, nil
	case errors.As(err, new(*jsonrpc.Error)), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), ctx.Err() != nil:
		return CallResult{}, err
	default:
		return CallResult{Era2026: era(ctx), Content: []Content{{Type: "text", Text: err.Error()}}, IsError: true}, nil
	}
}

// Register serves ts on mux as tools/list and tools/call.
func (ts *Tools) Register(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "tools/list", func(ctx context.Context, _ *ListParams) (ListResult, error) {
		return ListResult{Era2026: era(ctx), Tools: ts.list, Cache: publicFor(ctx, mcp.DefaultCacheTTL)}, nil
	}, jsonrpc.MethodDoc{
		Summary:  "Lists the tools: name, description and inputSchema (the JSON Schema of the arguments).",
		Examples: []jsonrpc.Example{{Name: "list", Params: []byte(`{}`)}},
	})
	jsonrpc.Register(mux, "tools/call", func(ctx context.Context, p CallParams) (CallResult, error) {
		return ts.Call(ctx, p.Name, p.Arguments)
	}, jsonrpc.MethodDoc{
		Summary: "Calls a tool with its arguments, as Model Context Protocol clients do.",
		Description: "The result holds the output as content (text) and structuredContent; isError tells a failed tool run. " +
			"An unknown tool is -32602 (Unknown tool: NAME); arguments that do not match the tool's inputSchema are -32602 naming the argument.",
		Errors: []*jsonrpc.Error{
			{Code: jsonrpc.CodeInvalidParams, Message: "Unknown tool"},
			{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"},
		},
		Examples: []jsonrpc.Example{{
			Name:   "add",
			Params: []byte(`{"name":"add","arguments":{"a":2,"b":3}}`),
			Result: []byte(`{"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"isError":false}`),
		}},
	})
}

// The demo tools.

// AddArgs are the arguments of the add tool.
type AddArgs struct {
	A float64 `json:"a" jsonschema:"The first number."`
	B float64 `json:"b" jsonschema:"The second number."`
}

// AddResult is the result of the add tool.
type AddResult struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

// Text returns the sum.
func (r AddResult) Text() string { return strconv.FormatFloat(r.Sum, 'g', -1, 64) }

// EchoArgs are the arguments of the echo tool.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"The text to echo."`
}

// EchoResult is the result of the echo tool.
type EchoResult struct {
	Echo string `json:"text"`
}

// NowArgs are the arguments of the now tool (none).
type NowArgs struct{}

// NowResult is the result of the now tool.
type NowResult struct {
	Time time.Time `json:"time" jsonschema:"The server's time (RFC 3339)."`
}

// Text returns the time in RFC 3339.
func (r NowResult) Text() string { return r.Time.Format(time.RFC3339Nano) }

// SleepArgs are the arguments of the sleep tool.
type SleepArgs struct {
	MS int64 `json:"ms" jsonschema:"description=How long to sleep, in milliseconds.,minimum=0,maximum=600000"`
}

// SleepResult is the result of the sleep tool.
type SleepResult struct {
	SleptMS int64 `json:"slept_ms"`
}

// Text tells how long the tool slept.
func (r SleepResult) Text() string { return "slept " + strconv.FormatInt(r.SleptMS, 10) + " ms" }

// Text returns the echoed text.
func (r EchoResult) Text() string { return r.Echo }

// DemoTools returns the demo's tools: add, echo, now and sleep; echo's
// text is mirrored in the Mcp-Param-Text header (MCP 2026-07-28).
func DemoTools() *Tools {
	ts := &Tools{}
	AddTool(ts, "add", "Adds two numbers.", func(_ context.Context, a AddArgs) (AddResult, error) {
		return AddResult{Sum: a.A + a.B}, nil
	})
	AddTool(ts, "echo", "Returns the text it is given.", func(_ context.Context, a EchoArgs) (EchoResult, error) {
		return EchoResult{Echo: a.Text}, nil
	})
	// MCP 2026-07-28: clients send echo's text in the Mcp-Param-Text header
	// too, and the server checks it (StreamableHTTPOptions.ToolInputSchema).
	ts.tools["echo"].info.InputSchema.Properties["text"].Extra = map[string]any{"x-mcp-header": "Text"}
	AddTool(ts, "now", "Returns the server's time (RFC 3339).", func(_ context.Context, _ NowArgs) (NowResult, error) {
		return NowResult{Time: time.Now()}, nil
	})
	AddTool(ts, "sleep", "Sleeps ms milliseconds, reporting progress every tenth of the time (to a caller that sent a progress token); a cancelled call stops at once.", sleep)
	return ts
}

// sleep is the sleep tool: it reports the milliseconds slept (of the
// total asked) at each tenth of the time, and stops as soon as the call is
// cancelled (the context's error is then the call's).
func sleep(ctx context.Context, a SleepArgs) (SleepResult, error) {
	d := time.Duration(a.MS) * time.Millisecond
	done := time.NewTimer(d)
	defer done.Stop()
	tick := time.NewTicker(max(d/10, time.Millisecond))
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-done.C:
			return SleepResult{SleptMS: a.MS}, nil
		case <-ctx.Done():
			return SleepResult{}, ctx.Err()
		case now := <-tick.C:
			// A report in the same millisecond as the last is refused: skip it.
			jsonrpc.ReportProgress(ctx, float64(now.Sub(start).Milliseconds()), float64(a.MS), "sleeping")
		}
	}
}
