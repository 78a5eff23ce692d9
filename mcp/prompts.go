package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/seedhq/jsonrpc"
)

// Prompt describes a prompt in prompts/list.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitzero"`
	Description string           `json:"description,omitzero"`
	Arguments   []PromptArgument `json:"arguments,omitzero"`
	Meta        map[string]any   `json:"_meta,omitzero"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitzero"`
	Description string `json:"description,omitzero"`
	Required    bool   `json:"required,omitzero"`
}

// PromptMessage is one message of a prompt's result.
type PromptMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// PromptResult is the result of prompts/get.
type PromptResult struct {
	Description string          `json:"description,omitzero"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptFunc renders a prompt with its arguments.
type PromptFunc func(ctx context.Context, args map[string]string) (*PromptResult, error)

type prompt struct {
	info Prompt
	get  PromptFunc
}

// AddPrompt adds (or replaces) a prompt; a get missing a required
// argument is -32602 before get runs.
func (s *Server) AddPrompt(p Prompt, get PromptFunc) {
	s.mu.Lock()
	s.prompts[p.Name] = &prompt{info: p, get: get}
	s.mu.Unlock()
	s.changed("prompts")
}

// RemovePrompt removes a prompt.
func (s *Server) RemovePrompt(name string) {
	s.mu.Lock()
	_, ok := s.prompts[name]
	delete(s.prompts, name)
	s.mu.Unlock()
	if ok {
		s.changed("prompts")
	}
}

type promptsListResult struct {
	era
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitzero"`
	cache
}

type getParams struct {
	Name           string            `json:"name"`
	Arguments      map[string]string `json:"arguments,omitzero"`
	Meta           json.RawMessage   `json:"_meta,omitzero"`
	InputResponses json.RawMessage   `json:"inputResponses,omitzero"`
	RequestState   string            `json:"requestState,omitzero"`
}

type getResult struct {
	era
	*PromptResult
}

func asInput(err error) *jsonrpc.InputRequiredError {
	if err == nil {
		return nil // before input is declared: it escapes, and a success allocates nothing
	}
	var input *jsonrpc.InputRequiredError
	errors.As(err, &input)
	return input
}

func (s *Server) registerPrompts(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "prompts/list", func(ctx context.Context, p *listParams) (promptsListResult, error) {
		out, next, err := listPage(s, p, s.prompts, func(pr *prompt) Prompt { return pr.info })
		if err != nil {
			return promptsListResult{}, err
		}
		return promptsListResult{era: s.era(ctx), Prompts: out, NextCursor: next, cache: s.cache(ctx, "public")}, nil
	})
	jsonrpc.Register(mux, "prompts/get", func(ctx context.Context, p getParams) (any, error) {
		s.mu.RLock()
		pr := s.prompts[p.Name]
		s.mu.RUnlock()
		if pr == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Unknown prompt: " + p.Name}
		}
		for _, a := range pr.info.Arguments {
			if _, ok := p.Arguments[a.Name]; a.Required && !ok {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Missing required argument: " + a.Name}
			}
		}
		r, err := pr.get(context.WithValue(ctx, requestMetaKey{}, p.Meta), p.Arguments)
		if input := asInput(err); input != nil {
			return input.Result, nil
		}
		if err != nil {
			return nil, err
		}
		return getResult{era: s.era(ctx), PromptResult: r}, nil
	})
}
