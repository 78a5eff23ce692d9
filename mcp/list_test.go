package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/mcp"
)

// prompts/list and resources/list give every entry once, in the order of
// their names (URIs), PageSize at a time; a removed entry is not listed.
func TestListPages(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, url := newTestServer(t) // PageSize 2, the prompt "hi"
	for _, n := range []string{"e", "c", "a", "d", "b"} {
		s.AddPrompt(mcp.Prompt{Name: n}, nil)
		s.AddResource(mcp.Resource{URI: "test://" + n, Name: n}, nil)
	}
	s.RemovePrompt("d")
	s.RemoveResource("test://d")
	c, err := jsonrpc.DialStreamableHTTP(ctx, url, jsonrpc.WithMCPVersion(jsonrpc.MCPVersion2026))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var page struct {
		Prompts    []mcp.Prompt   `json:"prompts"`
		Resources  []mcp.Resource `json:"resources"`
		NextCursor string         `json:"nextCursor"`
	}
	list := func(method string, name func() []string) (all []string, pages int) {
		cursor := ""
		for pages = 1; pages < 10; pages++ {
			page.Prompts, page.Resources, page.NextCursor = nil, nil, ""
			if err := c.Call(ctx, method, map[string]any{"cursor": cursor}, &page); err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			all = append(all, name()...)
			if cursor = page.NextCursor; cursor == "" {
				break
			}
		}
		return all, pages
	}
	prompts, pages := list("prompts/list", func() (names []string) {
		for _, p := range page.Prompts {
			names = append(names, p.Name)
		}
		return names
	})
	if want := []string{"a", "b", "c", "e", "hi"}; !slices.Equal(prompts, want) || pages != 3 {
		t.Errorf("prompts/list: %q in %d pages, want %q in 3", prompts, pages, want)
	}
	resources, pages := list("resources/list", func() (names []string) {
		for _, r := range page.Resources {
			names = append(names, r.URI)
		}
		return names
	})
	if want := []string{"test://a", "test://b", "test://c", "test://e"}; !slices.Equal(resources, want) || pages != 2 {
		t.Errorf("resources/list: %q in %d pages, want %q in 2", resources, pages, want)
	}
}
