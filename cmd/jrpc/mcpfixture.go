package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

// The fixture surface of the MCP conformance suite (jrpc serve
// --mcp-fixture): the tools, resources and prompts its server scenarios
// call, as the suite's reference server has them, built on package mcp and
// served in both eras on one endpoint.

const (
	fixturePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

type noArgs struct{}

// errFixture is test_error_handling's error, in the suite's words.
var errFixture = errors.New("This tool intentionally returns an error for testing") //lint:ignore ST1005 the suite's exact text

// mcpFixture returns the fixture server.
func mcpFixture(keys [][]byte) *mcp.Server {
	s := mcp.NewServer(mcp.Implementation{Name: "jrpc-mcp-fixture", Version: version()})
	if len(keys) > 0 {
		s.Rounds.Keys = keys
	}
	addFixtureContentTools(s)
	addFixtureActionTools(s)
	addFixtureInputTools(s)
	addFixtureRoundTools(s)
	addFixtureTaskTools(s)
	addFixtureResources(s)
	addFixturePrompts(s)
	return s
}

func fixedTool(s *mcp.Server, name, desc string, content ...mcp.Content) {
	mcp.AddTool(s, mcp.Tool{Name: name, Description: desc}, func(context.Context, noArgs) (*mcp.ToolResult, error) {
		return &mcp.ToolResult{Content: content}, nil
	})
}

func addFixtureContentTools(s *mcp.Server) {
	png, _ := base64.StdEncoding.DecodeString(fixturePNG)
	wav, _ := base64.StdEncoding.DecodeString(fixtureWAV)
	fixedTool(s, "test_simple_text", "Tests simple text content response", mcp.TextContent("This is a simple text response for testing."))
	fixedTool(s, "test_image_content", "Tests image content response", mcp.ImageContent(png, "image/png"))
	fixedTool(s, "test_audio_content", "Tests audio content response", mcp.AudioContent(wav, "audio/wav"))
	fixedTool(s, "test_embedded_resource", "Tests embedded resource content response",
		mcp.EmbeddedResource(mcp.TextResource("test://embedded-resource", "text/plain", "This is an embedded resource content.")))
	fixedTool(s, "test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
		mcp.TextContent("Multiple content types test:"), mcp.ImageContent(png, "image/png"),
		mcp.EmbeddedResource(mcp.TextResource("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)))
	mcp.AddTool(s, mcp.Tool{Name: "test_error_handling", Description: "Tests error response handling"}, func(context.Context, noArgs) (*mcp.ToolResult, error) {
		return nil, errFixture // the suite's text, capitalized

	})
	s.AddRawTool(mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
			`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`)},
		func(_ context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
			return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("JSON Schema 2020-12 tool called with: " + string(args))}}, nil
		})
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func addFixtureActionTools(s *mcp.Server) {
	mcp.AddTool(s, mcp.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution"}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
		for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			s.Log(ctx, "info", "", m)
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("Tool with logging executed successfully")}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications"}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := pause(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			jsonrpc.ReportProgress(ctx, p, 100, fmt.Sprintf("Completed step %v of 100", p))
		}
		var m struct {
			Token json.RawMessage `json:"progressToken"`
		}
		_ = json.Unmarshal(mcp.RequestMeta(ctx), &m)
		text := string(m.Token)
		var str string
		if json.Unmarshal(m.Token, &str) == nil {
			text = str
		}
		if text == "" {
			text = "0"
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(text)}}, nil
	})
	// test_reconnection closes its POST's event stream mid-call: the client
	// gets its result on a GET with Last-Event-ID (SEP-1699's SSE polling).
	mcp.AddTool(s, mcp.Tool{Name: "test_reconnection", Description: "Tests SSE stream disconnection and client reconnection (SEP-1699)."},
		func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
			if jsonrpc.CloseEventStream(ctx) {
				select {
				case <-time.After(100 * time.Millisecond): // the call goes on after the close
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return textResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
		})
	mcp.AddTool(s, mcp.Tool{Name: "test_logging_tool", Description: "Diagnostic logging validator tool"}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
		s.Log(ctx, "info", "", "Diagnostic trace logging activated")
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("Logging evaluated")}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "test_custom_headers", Description: "Mirrors its region argument in the Mcp-Param-Region header (2026-07-28)",
		HeaderParams: map[string]string{"region": "Region"}}, func(_ context.Context, a regionArg) (*mcp.ToolResult, error) {
		return textResult("region: " + a.Region), nil
	})
	fixedTool(s, "test_streaming_elicitation", "Diagnostic tool validating response progress streams", mcp.TextContent("Streaming complete"))
	n := 0
	mcp.AddTool(s, mcp.Tool{Name: "test_trigger_tool_change", Description: "Changes the tool list (list_changed)"}, func(context.Context, noArgs) (*mcp.ToolResult, error) {
		n++
		fixedTool(s, "test_dynamic_tool", fmt.Sprintf("A tool added at run time (%d)", n), mcp.TextContent("dynamic"))
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("Mutation triggered")}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "test_trigger_prompt_change", Description: "Changes the prompt list (list_changed)"}, func(context.Context, noArgs) (*mcp.ToolResult, error) {
		s.AddPrompt(mcp.Prompt{Name: "test_dynamic_prompt", Description: "A prompt added at run time"}, func(context.Context, map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("dynamic")}}}, nil
		})
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("Mutation triggered")}}, nil
	})
}

type regionArg struct {
	Region string `json:"region" jsonschema:"A cloud region"`
}

type promptArg struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
}

type messageArg struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

var elicitForm = map[string]any{"type": "object", "properties": map[string]any{"response": map[string]any{"type": "string", "description": "User's response"}}, "required": []string{"response"}}

func addFixtureInputTools(s *mcp.Server) {
	mcp.AddTool(s, mcp.Tool{Name: "test_sampling", Description: "Tests server-initiated sampling (LLM completion request)"}, func(ctx context.Context, a promptArg) (*mcp.ToolResult, error) {
		var r struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := s.Ask(ctx, "sampling", jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": a.Prompt}}}, "maxTokens": 100}}, &r); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("LLM response: " + r.Content.Text)}}, nil
	})
	ask := func(ctx context.Context, msg string, schema any, prefix string) (*mcp.ToolResult, error) {
		var r struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		if err := s.Ask(ctx, "elicitation", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": msg, "requestedSchema": schema}}, &r); err != nil {
			return nil, err
		}
		if len(r.Content) == 0 {
			r.Content = json.RawMessage(`{}`)
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(prefix + "action=" + r.Action + ", content=" + string(r.Content))}}, nil
	}
	elicit := func(name, desc, message string, schema any, prefix string) {
		if message == "" { // the message is the tool's argument
			mcp.AddTool(s, mcp.Tool{Name: name, Description: desc}, func(ctx context.Context, a messageArg) (*mcp.ToolResult, error) {
				return ask(ctx, a.Message, schema, prefix)
			})
			return
		}
		mcp.AddTool(s, mcp.Tool{Name: name, Description: desc}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
			return ask(ctx, message, schema, prefix)
		})
	}
	elicit("test_elicitation", "Tests server-initiated elicitation (user input request)", "", elicitForm, "User response: ")
	elicit("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", "Please review and update the form fields with defaults",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"User name","default":"John Doe"},"age":{"type":"integer","description":"User age","default":30},"score":{"type":"number","description":"User score","default":95.5},"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`),
		"Elicitation completed: ")
	elicit("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", "Please select options from the enum fields",
		json.RawMessage(`{"type":"object","properties":{"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},"required":[]}`),
		"Elicitation completed: ")
	mcp.AddTool(s, mcp.Tool{Name: "test_missing_capability", Description: "Test tool requiring sampling"}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
		var r json.RawMessage
		if err := s.Ask(ctx, "sampling", jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{"messages": []any{}, "maxTokens": 10}}, &r); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("sampled")}}, nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "test_input_required_result_elicitation", Description: "MRTR: returns InputRequiredResult with elicitation request"}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
		var r struct {
			Content map[string]any `json:"content"`
		}
		if err := s.Ask(ctx, "user_name", jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"mode": "form", "message": "What is your name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}}, &r); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(fmt.Sprintf("Hello, %v!", r.Content["name"]))}}, nil
	})
}

// form is an elicitation/create of one required string property.
func form(message, property string) jsonrpc.InputRequest {
	return jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{property: map[string]any{"type": "string"}}, "required": []string{property}}}}
}

// answer is a client's answer to an elicitation or a sampling request.
type answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
	Roots   []any          `json:"roots"`
}

func textResult(text string) *mcp.ToolResult {
	return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(text)}}
}

// addFixtureRoundTools adds the multi round-trip tools (one question per
// round: the library's Ask) and the prompt that asks first.
func addFixtureRoundTools(s *mcp.Server) {
	tool := func(name, desc string, fn func(ctx context.Context) (*mcp.ToolResult, error)) {
		mcp.AddTool(s, mcp.Tool{Name: name, Description: desc}, func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) { return fn(ctx) })
	}
	tool("test_input_required_result_sampling", "MRTR: returns InputRequiredResult with sampling request", func(ctx context.Context) (*mcp.ToolResult, error) {
		var a answer
		err := s.Ask(ctx, "sample_request", jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "What is the capital of France?"}}}, "maxTokens": 100}}, &a)
		if err != nil {
			return nil, err
		}
		text, _ := a.Content["text"].(string)
		return textResult("Sampling result: " + text), nil
	})
	tool("test_input_required_result_list_roots", "MRTR: returns InputRequiredResult with roots/list request", func(ctx context.Context) (*mcp.ToolResult, error) {
		var a answer
		if err := s.Ask(ctx, "roots_request", jsonrpc.InputRequest{Method: "roots/list", Params: map[string]any{}}, &a); err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Found %d root(s)", len(a.Roots))), nil
	})
	confirm := func(name, desc string) {
		tool(name, desc, func(ctx context.Context) (*mcp.ToolResult, error) {
			var a answer
			if err := s.Ask(ctx, "confirm", form("Please confirm", "confirmed"), &a); err != nil {
				return nil, err
			}
			return textResult("Confirmed: action=" + a.Action), nil
		})
	}
	confirm("test_input_required_result_request_state", "MRTR: returns InputRequiredResult with requestState")
	confirm("test_input_required_result_tampered_state", "MRTR: HMAC-signed requestState integrity test")
	tool("test_input_required_result_multi_round", "MRTR: multi-round InputRequiredResult workflow", func(ctx context.Context) (*mcp.ToolResult, error) {
		var name, color answer
		if err := s.Ask(ctx, "step1", form("Step 1: What is your name?", "name"), &name); err != nil {
			return nil, err
		}
		if err := s.Ask(ctx, "step2", form("Step 2: What is your favorite color?", "color"), &color); err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Multi-round complete for %v who likes %v", name.Content["name"], color.Content["color"])), nil
	})
	tool("test_input_required_result_multiple_inputs", "MRTR: returns InputRequiredResult with multiple input requests", func(ctx context.Context) (*mcp.ToolResult, error) {
		var name, greeting, roots answer
		err := s.AskAll(ctx, []jsonrpc.Question{
			{Key: "user_name", Request: form("What is your name?", "name"), Result: &name},
			{Key: "greeting", Request: jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Generate a greeting"}}}, "maxTokens": 50}}, Result: &greeting},
			{Key: "client_roots", Request: jsonrpc.InputRequest{Method: "roots/list", Params: map[string]any{}}, Result: &roots},
		})
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Name: %v; Greeting: %v; Roots: %d", name.Content["name"], greeting.Content["text"], len(roots.Roots))), nil
	})
	tool("test_input_required_result_capabilities", "MRTR: respects client capabilities in inputRequests", func(ctx context.Context) (*mcp.ToolResult, error) {
		var qs []jsonrpc.Question
		var elicited, sampled answer
		if has, _ := jsonrpc.MCPClientCapability(ctx, "elicitation"); has {
			qs = append(qs, jsonrpc.Question{Key: "elicit_input", Request: form("Elicitation input", "value"), Result: &elicited})
		}
		if has, _ := jsonrpc.MCPClientCapability(ctx, "sampling"); has {
			qs = append(qs, jsonrpc.Question{Key: "sample_input", Request: jsonrpc.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Sample request"}}}, "maxTokens": 50}}, Result: &sampled})
		}
		if len(qs) == 0 {
			return textResult("No supported capabilities declared"), nil
		}
		if err := s.AskAll(ctx, qs); err != nil {
			return nil, err
		}
		keys := make([]string, len(qs))
		for i, q := range qs {
			keys[i] = q.Key
		}
		return textResult("capabilities-ok: received " + strings.Join(keys, ",")), nil
	})
	s.AddPrompt(mcp.Prompt{Name: "test_input_required_result_prompt", Description: "MRTR: a prompt that asks for input first"}, func(ctx context.Context, _ map[string]string) (*mcp.PromptResult, error) {
		var a answer
		if err := s.Ask(ctx, "user_context", form("What context should the prompt use?", "context"), &a); err != nil {
			return nil, err
		}
		return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(fmt.Sprintf("Prompt with context: %v", a.Content["context"]))}}}, nil
	})
}

type nameArg struct {
	Name string `json:"name,omitzero" jsonschema:"Who to greet"`
}

type secondsArg struct {
	Seconds float64 `json:"seconds,omitzero" jsonschema:"How long to work, in seconds"`
	Label   string  `json:"label,omitzero" jsonschema:"A label for the job"`
}

// addFixtureTaskTools adds the Tasks extension's fixtures: greet (never a
// task), slow_compute and protocol_error_job (tasks when the client
// declared the extension), failing_job (a task or -32021).
func addFixtureTaskTools(s *mcp.Server) {
	mcp.AddTool(s, mcp.Tool{Name: "greet", Description: "Greets (never a task)"}, func(_ context.Context, a nameArg) (*mcp.ToolResult, error) {
		if a.Name == "" {
			a.Name = "world"
		}
		return textResult("Hello, " + a.Name + "!"), nil
	})
	mcp.AddTool(s, mcp.Tool{Name: "slow_compute", Description: "Works for seconds, then answers (a task)", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, a secondsArg) (*mcp.ToolResult, error) {
			if err := pause(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return textResult(fmt.Sprintf("computed after %vs", a.Seconds)), nil
		})
	mcp.AddTool(s, mcp.Tool{Name: "failing_job", Description: "A task whose tool run fails after a second", TaskSupport: mcp.TaskRequired},
		func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
			if err := pause(ctx, time.Second); err != nil {
				return nil, err
			}
			return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("the job failed")}, IsError: true}, nil
		})
	mcp.AddTool(s, mcp.Tool{Name: "protocol_error_job", Description: "A task that fails with a protocol error", TaskSupport: mcp.TaskOptional},
		func(context.Context, noArgs) (*mcp.ToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the job crashed"}
		})
	addFixtureInputTasks(s)
}

type fileArg struct {
	Filename string `json:"filename,omitzero" jsonschema:"The file to delete"`
}

// addFixtureInputTasks adds the tasks that wait for input: confirm_delete
// (one question), multi_input (two at once), test_tool_with_task (asks by
// multi round-trip, then becomes a task).
func addFixtureInputTasks(s *mcp.Server) {
	confirm := jsonrpc.InputRequest{Method: "elicitation/create", Params: map[string]any{"mode": "form", "message": "Confirm?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"}}}}
	mcp.AddTool(s, mcp.Tool{Name: "confirm_delete", Description: "Asks to confirm, then deletes (a task waiting for input)", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, a fileArg) (*mcp.ToolResult, error) {
			var r answer
			if err := s.Ask(ctx, "confirm", confirm, &r); err != nil {
				return nil, err
			}
			if r.Action != "accept" || r.Content["confirm"] != true {
				return textResult("Kept " + a.Filename), nil
			}
			return textResult("Deleted " + a.Filename), nil
		})
	mcp.AddTool(s, mcp.Tool{Name: "multi_input", Description: "Asks two questions at once (a task waiting for input)", TaskSupport: mcp.TaskOptional},
		func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
			var first, second answer
			if err := s.AskAll(ctx, []jsonrpc.Question{{Key: "first", Request: form("First name?", "name"), Result: &first},
				{Key: "second", Request: form("Second name?", "name"), Result: &second}}); err != nil {
				return nil, err
			}
			return textResult(fmt.Sprintf("Got %v and %v", first.Content["name"], second.Content["name"])), nil
		})
	mcp.AddTool(s, mcp.Tool{Name: "test_tool_with_task", Description: "Asks the user's name by multi round-trip, then runs as a task", TaskSupport: mcp.TaskRequired, DeferTask: true},
		func(ctx context.Context, _ noArgs) (*mcp.ToolResult, error) {
			var r answer
			if err := s.Ask(ctx, "user_name", form("What is your name?", "name"), &r); err != nil {
				return nil, err
			}
			if err := mcp.StartTask(ctx); err != nil {
				return nil, err
			}
			if err := pause(ctx, 100*time.Millisecond); err != nil {
				return nil, err
			}
			return textResult(fmt.Sprintf("Hello, %v! (from a task)", r.Content["name"])), nil
		})
}

func addFixtureResources(s *mcp.Server) {
	text := func(uri, mime, body string) mcp.ReadFunc {
		return func(context.Context, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResource(uri, mime, body)}, nil
		}
	}
	s.AddResource(mcp.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource", Description: "A static text resource for testing", MimeType: "text/plain"},
		text("test://static-text", "text/plain", "This is the content of the static text resource."))
	s.AddResource(mcp.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource", Description: "A static binary resource (image) for testing", MimeType: "image/png"},
		func(context.Context, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{URI: "test://static-binary", MimeType: "image/png", Blob: fixturePNG}}, nil
		})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template", Description: "A resource template with parameter substitution", MimeType: "application/json"},
		func(_ context.Context, uri string, vars map[string]string) ([]mcp.ResourceContents, error) {
			b, _ := json.Marshal(map[string]any{"id": vars["id"], "templateTest": true, "data": "Data for ID: " + vars["id"]})
			return []mcp.ResourceContents{mcp.TextResource(uri, "application/json", string(b))}, nil
		})
	s.AddResource(mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource", Description: "A resource that auto-updates every 3 seconds", MimeType: "text/plain"},
		text("test://watched-resource", "text/plain", "Watched resource content"))
	s.AddResource(mcp.Resource{URI: "test://stateless-static-text", Name: "Stateless Static Text", Description: "A static text resource served on the draft path", MimeType: "text/plain"},
		text("test://stateless-static-text", "text/plain", "This is the content of the stateless static text resource."))
}

func addFixturePrompts(s *mcp.Server) {
	msgs := func(m ...mcp.PromptMessage) mcp.PromptFunc {
		return func(context.Context, map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: m}, nil
		}
	}
	png, _ := base64.StdEncoding.DecodeString(fixturePNG)
	s.AddPrompt(mcp.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		msgs(mcp.PromptMessage{Role: "user", Content: mcp.TextContent("This is a simple prompt for testing.")}))
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}}},
		func(_ context.Context, a map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"]))}}}, nil
		})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, a map[string]string) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.EmbeddedResource(mcp.TextResource(a["resourceUri"], "text/plain", "Embedded resource content for testing."))},
				{Role: "user", Content: mcp.TextContent("Please process the embedded resource above.")}}}, nil
		})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		msgs(mcp.PromptMessage{Role: "user", Content: mcp.ImageContent(png, "image/png")}, mcp.PromptMessage{Role: "user", Content: mcp.TextContent("Please analyze the image above.")}))
}
