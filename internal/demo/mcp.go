package demo

import (
	"context"
	"slices"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/openrpc"
)

// InitializeParams are the params of MCP's initialize request.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    map[string]any     `json:"capabilities"`
	ClientInfo      mcp.Implementation `json:"clientInfo"`
	Meta            map[string]any     `json:"_meta,omitzero"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    map[string]any     `json:"capabilities"`
	ServerInfo      mcp.Implementation `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitzero"`
}

// registerMCP adds MCP's lifecycle to mux: initialize (version
// negotiation, the tools and logging capabilities),
// notifications/initialized, ping, and log's logging/setLevel.
func registerMCP(mux *jsonrpc.Mux, log *mcpLog) {
	log.register(mux)
	jsonrpc.Register(mux, "initialize", func(_ context.Context, p InitializeParams) (InitializeResult, error) {
		v := p.ProtocolVersion // the client's when the demo speaks it, else the newest
		if !slices.Contains(mcp.SessionVersions, v) {
			v = mcp.SessionVersions[0]
		}
		return InitializeResult{
			ProtocolVersion: v,
			Capabilities:    map[string]any{"tools": map[string]any{"listChanged": false}, "logging": map[string]any{}},
			ServerInfo:      serverInfo,
			Instructions:    instructions,
		}, nil
	}, jsonrpc.MethodDoc{Summary: "MCP initialization: negotiates the protocol revision and states the server's capabilities."})
	jsonrpc.Register(mux, "notifications/initialized", func(context.Context, map[string]any) (any, error) {
		return nil, nil
	}, jsonrpc.MethodDoc{Summary: "MCP: the client finished initializing (a notification)."})
	jsonrpc.Register(mux, "ping", func(context.Context, map[string]any) (struct{}, error) {
		return struct{}{}, nil
	}, jsonrpc.MethodDoc{Summary: "MCP ping: answers {}."})
}

// NewMCPMux returns the demo service as an MCP server of both eras, with
// sh's shared state: the whole demo, with MCP's lifecycle, tool argument
// errors as tool results with isError (MCP 2025-11-25) instead of -32602,
// and MCP's logging utility: a client that sent logging/setLevel (notice or
// below) gets a notifications/message for each tool call that stopped
// because it was cancelled, on its session connection (over Streamable
// HTTP, the session's GET stream). Requests of MCP 2026-07-28 (their _meta
// names the revision) are served statelessly on every transport:
// server/discover, results with resultType and caching hints, and the
// greet tool's question as a multi round-trip whose requestState is signed
// with stateKeys (the first signs, any verifies; a random key when none is
// given, which only this process knows). Its tool test_trigger_tool_change
// (named as in MCP's conformance fixture) sends
// notifications/tools/list_changed to every subscriptions/listen stream
// that asked for toolsListChanged, on every instance sharing sh.Broker.
func (sh Shared) NewMCPMux(stateKeys ...[]byte) *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	log := &mcpLog{}
	mux.Use(jsonrpc.MCPStateless(mcp.StatelessVersions...), openrpc.Validate(mux), log.logStopped)
	RegisterMethods(mux)
	ts := DemoTools()
	addGreet(ts, newRounds(stateKeys, sh.KeyRing))
	feed := &jsonrpc.ChangeFeed{Supports: []string{"toolsListChanged"}, Broker: sh.Broker}
	addTrigger(ts, feed)
	ts.ArgumentErrorsAsResults = true
	ts.Register(mux)
	sh.RegisterSubscriptions(mux)
	registerMCP(mux, log)
	registerDiscover(mux)
	// MCP 2026-07-28's change notifications: the demo's tools never change
	// while it runs, but test_trigger_tool_change says they did.
	mux.Handle("subscriptions/listen", feed, jsonrpc.MethodDoc{
		Summary: "MCP 2026-07-28: a stream of the change notifications the client opts in to (toolsListChanged), acknowledged first."})
	openrpc.Register(mux, Info)
	return mux
}

// TriggerResult is the result of test_trigger_tool_change.
type TriggerResult struct {
	Triggered bool `json:"triggered"`
}

// Text says what the conformance fixture's tool says.
func (TriggerResult) Text() string { return "Mutation triggered" }

// addTrigger adds test_trigger_tool_change: it publishes toolsListChanged
// on feed (the tool list itself stays as it is).
func addTrigger(ts *Tools, feed *jsonrpc.ChangeFeed) {
	AddTool(ts, "test_trigger_tool_change", "Sends notifications/tools/list_changed to every subscriptions/listen stream that asked for toolsListChanged.",
		func(ctx context.Context, _ struct{}) (TriggerResult, error) {
			if err := feed.Publish("toolsListChanged"); err != nil {
				return TriggerResult{}, stateError(ctx, "test_trigger_tool_change", err)
			}
			return TriggerResult{Triggered: true}, nil
		})
}
