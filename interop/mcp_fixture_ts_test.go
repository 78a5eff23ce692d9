package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	jmcp "github.com/seedhq/jsonrpc/mcp"
)

// tsFixtureRun is what interop/node/mcp_v2_fixture.mjs prints.
type tsFixtureRun struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Steps           map[string]outcome `json:"steps"`
	Seen            struct {
		Elicitations []struct {
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"elicitations"`
		Samplings      []json.RawMessage `json:"samplings"`
		Roots          int               `json:"roots"`
		Logs           []json.RawMessage `json:"logs"`
		ToolsChanged   []json.RawMessage `json:"toolsChanged"`
		PromptsChanged []json.RawMessage `json:"promptsChanged"`
	} `json:"seen"`
	LogsAtInfo    []json.RawMessage `json:"logsAtInfo"`
	LogsAtError   []json.RawMessage `json:"logsAtError"`
	LogsNoLevel   []json.RawMessage `json:"logsNoLevel"`
	Progress      []json.RawMessage `json:"progress"`
	ProgressToken json.RawMessage   `json:"progressToken"`
	WatchedReads  int               `json:"watchedReads"`
}

// The official TypeScript SDK v2 client (@modelcontextprotocol/client)
// drives the conformance fixture (jrpc serve --mcp-fixture, built on
// package mcp) over stdio and Streamable HTTP, in legacy (2025-11-25),
// auto and pinned 2026-07-28 modes, and gets what the fixture's source
// says, in both eras: every content type, errors, logging by each era's
// rule, progress, sampling, elicitation and roots answered by the client's
// handlers (over the session, or as multi round-trips the SDK fulfils),
// resources, templates, prompts with arguments, completion, list changes
// (the SDK refreshes its lists when told), caching hints (the SDK serves a
// second read from its cache under 2026-07-28), a bad cursor, and a client
// with no capabilities never asked. One fresh server per run.
func TestMCPTypeScriptSDKv2ClientFixture(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/client")
	bin := jrpcBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	for _, mode := range []string{"legacy", "auto", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(transport+"/"+mode, func(t *testing.T) {
				args := []string{mode, "stdio", bin, "serve", "--mcp-fixture", "--listen", "stdio:"}
				if transport == "http" {
					args = []string{mode, "http", startJRPCServe(t, ctx, "--mcp-fixture", "--listen", "http://127.0.0.1:0/mcp")}
				}
				var run tsFixtureRun
				decodeOutput(t, runNode(t, ctx, "mcp_v2_fixture.mjs", args...), &run)
				checkTSFixtureRun(t, mode != "legacy", &run)
			})
		}
	}
}

// The fixture's tools, in the order it adds them (tools/list keeps it).
var fixtureToolNames = []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
	"test_multiple_content_types", "test_error_handling", "json_schema_2020_12_tool", "test_tool_with_logging",
	"test_tool_with_progress", "test_reconnection", "test_logging_tool", "test_custom_headers", "test_streaming_elicitation",
	"test_trigger_tool_change", "test_trigger_prompt_change", "test_sampling", "test_elicitation",
	"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "test_missing_capability",
	"test_input_required_result_elicitation", "test_input_required_result_sampling", "test_input_required_result_list_roots",
	"test_input_required_result_request_state", "test_input_required_result_tampered_state",
	"test_input_required_result_multi_round", "test_input_required_result_multiple_inputs",
	"test_input_required_result_capabilities", "greet", "slow_compute", "failing_job", "protocol_error_job",
	"confirm_delete", "multi_input", "test_tool_with_task"}

// The fixture's prompts, in name order (prompts/list sorts them).
var fixturePromptNames = []string{"test_input_required_result_prompt", "test_prompt_with_arguments",
	"test_prompt_with_embedded_resource", "test_prompt_with_image", "test_simple_prompt"}

const (
	fixturePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// textResult is a tool result of one text item.
func textResult(text string) string {
	return `{"content":[{"type":"text","text":` + string(mustJSONString(text)) + `}]}`
}

func mustJSONString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func jsonList(names ...string) string {
	b, _ := json.Marshal(names)
	return string(b)
}

// fixtureResults are the steps' results the fixture's source gives, in both eras.
var fixtureResults = map[string]string{
	"test_simple_text":   textResult("This is a simple text response for testing."),
	"test_image_content": `{"content":[{"type":"image","data":"` + fixturePNG + `","mimeType":"image/png"}]}`,
	"test_audio_content": `{"content":[{"type":"audio","data":"` + fixtureWAV + `","mimeType":"audio/wav"}]}`,
	"test_embedded_resource": `{"content":[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain",` +
		`"text":"This is an embedded resource content."}}]}`,
	"test_multiple_content_types": `{"content":[{"type":"text","text":"Multiple content types test:"},{"type":"image","data":"` + fixturePNG + `","mimeType":"image/png"},` +
		`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]}`,
	"test_error_handling":        `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`,
	"test_reconnection":          textResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."),
	"test_streaming_elicitation": textResult("Streaming complete"),
	"json_schema_2020_12_tool":   textResult(`JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"Paris"}}`),
	"schema2020": `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
		`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`,
	"samplingSchema":      `{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"],"additionalProperties":false}`,
	"greet":               textResult("Hello, Ada!"),
	"slow_compute":        textResult("computed after 0.05s"),
	"test_custom_headers": textResult("region: eu-west-1"),
	"logging":             textResult("Tool with logging executed successfully"),
	"loggingQuiet":        textResult("Tool with logging executed successfully"),
	"sampling":            textResult("LLM response: echo: Say hi"),
	"elicitation":         textResult(`User response: action=accept, content={"response":"yes"}`),
	"elicitationDecline":  textResult(`User response: action=decline, content={}`),
	"sep1034":             textResult(`Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}`),
	"sep1330": textResult(`Elicitation completed: action=accept, content={"untitledSingle":"option2","titledSingle":"value3","legacyEnum":"opt1",` +
		`"untitledMulti":["option1","option3"],"titledMulti":["value2"]}`),
	"ir_elicitation":     textResult("Hello, Ada!"),
	"ir_sampling":        textResult("Sampling result: Paris"),
	"ir_list_roots":      textResult("Found 1 root(s)"),
	"ir_request_state":   textResult("Confirmed: action=accept"),
	"ir_multi_round":     textResult("Multi-round complete for Ada who likes blue"),
	"ir_multiple_inputs": textResult("Name: Ada; Greeting: Hello there; Roots: 1"),
	"ir_capabilities":    textResult("capabilities-ok: received elicit_input,sample_input"),
	"resources": `[{"uri":"test://stateless-static-text","name":"Stateless Static Text","description":"A static text resource served on the draft path","mimeType":"text/plain"},` +
		`{"uri":"test://static-binary","name":"static-binary","title":"Static Binary Resource","description":"A static binary resource (image) for testing","mimeType":"image/png"},` +
		`{"uri":"test://static-text","name":"static-text","title":"Static Text Resource","description":"A static text resource for testing","mimeType":"text/plain"},` +
		`{"uri":"test://watched-resource","name":"watched-resource","title":"Watched Resource","description":"A resource that auto-updates every 3 seconds","mimeType":"text/plain"}]`,
	"templates":     `[{"uriTemplate":"test://template/{id}/data","name":"template","title":"Resource Template","description":"A resource template with parameter substitution","mimeType":"application/json"}]`,
	"readText":      `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`,
	"readBinary":    `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + fixturePNG + `"}]}`,
	"readTemplate":  `{"contents":[{"uri":"test://template/42/data","mimeType":"application/json","text":"{\"data\":\"Data for ID: 42\",\"id\":\"42\",\"templateTest\":true}"}]}`,
	"readStateless": `{"contents":[{"uri":"test://stateless-static-text","mimeType":"text/plain","text":"This is the content of the stateless static text resource."}]}`,
	"promptNames":   jsonList(fixturePromptNames...),
	"promptWithArguments": `{"name":"test_prompt_with_arguments","title":"Prompt With Arguments","description":"A prompt with required arguments",` +
		`"arguments":[{"name":"arg1","description":"First test argument","required":true},{"name":"arg2","description":"Second test argument","required":true}]}`,
	"simplePrompt":    `{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`,
	"argumentsPrompt": `{"messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='one', arg2='two'"}}]}`,
	"resourcePrompt": `{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"test://static-text","mimeType":"text/plain","text":"Embedded resource content for testing."}}},` +
		`{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]}`,
	"imagePrompt": `{"messages":[{"role":"user","content":{"type":"image","data":"` + fixturePNG + `","mimeType":"image/png"}},` +
		`{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]}`,
	"inputPrompt":      `{"messages":[{"role":"user","content":{"type":"text","text":"Prompt with context: testing"}}]}`,
	"complete":         `{"completion":{"values":[],"hasMore":false}}`,
	"triggerTools":     textResult("Mutation triggered"),
	"dynamicTool":      textResult("dynamic"),
	"triggerPrompts":   textResult("Mutation triggered"),
	"dynamicPrompt":    `{"messages":[{"role":"user","content":{"type":"text","text":"dynamic"}}]}`,
	"bareCapabilities": textResult("No supported capabilities declared"),
	"toolNames":        jsonList(fixtureToolNames...),
}

// fixtureErrors are the steps that fail: code, message and data.
var fixtureErrors = map[string]struct {
	code          int64
	message, data string
}{
	"unknownTool":           {-32602, "Unknown tool: no_such_tool", ""},
	"readMissing":           {-32602, "Resource not found", `{"uri":"test://no-such-resource"}`},
	"missingArgument":       {-32602, "Missing required argument: arg2", ""},
	"unknownPrompt":         {-32602, "Unknown prompt: no_such_prompt", ""},
	"badCursor":             {-32602, "Invalid cursor", ""},
	"bareElicitation":       {-32021, "Missing required client capability: elicitation", `{"requiredCapabilities":{"elicitation":{}}}`},
	"bareMissingCapability": {-32021, "Missing required client capability: sampling", `{"requiredCapabilities":{"sampling":{}}}`},
}

func checkTSFixtureRun(t *testing.T, modern bool, run *tsFixtureRun) {
	t.Helper()
	if want := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern]; run.ProtocolVersion != want {
		t.Errorf("negotiated %q, want %q", run.ProtocolVersion, want)
	}
	for name, want := range fixtureResults {
		if want != "" {
			run.Steps[name].wantResult(t, name, want)
		}
	}
	for name, e := range fixtureErrors {
		run.Steps[name].wantError(t, name, e.code, e.message, e.data)
	}
	if modern {
		run.Steps["subscribe"].wantResult(t, "subscriptions/listen", `{"resourceSubscriptions":["test://watched-resource"]}`)
	} else {
		for _, name := range []string{"ping", "setLevel", "subscribe", "unsubscribe"} {
			run.Steps[name].wantResult(t, name, `{}`)
		}
	}
	// The SDK caches a read for the ttlMs the server gave (2026-07-28 only).
	if want := map[bool]int{false: 2, true: 1}[modern]; run.WatchedReads != want {
		t.Errorf("two reads of test://watched-resource sent %d resources/read, want %d", run.WatchedReads, want)
	}
	checkTSFixtureLogs(t, modern, run)
	checkTSFixtureProgress(t, run)
	checkTSFixtureInputs(t, run)
	wantTools := jsonList(append(slices.Clone(fixtureToolNames), "test_dynamic_tool")...)
	if n := len(run.Seen.ToolsChanged); n == 0 || !jsonEqual(t, run.Seen.ToolsChanged[n-1], []byte(wantTools)) {
		t.Errorf("tools list_changed: the SDK refreshed %s, want last %s", run.Seen.ToolsChanged, wantTools)
	}
	wantPrompts := jsonList(append([]string{"test_dynamic_prompt"}, fixturePromptNames...)...)
	if n := len(run.Seen.PromptsChanged); n == 0 || !jsonEqual(t, run.Seen.PromptsChanged[n-1], []byte(wantPrompts)) {
		t.Errorf("prompts list_changed: the SDK refreshed %s, want last %s", run.Seen.PromptsChanged, wantPrompts)
	}
	if len(run.Seen.Logs) != 0 {
		t.Errorf("log messages outside the logging calls: %s", run.Seen.Logs)
	}
}

// checkTSFixtureLogs: three info messages at level info; none at error
// (logging/setLevel under 2025-11-25, the request's _meta logLevel under
// 2026-07-28); under 2026-07-28 none for a request that names no level.
func checkTSFixtureLogs(t *testing.T, modern bool, run *tsFixtureRun) {
	t.Helper()
	var want []string
	for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		want = append(want, `{"level":"info","data":"`+m+`"}`)
	}
	if len(run.LogsAtInfo) != len(want) {
		t.Errorf("logs at info: %s, want %s", run.LogsAtInfo, want)
	} else {
		for i := range want {
			if !jsonEqual(t, run.LogsAtInfo[i], []byte(want[i])) {
				t.Errorf("log %d: %s, want %s", i, run.LogsAtInfo[i], want[i])
			}
		}
	}
	if len(run.LogsAtError) != 0 {
		t.Errorf("logs at error: %s, want none", run.LogsAtError)
	}
	if modern {
		run.Steps["loggingNoLevel"].wantResult(t, "loggingNoLevel", textResult("Tool with logging executed successfully"))
		if run.LogsNoLevel == nil || len(run.LogsNoLevel) != 0 {
			t.Errorf("logs without a logLevel: %s, want none", run.LogsNoLevel)
		}
	}
}

// checkTSFixtureProgress: the tool's text is the progress token the SDK
// sent; the notifications are the fixture's 0, 50, 100 of 100 in order.
// The SDK may miss the last: it dispatches notifications a microtask late
// and drops a request's progress handler when its response arrives, so a
// notification read in the same chunk as the response is lost (the
// server wrote it first).
func checkTSFixtureProgress(t *testing.T, run *tsFixtureRun) {
	t.Helper()
	run.Steps["progress"].wantResult(t, "progress", textResult(string(run.ProgressToken)))
	if len(run.ProgressToken) == 0 || strings.Trim(string(run.ProgressToken), "0123456789") != "" {
		t.Errorf("progress token %s", run.ProgressToken)
	}
	if len(run.Progress) < 2 || len(run.Progress) > 3 {
		t.Errorf("progress: %s", run.Progress)
	}
	for i, p := range run.Progress {
		v := []int{0, 50, 100}[min(i, 2)]
		if want := fmt.Sprintf(`{"progress":%d,"total":100,"message":"Completed step %d of 100"}`, v, v); !jsonEqual(t, p, []byte(want)) {
			t.Errorf("progress %d: %s, want %s", i, p, want)
		}
	}
}

// checkTSFixtureInputs: the questions the client's handlers were asked,
// as the fixture words them.
func checkTSFixtureInputs(t *testing.T, run *tsFixtureRun) {
	t.Helper()
	var asked []string
	schemas := map[string]json.RawMessage{}
	for _, e := range run.Seen.Elicitations {
		asked = append(asked, e.Message)
		schemas[e.Message] = e.RequestedSchema
	}
	want := []string{"Proceed?", "Decline me", "Please review and update the form fields with defaults", "Please select options from the enum fields",
		"What is your name?", "Please confirm", "Step 1: What is your name?", "Step 2: What is your favorite color?", "What is your name?",
		"Elicitation input", "What context should the prompt use?"}
	if !slices.Equal(asked, want) {
		t.Errorf("elicitations asked: %q\nwant %q", asked, want)
	}
	if s := schemas["Proceed?"]; !jsonEqual(t, s, []byte(`{"type":"object","properties":{"response":{"type":"string","description":"User's response"}},"required":["response"]}`)) {
		t.Errorf("test_elicitation's schema: %s", s)
	}
	if s := schemas["Please review and update the form fields with defaults"]; !jsonEqual(t, s, []byte(`{"type":"object","properties":{"name":{"type":"string","description":"User name","default":"John Doe"},`+
		`"age":{"type":"integer","description":"User age","default":30},"score":{"type":"number","description":"User score","default":95.5},`+
		`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},`+
		`"verified":{"type":"boolean","description":"Verification status","default":true}},"required":[]}`)) {
		t.Errorf("SEP-1034 schema: %s", s)
	}
	var samplings []string
	for _, s := range run.Seen.Samplings {
		samplings = append(samplings, string(s))
	}
	wantSamplings := []string{`{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"maxTokens":100}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}`,
		`{"messages":[{"role":"user","content":{"type":"text","text":"Sample request"}}],"maxTokens":50}`}
	if len(samplings) != len(wantSamplings) {
		t.Errorf("sampling requests: %q\nwant %q", samplings, wantSamplings)
	} else {
		for i := range samplings {
			if !jsonEqual(t, run.Seen.Samplings[i], []byte(wantSamplings[i])) {
				t.Errorf("sampling request %d: %s, want %s", i, samplings[i], wantSamplings[i])
			}
		}
	}
	if run.Seen.Roots != 2 {
		t.Errorf("roots/list asked %d times, want 2", run.Seen.Roots)
	}
}

// addArgs and sumResult are the typed arguments and structured result of
// the library server's add tool.
type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumResult struct {
	Sum  int    `json:"sum"`
	Expr string `json:"expr"`
}

func (r sumResult) Text() string { return fmt.Sprintf("%s = %d", r.Expr, r.Sum) }

// libraryServer is a server of package mcp with pages of 2: six tools
// (a typed one with structured output, one returning a resource link, one
// that tells the subscribers of test://r1 it changed),
// three resources, templates and prompts each, and a completion.
func libraryServer(t *testing.T) string {
	s := jmcp.NewServer(jmcp.Implementation{Name: "interop-library", Version: "1.0.0"})
	s.PageSize = 2
	jmcp.AddTool(s, jmcp.Tool{Name: "add", Description: "Adds two integers."}, func(_ context.Context, a addArgs) (sumResult, error) {
		return sumResult{Sum: a.A + a.B, Expr: fmt.Sprintf("%d + %d", a.A, a.B)}, nil
	})
	jmcp.AddTool(s, jmcp.Tool{Name: "link", Description: "Links to a resource."}, func(context.Context, struct{}) (*jmcp.ToolResult, error) {
		return &jmcp.ToolResult{Content: []jmcp.Content{jmcp.ResourceLink(jmcp.Resource{URI: "test://r2", Name: "r2", Title: "Second", Description: "The second resource", MimeType: "text/plain"})}}, nil
	})
	jmcp.AddTool(s, jmcp.Tool{Name: "touch", Description: "Tells the subscribers that test://r1 changed."}, func(context.Context, struct{}) (*jmcp.ToolResult, error) {
		s.ResourceUpdated("test://r1")
		return &jmcp.ToolResult{Content: []jmcp.Content{jmcp.TextContent("touched")}}, nil
	})
	for i := 1; i <= 3; i++ {
		n := strconv.Itoa(i)
		jmcp.AddTool(s, jmcp.Tool{Name: "t" + n}, func(context.Context, struct{}) (*jmcp.ToolResult, error) { return nil, nil })
		s.AddResource(jmcp.Resource{URI: "test://r" + n, Name: "r" + n}, func(context.Context, string, map[string]string) ([]jmcp.ResourceContents, error) { return nil, nil })
		s.AddResourceTemplate(jmcp.ResourceTemplate{URITemplate: "test://tpl" + n + "/{id}", Name: "tpl" + n}, func(context.Context, string, map[string]string) ([]jmcp.ResourceContents, error) { return nil, nil })
		s.AddPrompt(jmcp.Prompt{Name: "p" + n}, func(context.Context, map[string]string) (*jmcp.PromptResult, error) { return nil, nil })
	}
	s.Complete = func(_ context.Context, p jmcp.CompleteParams) (jmcp.Completion, error) {
		var values []string
		for _, c := range []string{"green", "grey", "red", "gold"} {
			if strings.HasPrefix(c, p.Argument.Value) && p.Ref.Name == "p1" && p.Argument.Name == "color" {
				values = append(values, c)
			}
		}
		return jmcp.Completion{Values: values[:min(2, len(values))], Total: len(values), HasMore: len(values) > 2}, nil
	}
	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
	ts := httptest.NewServer(srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
	t.Cleanup(ts.Close)
	return ts.URL
}

// libraryRun is what mcp_v2_fixture.mjs prints with "library".
type libraryRun struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Steps           map[string]outcome `json:"steps"`
	Pages           map[string][]struct {
		Cursor     *string  `json:"cursor"`
		Items      []string `json:"items"`
		NextCursor *string  `json:"nextCursor"`
	} `json:"pages"`
}

// The TypeScript SDK v2 client against a server of package mcp served by
// real net/http, in each mode: it walks every list two entries a page
// (tools, resources, templates, prompts), asks for a page by its cursor,
// gets a tool's structured output (checked by the SDK against the tool's
// outputSchema) and text, a resource link, a completion, and the update
// of a resource it subscribed to (resources/subscribe under 2025-11-25,
// subscriptions/listen under 2026-07-28).
func TestMCPTypeScriptSDKv2ClientLibrary(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/client")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	url := libraryServer(t)
	for _, mode := range []string{"legacy", "auto", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			var run libraryRun
			decodeOutput(t, runNode(t, ctx, "mcp_v2_fixture.mjs", mode, "http", url, "library"), &run)
			run.Steps["tools"].wantResult(t, "tools", `["add","link","touch","t1","t2","t3"]`)
			run.Steps["resources"].wantResult(t, "resources", `["r1","r2","r3"]`)
			run.Steps["templates"].wantResult(t, "templates", `["tpl1","tpl2","tpl3"]`)
			run.Steps["prompts"].wantResult(t, "prompts", `["p1","p2","p3"]`)
			for method, want := range map[string][]string{"tools/list": {"add,link", "touch,t1", "t2,t3"}, "resources/list": {"r1,r2", "r3"},
				"resources/templates/list": {"tpl1,tpl2", "tpl3"}, "prompts/list": {"p1,p2", "p3"}} {
				var got []string
				for i, p := range run.Pages[method] {
					got = append(got, strings.Join(p.Items, ","))
					if last := i == len(run.Pages[method])-1; (p.NextCursor == nil) != last || (i > 0) != (p.Cursor != nil) {
						t.Errorf("%s page %d: cursor %v, nextCursor %v", method, i, p.Cursor, p.NextCursor)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s pages: %q, want %q", method, got, want)
				}
			}
			run.Steps["toolsPage2"].wantResult(t, "tools/list by cursor", `{"tools":["touch","t1"],"nextCursor":`+string(mustJSONString(*run.Pages["tools/list"][1].NextCursor))+`}`)
			run.Steps["structured"].wantResult(t, "add", `{"content":[{"type":"text","text":"2 + 3 = 5"}],"structuredContent":{"sum":5,"expr":"2 + 3"}}`)
			run.Steps["link"].wantResult(t, "link", `{"content":[{"type":"resource_link","uri":"test://r2","name":"r2","title":"Second","description":"The second resource","mimeType":"text/plain"}]}`)
			run.Steps["complete"].wantResult(t, "complete", `{"completion":{"values":["green","grey"],"total":3,"hasMore":true}}`)
			run.Steps["touch"].wantResult(t, "touch", textResult("touched"))
			run.Steps["updated"].wantResult(t, "notifications/resources/updated", `[{"uri":"test://r1"}]`)
		})
	}
}

// tasksRun is what mcp_v2_fixture.mjs prints with "tasks".
type tasksRun struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Steps           map[string]outcome `json:"steps"`
	TaskHeaders     []struct {
		Method string `json:"method"`
		Name   string `json:"name"`
	} `json:"taskHeaders"`
}

// The fixture's Tasks extension with the TypeScript SDK v2 client, as far
// as it goes: the SDK sees the extension in the server's capabilities but
// refuses a tools/call answered with a task (it has no tasks API), so the
// script creates the tasks by plain POSTs and drives them with the SDK's
// request(): confirm_delete waits for input (tasks/get shows its
// question), tasks/update answers it and tasks/get then has its result;
// tasks/cancel ends slow_compute; an unknown task is -32602. The SDK's
// transport names the task in Mcp-Name, and the server checks it.
func TestMCPTypeScriptSDKv2ClientFixtureTasks(t *testing.T) {
	requireNode(t, "@modelcontextprotocol/client")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	url := startJRPCServe(t, ctx, "--mcp-fixture", "--listen", "http://127.0.0.1:0/mcp")
	var run tasksRun
	decodeOutput(t, runNode(t, ctx, "mcp_v2_fixture.mjs", "2026-07-28", "http", url, "tasks"), &run)
	if run.ProtocolVersion != "2026-07-28" {
		t.Fatalf("negotiated %q", run.ProtocolVersion)
	}
	run.Steps["extension"].wantResult(t, "capabilities.extensions", `{}`)
	run.Steps["sdkCall"].wantResult(t, "greet", textResult("Hello, Ada!"))
	if e := run.Steps["sdkTaskCall"].Error; e == nil || e.Message != "Unsupported result type 'task' for tools/call" {
		t.Errorf("the SDK took a task: %+v (if it has a tasks API now, use it here)", run.Steps["sdkTaskCall"])
	}
	run.Steps["created"].wantResult(t, "tools/call", `{"resultType":"task","status":"working"}`)
	run.Steps["waiting"].wantResult(t, "tasks/get (waiting)", `{"status":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Confirm?",`+
		`"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}}}`)
	run.Steps["update"].wantResult(t, "tasks/update", `{}`)
	run.Steps["done"].wantResult(t, "tasks/get (done)", `{"status":"completed","result":{"resultType":"complete","content":[{"type":"text","text":"Deleted a.txt"}]}}`)
	run.Steps["cancel"].wantResult(t, "tasks/cancel", `{}`)
	run.Steps["cancelled"].wantResult(t, "tasks/get (cancelled)", `{"status":"cancelled"}`)
	run.Steps["unknown"].wantError(t, "tasks/get of no task", -32602, "Unknown task: no-such-task", "")
	var methods []string
	for _, h := range run.TaskHeaders {
		if h.Name == "" {
			t.Errorf("%s sent without Mcp-Name", h.Method)
		}
		if len(methods) == 0 || methods[len(methods)-1] != h.Method {
			methods = append(methods, h.Method)
		}
	}
	if want := []string{"tasks/get", "tasks/update", "tasks/get", "tasks/cancel", "tasks/get"}; !slices.Equal(methods, want) {
		t.Errorf("the SDK's tasks requests: %q, want %q", methods, want)
	}
	if n := len(run.TaskHeaders); n == 0 || run.TaskHeaders[n-1].Name != "no-such-task" {
		t.Errorf("Mcp-Name of the last tasks/get: %+v", run.TaskHeaders)
	}
}
