package interop

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK client against jrpc serve --mcp-fixture (the
// library's package mcp), over Streamable HTTP and stdio, pinned to each
// era and on auto: tools (image content), a resource template, a prompt
// with arguments, completion, and an elicitation the SDK's handler
// answers (over the session under 2025-11-25, a multi round-trip under
// 2026-07-28).
func TestMCPGoSDKClientFixture(t *testing.T) {
	ctx, cancel := context.WithTimeout(testContext(t), 90*time.Second)
	defer cancel()
	bin := jrpcBinary(t)
	url := startJRPCServe(t, ctx, "--mcp-fixture", "--listen", "http://127.0.0.1:0/mcp")
	transports := map[string]func() mcp.Transport{
		"streamable-http": func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1} },
		"stdio": func() mcp.Transport {
			return &mcp.CommandTransport{Command: exec.Command(bin, "serve", "--mcp-fixture", "--listen", "stdio:")}
		},
	}
	for name, run := range mcpRuns(transports) {
		t.Run(name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "interop", Version: "1.0.0"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"response": "yes"}}, nil
				},
			})
			cs, err := client.Connect(ctx, run.transport(), run.options())
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; !strings.HasPrefix(v, run.reached()) {
				t.Fatalf("reached %s", v)
			}
			img, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_image_content", Arguments: map[string]any{}})
			if err != nil || len(img.Content) != 1 {
				t.Fatalf("test_image_content: %+v %v", img, err)
			}
			if c, ok := img.Content[0].(*mcp.ImageContent); !ok || c.MIMEType != "image/png" || len(c.Data) == 0 {
				t.Fatalf("test_image_content: %#v", img.Content[0])
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/42/data"})
			if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"id":"42"`) {
				t.Fatalf("resources/read: %+v %v", rr, err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
			if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "Prompt with arguments: arg1='a', arg2='b'" {
				t.Fatalf("prompts/get: %+v %v", pr, err)
			}
			if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
				Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "x"}}); err != nil {
				t.Fatalf("completion/complete: %v", err)
			}
			el, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "ok?"}})
			if err != nil || el.IsError || !strings.Contains(el.Content[0].(*mcp.TextContent).Text, `action=accept, content={"response":"yes"}`) {
				t.Fatalf("test_elicitation: %+v %v", el, err)
			}
		})
	}
}
