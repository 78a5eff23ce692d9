package demo

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// The demo under MCP's stateless revision (2026-07-28), beside the session
// era: the same handlers serve both, reading the era from the request
// (jsonrpc.MCPMetaFromContext). It speaks the revisions package mcp does
// (mcp.SessionVersions and mcp.StatelessVersions); its tools/list and
// server/discover stay fresh mcp.DefaultCacheTTL ms (the tools change only
// when the server restarts, or a listener hears list_changed).

// Era2026 holds the members every result of the stateless revision
// carries; zero (and omitted) under the session era.
type Era2026 struct {
	ResultType string          `json:"resultType,omitzero" jsonschema:"complete (MCP 2026-07-28 on)"`
	Meta       json.RawMessage `json:"_meta,omitzero" jsonschema:"Result metadata (MCP 2026-07-28: the server's identity)."`
}

// Cache holds MCP's caching hints of a cacheable result (2026-07-28):
// how long the result stays fresh, and who may cache it.
type Cache struct {
	TTLMs      *int64 `json:"ttlMs,omitzero" jsonschema:"How long the result may be considered fresh, in milliseconds."`
	CacheScope string `json:"cacheScope,omitzero" jsonschema:"enum=public|private,description=Who may cache the result."`
}

// serverInfo is the demo's identity.
var serverInfo = mcp.Implementation{Name: "jrpc-demo", Title: Info.Title, Version: Info.Version}

// era returns the result members for the request ctx belongs to: empty
// under the session era.
func era(ctx context.Context) Era2026 {
	if jsonrpc.MCPMetaFromContext(ctx) == nil {
		return Era2026{}
	}
	return Era2026{ResultType: "complete", Meta: eraMeta}
}

// eraMeta is the _meta of the demo's results, encoded once (read only).
var eraMeta, _ = json.Marshal(map[string]any{jsonrpc.MetaServerInfo: serverInfo})

// publicFor returns the caching hints of a result identical for every
// client, fresh for ttl ms (empty under the session era).
func publicFor(ctx context.Context, ttl int64) Cache {
	if jsonrpc.MCPMetaFromContext(ctx) == nil {
		return Cache{}
	}
	return Cache{TTLMs: &ttl, CacheScope: "public"}
}

// DiscoverParams are the params of server/discover (only _meta).
type DiscoverParams struct {
	Meta ignored `json:"_meta,omitzero" jsonschema:"Request metadata: the protocol version, client identity and capabilities."`
}

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	Era2026
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Instructions      string         `json:"instructions,omitzero"`
	Cache
}

const instructions = "Demo tools: add, echo, greet, now, sleep, test_trigger_tool_change. tools/list gives their schemas."

// registerDiscover serves server/discover: the revisions the demo speaks
// (stateless ones first), its capabilities and identity.
func registerDiscover(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "server/discover", func(_ context.Context, _ DiscoverParams) (DiscoverResult, error) {
		ttl := int64(mcp.DefaultCacheTTL)
		return DiscoverResult{
			Era2026:           Era2026{ResultType: "complete", Meta: eraMeta},
			SupportedVersions: append(slices.Clone(mcp.StatelessVersions), mcp.SessionVersions...),
			Capabilities:      map[string]any{"tools": map[string]any{"listChanged": true}},
			Instructions:      instructions,
			Cache:             Cache{TTLMs: &ttl, CacheScope: "public"},
		}, nil
	}, jsonrpc.MethodDoc{Summary: "MCP 2026-07-28 discovery: the protocol revisions the server speaks, its capabilities and identity."})
}

// GreetArgs are the arguments of the greet tool (none: it asks).
type GreetArgs struct{}

// GreetResult is the result of the greet tool.
type GreetResult struct {
	Greeting string `json:"greeting"`
}

// Text returns the greeting.
func (r GreetResult) Text() string { return r.Greeting }

// ElicitResult is a client's answer to elicitation/create.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitzero"`
}

// nameRequest is the greet tool's question.
var nameRequest = jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{
	"mode":    "form",
	"message": "What is your name?",
	"requestedSchema": map[string]any{
		"type":       "object",
		"properties": map[string]any{"name": map[string]any{"type": "string", "description": "Your name"}},
		"required":   []string{"name"},
	},
}}

// addGreet adds the greet tool, which needs input from the user: it asks
// for a name (elicitation) through rounds: over the session under
// 2025-11-25, in a multi round-trip under 2026-07-28.
func addGreet(ts *Tools, rounds *jsonrpc.InputRounds) {
	AddTool(ts, "greet", "Asks the user's name (elicitation) and greets them.", func(ctx context.Context, _ GreetArgs) (GreetResult, error) {
		var answer ElicitResult
		if err := rounds.Ask(ctx, "name", nameRequest, &answer); err != nil {
			return GreetResult{}, err
		}
		name, _ := answer.Content["name"].(string)
		if answer.Action != "accept" || name == "" {
			return GreetResult{Greeting: "Hello, whoever you are (" + answer.Action + ")"}, nil
		}
		return GreetResult{Greeting: "Hello, " + name + "!"}, nil
	})
}

// newRounds returns the multi round-trip of the demo, signed by ring's
// newest key when ring is not nil, else by keys (a random key when none is
// given: then only this process can resume); keys verify in either case.
func newRounds(keys [][]byte, ring state.KeyRing) *jsonrpc.InputRounds {
	if len(keys) == 0 && ring == nil {
		k := make([]byte, 32)
		rand.Read(k)
		keys = [][]byte{k}
	}
	return &jsonrpc.InputRounds{Keys: keys, KeyRing: ring}
}
