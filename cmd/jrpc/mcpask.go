package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc"
)

// jrpc as an MCP client answers the server's questions itself when a
// person is there: on a terminal it declares the elicitation and sampling
// capabilities and asks on the terminal (a prompt built from the
// requested schema; for sampling, the messages and a reply typed in).
// Elsewhere it declares neither, so a server never asks it (and a server
// that asks anyway is refused).

// askOnTerminal reports whether jrpc can ask the user: standard input
// and standard error are a terminal.
func askOnTerminal() bool { return isTerminal(os.Stdin.Fd()) && isTerminal(os.Stderr.Fd()) }

// mcpCapabilities are the capabilities jrpc declares as an MCP client:
// the Tasks extension (call waits for a task), and on a terminal
// elicitation and sampling.
func mcpCapabilities() map[string]any {
	caps := map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}
	if askOnTerminal() {
		caps["elicitation"] = map[string]any{"form": map[string]any{}}
		caps["sampling"] = map[string]any{}
	}
	return caps
}

var (
	termInOnce sync.Once
	termIn     *bufio.Reader
	termMu     sync.Mutex // one question on the terminal at a time
)

// askUser answers a server's elicitation/create or sampling/createMessage
// on the terminal (handled false: another method).
func askUser(req *jsonrpc.Request) (result any, handled bool, err error) {
	if req.Method != "elicitation/create" && req.Method != "sampling/createMessage" {
		return nil, false, nil
	}
	if !askOnTerminal() {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: req.Method + ": jrpc cannot ask the user: standard input is not a terminal"}
	}
	termInOnce.Do(func() { termIn = bufio.NewReader(os.Stdin) })
	termMu.Lock()
	defer termMu.Unlock()
	if req.Method == "sampling/createMessage" {
		r, err := sample(termIn, os.Stderr, req.Params)
		return r, true, err
	}
	r, err := elicit(termIn, os.Stderr, req.Params)
	return r, true, err
}

// schemaProp is a property of an elicitation's requestedSchema.
type schemaProp struct {
	Type        string                `json:"type"`
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Enum        []any                 `json:"enum"`
	OneOf       []struct{ Const any } `json:"oneOf"`
	Default     json.RawMessage       `json:"default"`
	Items       *schemaProp           `json:"items"`
}

// elicit asks the user for each property of the requested schema, in
// order (required ones first): an empty answer keeps the default or
// leaves an optional property out; end of input cancels.
func elicit(in *bufio.Reader, out io.Writer, params json.RawMessage) (any, error) {
	var p struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]schemaProp `json:"properties"`
			Required   []string              `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	fmt.Fprintf(out, "\n[the server asks] %s\n  (Enter keeps a default or skips an optional field; Ctrl-D cancels)\n", p.Message)
	names := sortedKeys(p.RequestedSchema.Properties)
	slices.SortStableFunc(names, func(a, b string) int {
		return boolInt(!slices.Contains(p.RequestedSchema.Required, a)) - boolInt(!slices.Contains(p.RequestedSchema.Required, b))
	})
	content := map[string]any{}
	for _, name := range names {
		v, err := askProp(in, out, name, p.RequestedSchema.Properties[name], slices.Contains(p.RequestedSchema.Required, name))
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(out)
			return map[string]any{"action": "cancel"}, nil
		}
		if err != nil {
			return nil, err
		}
		if v != nil {
			content[name] = v
		}
	}
	return map[string]any{"action": "accept", "content": content}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// askProp asks for one property until the answer fits its type.
func askProp(in *bufio.Reader, out io.Writer, name string, p schemaProp, required bool) (any, error) {
	label := name
	if p.Title != "" {
		label = p.Title
	}
	hint := p.Type
	if opts := choices(p); len(opts) > 0 {
		hint = strings.Join(opts, "|")
	}
	if p.Type == "array" && p.Items != nil {
		hint = "comma-separated " + strings.Join(choices(*p.Items), "|")
	}
	for {
		fmt.Fprintf(out, "  %s (%s", label, hint)
		if len(p.Default) > 0 {
			fmt.Fprintf(out, ", default %s", p.Default)
		}
		if p.Description != "" {
			fmt.Fprintf(out, "; %s", p.Description)
		}
		if required {
			fmt.Fprint(out, "; required")
		}
		fmt.Fprint(out, "): ")
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return nil, io.EOF
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if len(p.Default) > 0 {
				var d any
				_ = json.Unmarshal(p.Default, &d)
				return d, nil
			}
			if !required {
				return nil, nil
			}
			fmt.Fprintln(out, "    required: type a value")
			continue
		}
		v, err := convert(line, p)
		if err == nil {
			return v, nil
		}
		fmt.Fprintf(out, "    %v\n", err)
	}
}

// choices are the values an enum (or oneOf of consts) allows.
func choices(p schemaProp) []string {
	var out []string
	for _, e := range p.Enum {
		out = append(out, fmt.Sprint(e))
	}
	for _, o := range p.OneOf {
		out = append(out, fmt.Sprint(o.Const))
	}
	return out
}

// convert reads an answer as the property's type.
func convert(s string, p schemaProp) (any, error) {
	if opts := choices(p); len(opts) > 0 && !slices.Contains(opts, s) {
		return nil, fmt.Errorf("one of %s", strings.Join(opts, ", "))
	}
	switch p.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("an integer, please")
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("a number, please")
		}
		return f, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("yes or no, please")
	case "array":
		var vs []any
		for _, part := range strings.Split(s, ",") {
			item := schemaProp{Type: "string"}
			if p.Items != nil {
				item = *p.Items
			}
			v, err := convert(strings.TrimSpace(part), item)
			if err != nil {
				return nil, err
			}
			vs = append(vs, v)
		}
		return vs, nil
	}
	return s, nil
}

// sample shows a sampling request's messages and takes the reply the user
// types as the model's (model "human").
func sample(in *bufio.Reader, out io.Writer, params json.RawMessage) (any, error) {
	var p struct {
		SystemPrompt string `json:"systemPrompt"`
		Messages     []struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	fmt.Fprintln(out, "\n[the server asks for a completion (sampling); you answer as the model]")
	if p.SystemPrompt != "" {
		fmt.Fprintf(out, "  system: %s\n", p.SystemPrompt)
	}
	for _, m := range p.Messages {
		text := m.Content.Text
		if m.Content.Type != "text" {
			text = "(" + m.Content.Type + ")"
		}
		fmt.Fprintf(out, "  %s: %s\n", m.Role, text)
	}
	fmt.Fprint(out, "  assistant> ")
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return nil, &jsonrpc.Error{Code: -1, Message: "User rejected sampling request"}
	}
	return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": strings.TrimSpace(line)},
		"model": "human", "stopReason": "endTurn"}, nil
}
