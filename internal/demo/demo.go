// Package demo is the demo service that `jrpc serve` serves by default and
// that the tests use: the JSON-RPC specification's example methods plus a
// few diagnostics (echo, sleep, big, error, panic, bad_result), MCP-style
// tools (tools/list, tools/call with add, echo, now and sleep), discovery
// (rpc.discover) and params validation against the methods' schemas; and
// the browser test that drives the explorer against it (browser.go).
package demo

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

// SubtractParams are the params of subtract, by name or by position.
type SubtractParams struct {
	Minuend    float64 `json:"minuend" jsonschema:"The number to subtract from."`
	Subtrahend float64 `json:"subtrahend" jsonschema:"The number subtracted."`
}

// SleepParams are the params of sleep.
type SleepParams struct {
	MS int64 `json:"ms" jsonschema:"description=How long to wait, in milliseconds.,minimum=0"`
}

// BigParams are the params of big.
type BigParams struct {
	N int `json:"n" jsonschema:"description=The length of the string.,minimum=0,maximum=67108864"`
}

// ErrorParams are the params of error: the error object to return.
type ErrorParams struct {
	Code    int64           `json:"code" jsonschema:"The error code."`
	Message string          `json:"message" jsonschema:"The error message."`
	Data    json.RawMessage `json:"data,omitempty" jsonschema:"Any JSON value, returned as the error's data."`
}

// MaxBig bounds the n of big.
const MaxBig = 64 << 20

// Info describes the demo service in its discovery document.
var Info = openrpc.Info{
	Title:       "jsonrpc demo service",
	Version:     "1.0.0",
	Description: "The JSON-RPC 2.0 specification's example methods, a few diagnostics, and MCP-style tools (tools/list, tools/call).",
}

// NewMux returns a Mux with the whole demo service, with sh's shared state
// (Shared{}: this process's memory): params validation against the
// methods' schemas, the demo methods, the demo tools (tools/list,
// tools/call), the demo subscriptions (demo_subscribe) and rpc.discover.
func (sh Shared) NewMux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	mux.Use(openrpc.Validate(mux))
	RegisterMethods(mux)
	DemoTools().Register(mux)
	sh.RegisterSubscriptions(mux)
	openrpc.Register(mux, Info)
	return mux
}

// RegisterMethods adds the demo methods alone to mux: those of the
// specification's examples and the diagnostics.
func RegisterMethods(mux *jsonrpc.Mux) {
	registerCountdown(mux)
	subtract := func(_ context.Context, p SubtractParams) (float64, error) { return p.Minuend - p.Subtrahend, nil }
	jsonrpc.Register(mux, "subtract", subtract, jsonrpc.MethodDoc{
		Summary:     "Subtracts subtrahend from minuend.",
		Description: "Params by position [minuend, subtrahend] or by name.",
		Examples: []jsonrpc.Example{
			{Name: "by position", Params: []byte(`[42,23]`), Result: []byte(`19`)},
			{Name: "by name", Params: []byte(`{"subtrahend":23,"minuend":42}`), Result: []byte(`19`)},
		},
	})

	jsonrpc.Register(mux, "minus", subtract, jsonrpc.MethodDoc{
		Summary:         "Subtracts subtrahend from minuend (the old name of subtract).",
		Deprecated:      true,
		DeprecatedSince: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
		Replacement:     "subtract",
		Sunset:          time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC),
	})

	jsonrpc.Register(mux, "sum", func(_ context.Context, xs []float64) (float64, error) {
		total := 0.0
		for _, x := range xs {
			total += x
		}
		return total, nil
	}, jsonrpc.MethodDoc{
		Summary:    "Adds up an array of numbers ([] gives 0).",
		ParamNames: []string{"numbers"},
		Examples:   []jsonrpc.Example{{Name: "three", Params: []byte(`[1,2,4]`), Result: []byte(`7`)}},
	})

	accept := func(_ context.Context, _ json.RawMessage) (any, error) { return nil, nil }
	jsonrpc.Register(mux, "update", accept, jsonrpc.MethodDoc{Summary: "Accepts any params; returns null."})
	jsonrpc.Register(mux, "notify_hello", accept, jsonrpc.MethodDoc{Summary: "Accepts any params; returns null."})

	jsonrpc.Register(mux, "get_data", func(_ context.Context, _ json.RawMessage) ([]any, error) {
		return []any{"hello", 5}, nil
	}, jsonrpc.MethodDoc{Summary: `Returns ["hello", 5].`})

	jsonrpc.Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) {
		if p == nil {
			return json.RawMessage("null"), nil
		}
		return p, nil
	}, jsonrpc.MethodDoc{Summary: "Returns its params unchanged (null when omitted)."})

	jsonrpc.Register(mux, "sleep", func(ctx context.Context, p SleepParams) (int64, error) {
		if p.MS < 0 {
			return 0, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: /ms: must not be negative")
		}
		r, err := sleep(ctx, SleepArgs(p)) // the sleep tool's (its params carry no progress token)
		return r.SleptMS, err
	}, jsonrpc.MethodDoc{
		Summary: "Waits ms milliseconds (or until cancelled) and returns ms.",
		Errors:  []*jsonrpc.Error{{Code: jsonrpc.CodeRequestCanceled, Message: "request canceled"}},
	})

	jsonrpc.Register(mux, "big", func(_ context.Context, p BigParams) (string, error) {
		if p.N < 0 || p.N > MaxBig {
			return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: /n: must be between 0 and %d", MaxBig)
		}
		return strings.Repeat("x", p.N), nil
	}, jsonrpc.MethodDoc{Summary: "Returns a string of n 'x' characters."})

	jsonrpc.Register(mux, "error", func(_ context.Context, p ErrorParams) (any, error) {
		return nil, &jsonrpc.Error{Code: p.Code, Message: p.Message, Data: p.Data}
	}, jsonrpc.MethodDoc{
		Summary:  "Returns exactly the error object given as params.",
		Examples: []jsonrpc.Example{{Name: "server error", Params: []byte(`{"code":-32000,"message":"busy"}`)}},
	})

	jsonrpc.Register(mux, "panic", func(_ context.Context, _ json.RawMessage) (any, error) {
		panic("demo: panic requested")
	}, jsonrpc.MethodDoc{
		Summary: "Panics; the server answers -32603 and keeps serving.",
		Errors:  []*jsonrpc.Error{{Code: jsonrpc.CodeInternalError, Message: "internal error"}},
	})

	jsonrpc.Register(mux, "bad_result", func(_ context.Context, _ json.RawMessage) (any, error) {
		return func() {}, nil // a func cannot be encoded as JSON
	}, jsonrpc.MethodDoc{
		Summary: "Returns a value that cannot be encoded (the server answers -32603).",
		Errors:  []*jsonrpc.Error{{Code: jsonrpc.CodeInternalError, Message: "internal error"}},
	})
}
