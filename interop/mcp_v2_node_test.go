package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// tsV2Run is what interop/node/mcp_v2_client.mjs prints.
type tsV2Run struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Era             json.RawMessage `json:"era"`
	Tools           struct {
		Names []string `json:"names"`
	} `json:"tools"`
	ListWire struct {
		Meta       json.RawMessage `json:"_meta"`
		ResultType string          `json:"resultType"`
		Tools      []string        `json:"tools"`
		TTLMs      *int64          `json:"ttlMs"`
		CacheScope string          `json:"cacheScope"`
	} `json:"listWire"`
	Add, Unknown, Greet, Sleep, Cancelled, After tsOutcome
	Asked                                        []string  `json:"asked"`
	Progress                                     []float64 `json:"progress"`
	CancelledAfterMS                             int64     `json:"cancelledAfterMs"`
}

type tsOutcome struct {
	Result *struct {
		Meta    json.RawMessage `json:"_meta"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (o tsOutcome) text() string {
	if o.Result == nil || len(o.Result.Content) == 0 {
		return ""
	}
	return o.Result.Content[0].Text
}

// The official TypeScript SDK v2 client (@modelcontextprotocol/client)
// drives jrpc serve --mcp over stdio and Streamable HTTP in three modes:
// legacy (2025-11-25, initialize and the session), auto (server/discover
// first: it reaches 2026-07-28) and pinned to 2026-07-28. Each: tools/list
// (with caching hints in 2026), a call, an unknown tool, the greet tool
// (elicitation over the session; a multi round-trip in 2026, which the SDK
// fulfils from the same handler), progress, and a call cancelled by an
// AbortSignal (HTTP 2026: the SDK closes the call's stream), after which
// the client goes on.
func TestMCPTypeScriptSDKv2Client(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/client")
	bin := jrpcBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	url := startJRPCServe(t, ctx, "--mcp", "--listen", "http://127.0.0.1:0/mcp")
	for _, mode := range []string{"legacy", "auto", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(transport+"/"+mode, func(t *testing.T) {
				args := []string{mode, "http", url}
				if transport == "stdio" {
					args = []string{mode, "stdio", bin, "serve", "--mcp", "--listen", "stdio:"}
				}
				var run tsV2Run
				decodeOutput(t, runNode(t, ctx, "mcp_v2_client.mjs", args...), &run)
				checkTSV2Run(t, mode, &run)
			})
		}
	}
}

func checkTSV2Run(t *testing.T, mode string, run *tsV2Run) {
	t.Helper()
	modern := mode != "legacy"
	if want := []string{"add", "echo", "greet", "now", "sleep", "test_trigger_tool_change"}; !slices.Equal(run.Tools.Names, want) || !slices.Equal(run.ListWire.Tools, want) {
		t.Errorf("tools/list: %v (wire %v)", run.Tools.Names, run.ListWire.Tools)
	}
	if modern {
		if run.ProtocolVersion != "2026-07-28" || run.ListWire.ResultType != "complete" || run.ListWire.TTLMs == nil || *run.ListWire.TTLMs != 300000 || run.ListWire.CacheScope != "public" {
			t.Errorf("2026 era: version %q, tools/list %+v", run.ProtocolVersion, run.ListWire)
		}
	} else if run.ListWire.ResultType != "" || run.ListWire.TTLMs != nil {
		t.Errorf("2025 era: tools/list carries 2026 members: %+v", run.ListWire)
	}
	if run.Add.text() != "5" {
		t.Errorf("add: %+v", run.Add)
	}
	// Both eras: an unknown tool is invalid params, as the revisions' example shows.
	if run.Unknown.Error == nil || run.Unknown.Error.Code != float64(-32602) || !strings.Contains(run.Unknown.Error.Message, "nope") {
		t.Errorf("unknown tool: %+v", run.Unknown.Error)
	}
	if run.Greet.text() != "Hello, Ada!" || !slices.Equal(run.Asked, []string{"What is your name?"}) {
		t.Errorf("greet: %+v asked %v", run.Greet, run.Asked)
	}
	if run.Sleep.text() != "slept 300 ms" || len(run.Progress) < 3 {
		t.Errorf("sleep: %+v progress %v", run.Sleep, run.Progress)
	}
	if run.Cancelled.Error == nil || run.CancelledAfterMS > 5000 {
		t.Errorf("cancelled sleep: %+v after %d ms", run.Cancelled, run.CancelledAfterMS)
	}
	if run.After.text() != "still here" {
		t.Errorf("call after the cancel: %+v", run.After)
	}
}
