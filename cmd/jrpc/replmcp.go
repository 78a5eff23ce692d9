package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// What the REPL knows of an MCP server (a Streamable HTTP connection that
// reached an MCP era): its tools, prompts and resources, from tools/list,
// prompts/list and resources/list, for .methods and Tab completion. A
// line whose first word is a tool's name calls it (tools/call with the
// line's params as its arguments).

// mcpMethods are the requests an MCP client sends, for completion.
var mcpMethods = []string{"tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list",
	"resources/read", "resources/templates/list", "completion/complete", "logging/setLevel", "ping"}

// mcpCatalogPages bounds the pages of one list read (pagination).
const mcpCatalogPages = 20

// mcpItem is one tool, prompt or resource.
type mcpItem struct {
	Name        string `json:"name"`
	URI         string `json:"uri"`
	Description string `json:"description"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	} `json:"inputSchema"`
	Arguments []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	} `json:"arguments"`
}

// mcpCatalog is an MCP server's tools, prompts and resources.
type mcpCatalog struct {
	version                    string
	tools, prompts, resources  []mcpItem
	toolsErr, promptsErr, rErr error
}

// loadMCPCatalog reads the lists of an MCP server (each page, up to
// mcpCatalogPages); a list the server does not serve is left empty.
func loadMCPCatalog(ctx context.Context, c client, version string) *mcpCatalog {
	cat := &mcpCatalog{version: version}
	cat.tools, cat.toolsErr = mcpList(ctx, c, "tools/list", "tools")
	cat.prompts, cat.promptsErr = mcpList(ctx, c, "prompts/list", "prompts")
	cat.resources, cat.rErr = mcpList(ctx, c, "resources/list", "resources")
	return cat
}

// mcpList reads every page of a list method.
func mcpList(ctx context.Context, c client, method, member string) ([]mcpItem, error) {
	var all []mcpItem
	cursor := ""
	for range mcpCatalogPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var raw map[string]json.RawMessage
		if err := c.Call(ctx, method, params, &raw); err != nil {
			return all, err
		}
		var page []mcpItem
		if err := json.Unmarshal(raw[member], &page); err != nil {
			return all, fmt.Errorf("%s: %w", method, err)
		}
		all = append(all, page...)
		cursor = ""
		if json.Unmarshal(raw["nextCursor"], &cursor) != nil || cursor == "" {
			break
		}
	}
	return all, nil
}

// tool returns the tool named, nil for none.
func (cat *mcpCatalog) tool(name string) *mcpItem {
	i := slices.IndexFunc(cat.tools, func(t mcpItem) bool { return t.Name == name })
	if i < 0 {
		return nil
	}
	return &cat.tools[i]
}

// asToolCall turns a line that starts with a tool's name into its
// tools/call, the line's params as the arguments; other lines are kept.
func (cat *mcpCatalog) asToolCall(word string, params json.RawMessage, p any) (string, any) {
	if cat.tool(word) == nil {
		return word, p
	}
	args := json.RawMessage(`{}`)
	if params != nil {
		args = params
	}
	return "tools/call", map[string]any{"name": word, "arguments": args}
}

// names are the words a line may start with: the MCP requests and the
// tools' names.
func (cat *mcpCatalog) names() []string {
	out := slices.Clone(mcpMethods)
	for _, t := range cat.tools {
		out = append(out, t.Name)
	}
	return out
}

// paramNames are the argument names of a tool, or the names of an MCP
// request's params (name=, uri=, arguments=).
func (cat *mcpCatalog) paramNames(word string) []string {
	if t := cat.tool(word); t != nil {
		return sortedKeys(t.InputSchema.Properties)
	}
	switch word {
	case "tools/call", "prompts/get":
		return []string{"name", "arguments"}
	case "resources/read":
		return []string{"uri"}
	case "logging/setLevel":
		return []string{"level"}
	}
	return nil
}

// print writes the catalog for .methods: the era, then each list.
func (cat *mcpCatalog) print(w io.Writer) {
	fmt.Fprintf(w, "MCP %s server: its tools, prompts and resources\n", cat.version)
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	section := func(title string, items []mcpItem, err error, line func(mcpItem) (string, string)) {
		switch {
		case err != nil:
			fmt.Fprintf(tw, "%s: none (not served)\n", title)
		case len(items) == 0:
			fmt.Fprintf(tw, "%s: none\n", title)
		default:
			fmt.Fprintf(tw, "%s:\n", title)
			for _, it := range items {
				a, b := line(it)
				fmt.Fprintf(tw, "  %s\t%s\n", a, oneLine(b))
			}
		}
	}
	section("tools (call as NAME key=value..., or tools/call)", cat.tools, cat.toolsErr, func(t mcpItem) (string, string) {
		return t.Name + "(" + strings.Join(argList(sortedKeys(t.InputSchema.Properties), t.InputSchema.Required), ", ") + ")", t.Description
	})
	section("prompts (prompts/get name=NAME)", cat.prompts, cat.promptsErr, func(p mcpItem) (string, string) {
		var names, req []string
		for _, a := range p.Arguments {
			names = append(names, a.Name)
			if a.Required {
				req = append(req, a.Name)
			}
		}
		return p.Name + "(" + strings.Join(argList(names, req), ", ") + ")", p.Description
	})
	section("resources (resources/read uri=URI)", cat.resources, cat.rErr, func(r mcpItem) (string, string) {
		return r.URI, strings.TrimSpace(r.Name + "  " + r.Description)
	})
	tw.Flush()
}

// argList marks the optional names with "?".
func argList(names, required []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if !slices.Contains(required, n) {
			out[i] += "?"
		}
	}
	return out
}
