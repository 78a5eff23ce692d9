package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// Resource describes a resource in resources/list.
type Resource struct {
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitzero"`
	Description string         `json:"description,omitzero"`
	MimeType    string         `json:"mimeType,omitzero"`
	Size        int64          `json:"size,omitzero"`
	Annotations map[string]any `json:"annotations,omitzero"`
	Meta        map[string]any `json:"_meta,omitzero"`
}

// ResourceTemplate describes a family of resources (RFC 6570 level 1:
// {name} expands to one path segment or more of non-slash characters).
type ResourceTemplate struct {
	URITemplate string         `json:"uriTemplate"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitzero"`
	Description string         `json:"description,omitzero"`
	MimeType    string         `json:"mimeType,omitzero"`
	Annotations map[string]any `json:"annotations,omitzero"`
	Meta        map[string]any `json:"_meta,omitzero"`
}

// ReadFunc reads a resource: uri as asked, vars the template's variables
// (nil for a plain resource).
type ReadFunc func(ctx context.Context, uri string, vars map[string]string) ([]ResourceContents, error)

type resource struct {
	info Resource
	read ReadFunc
}

type template struct {
	info  ResourceTemplate
	re    *regexp.Regexp
	names []string
	read  ReadFunc
}

// AddResource adds (or replaces) a resource.
func (s *Server) AddResource(r Resource, read ReadFunc) {
	s.mu.Lock()
	s.resources[r.URI] = &resource{info: r, read: read}
	s.mu.Unlock()
	s.changed("resources")
}

// RemoveResource removes a resource.
func (s *Server) RemoveResource(uri string) {
	s.mu.Lock()
	_, ok := s.resources[uri]
	delete(s.resources, uri)
	s.mu.Unlock()
	if ok {
		s.changed("resources")
	}
}

var templateVar = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// AddResourceTemplate adds a resource template; a read of a URI it
// matches (and no plain resource has) goes to read with its variables.
func (s *Server) AddResourceTemplate(t ResourceTemplate, read ReadFunc) {
	var names []string
	pat := "^"
	last := 0
	for _, m := range templateVar.FindAllStringSubmatchIndex(t.URITemplate, -1) {
		pat += regexp.QuoteMeta(t.URITemplate[last:m[0]]) + "([^/]+)"
		names = append(names, t.URITemplate[m[2]:m[3]])
		last = m[1]
	}
	pat += regexp.QuoteMeta(t.URITemplate[last:]) + "$"
	s.mu.Lock()
	s.templates = append(s.templates, &template{info: t, re: regexp.MustCompile(pat), names: names, read: read})
	s.mu.Unlock()
	s.changed("resources")
}

// ResourceUpdated tells the clients subscribed to uri that it changed:
// notifications/resources/updated to session-era clients that sent
// resources/subscribe, and to stateless-era listeners that asked for it.
//
// With a SessionStore, a session is told by each instance it has sent a
// request through, if subscribed through any instance as the store last
// told that one (at the session's last request there, or at a check of its
// standalone stream held there: every tenth of the idle timeout, at most
// 10 s); the client gets it from the instance its standalone stream
// listens on, the others keep it as for a client not listening. With a
// Broker, ResourceUpdated on any instance reaches them all (a Publish; one
// that fails tells this instance's sessions only); without, call it on
// every instance.
func (s *Server) ResourceUpdated(uri string) {
	if s.Broker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), brokerTimeout)
		defer cancel()
		if s.Broker.Publish(ctx, updatedTopic, []byte(uri)) == nil {
			return
		}
	}
	s.resourceUpdated(uri)
}

// resourceUpdated is ResourceUpdated on this instance.
func (s *Server) resourceUpdated(uri string) {
	s.notifySessions("notifications/resources/updated", map[string]string{"uri": uri}, func(ss *session) bool {
		if ss.shared != nil {
			return ss.shared.Value(subKey+uri) != nil
		}
		return ss.subs[uri]
	})
	s.feed.PublishResource(uri)
}

// The Broker's topic of ResourceUpdated, and the bound of a call to it.
const (
	updatedTopic  = "mcp.resources.updated"
	brokerTimeout = 2 * time.Second
)

// subscribeUpdates subscribes to the Broker's updates, trying again every
// brokerTimeout until ctx ends (nil then).
func (s *Server) subscribeUpdates(ctx context.Context) state.Subscription {
	for {
		sctx, cancel := context.WithTimeout(ctx, brokerTimeout)
		sub, err := s.Broker.Subscribe(sctx, updatedTopic)
		cancel()
		if err == nil {
			return sub
		}
		slog.WarnContext(ctx, "mcp: subscribing to resource updates", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(brokerTimeout):
		}
	}
}

// relayUpdates tells this instance's sessions the updates sub receives
// (nil: subscribes first), subscribing again when it ends, until ctx ends.
func (s *Server) relayUpdates(ctx context.Context, sub state.Subscription) {
	if sub == nil {
		sub = s.subscribeUpdates(ctx)
	}
	for sub != nil {
		uri, err := sub.Next(ctx)
		if err == nil {
			s.resourceUpdated(string(uri))
			continue
		}
		sub.Close()
		if ctx.Err() != nil {
			return
		}
		slog.WarnContext(ctx, "mcp: resource updates ended; subscribing again", "err", err)
		sub = s.subscribeUpdates(ctx)
	}
}

type resourcesListResult struct {
	era
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitzero"`
	cache
}

type templatesListResult struct {
	era
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitzero"`
	cache
}

type readParams struct {
	URI            string          `json:"uri"`
	Meta           json.RawMessage `json:"_meta,omitzero"`
	InputResponses json.RawMessage `json:"inputResponses,omitzero"`
	RequestState   string          `json:"requestState,omitzero"`
}

type readResult struct {
	era
	Contents []ResourceContents `json:"contents"`
	cache
}

// ErrResourceNotFound is the error of a read of a URI the server does not
// have: -32602 with the uri in data (MCP's resource-not-found).
func resourceNotFound(uri string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: data}
}

func (s *Server) registerResources(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "resources/list", func(ctx context.Context, p *listParams) (resourcesListResult, error) {
		out, next, err := listPage(s, p, s.resources, func(r *resource) Resource { return r.info })
		if err != nil {
			return resourcesListResult{}, err
		}
		return resourcesListResult{era: s.era(ctx), Resources: out, NextCursor: next, cache: s.cache(ctx, "public")}, nil
	})
	jsonrpc.Register(mux, "resources/templates/list", func(ctx context.Context, p *listParams) (templatesListResult, error) {
		s.mu.RLock()
		out := make([]ResourceTemplate, 0, len(s.templates))
		for _, t := range s.templates {
			out = append(out, t.info)
		}
		s.mu.RUnlock()
		out, next, err := pageOf(s.PageSize, out, cursorOf(p))
		if err != nil {
			return templatesListResult{}, err
		}
		return templatesListResult{era: s.era(ctx), ResourceTemplates: out, NextCursor: next, cache: s.cache(ctx, "public")}, nil
	})
	jsonrpc.Register(mux, "resources/read", func(ctx context.Context, p readParams) (any, error) {
		return s.read(context.WithValue(ctx, requestMetaKey{}, p.Meta), p.URI)
	})
	sub := func(add bool) func(ctx context.Context, p readParams) (era, error) {
		return func(ctx context.Context, p readParams) (era, error) {
			ss := s.join(ctx)
			if v := jsonrpc.MCPSessionValues(ctx); v != nil {
				var val json.RawMessage
				if add {
					val = json.RawMessage("true")
				}
				if err := v.Set(ctx, subKey+p.URI, val); err != nil {
					return era{}, storeFailed(err)
				}
			} else if ss != nil {
				s.mu.Lock()
				if add {
					ss.subs[p.URI] = true
				} else {
					delete(ss.subs, p.URI)
				}
				s.mu.Unlock()
			}
			return s.era(ctx), nil
		}
	}
	jsonrpc.Register(mux, "resources/subscribe", sub(true))
	jsonrpc.Register(mux, "resources/unsubscribe", sub(false))
}

func cursorOf(p *listParams) string {
	if p == nil {
		return ""
	}
	return p.Cursor
}

// listPage returns the page at p's cursor of m's entries (prompts,
// resources) in the order of their keys, as info describes them, and the
// next page's cursor.
func listPage[V, I any](s *Server, p *listParams, m map[string]V, info func(V) I) ([]I, string, error) {
	s.mu.RLock()
	keys := slices.Sorted(maps.Keys(m))
	s.mu.RUnlock()
	keys, next, err := s.page(keys, cursorOf(p))
	if err != nil {
		return nil, "", err
	}
	out := make([]I, 0, len(keys))
	s.mu.RLock()
	for _, k := range keys {
		if v, ok := m[k]; ok { // not removed meanwhile
			out = append(out, info(v))
		}
	}
	s.mu.RUnlock()
	return out, next, nil
}

// read reads uri: a plain resource, else the first template matching.
func (s *Server) read(ctx context.Context, uri string) (any, error) {
	s.mu.RLock()
	r := s.resources[uri]
	var read ReadFunc
	var vars map[string]string
	if r != nil {
		read = r.read
	} else {
		for _, t := range s.templates {
			if m := t.re.FindStringSubmatch(uri); m != nil {
				read, vars = t.read, map[string]string{}
				for i, n := range t.names {
					vars[n] = m[i+1]
				}
				break
			}
		}
	}
	s.mu.RUnlock()
	if read == nil || strings.TrimSpace(uri) == "" {
		return nil, resourceNotFound(uri)
	}
	contents, err := read(ctx, uri, vars)
	if input := asInput(err); input != nil {
		return input.Result, nil
	}
	if err != nil {
		return nil, err
	}
	return readResult{era: s.era(ctx), Contents: contents, cache: s.cache(ctx, "private")}, nil
}
