package jsonrpc

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
)

// ChangeFeed serves MCP's subscriptions/listen (2026-07-28,
// basic/patterns/subscriptions): a long-lived request whose answer stream
// (an SSE response over Streamable HTTP, the connection on stdio) carries
// the change notifications the client opted in to. The handler first sends
// notifications/subscriptions/acknowledged with the filter it honours,
// then each change published with Publish or PublishResource, every message
// tagged with _meta's io.modelcontextprotocol/subscriptionId (the listen
// request's id). The subscription ends when the client closes the stream
// (HTTP) or cancels the request (stdio), or with Close, which answers the
// request (a graceful end). Its zero value is ready to use.
type ChangeFeed struct {
	// Supports lists the filter members the server honours:
	// "toolsListChanged", "promptsListChanged", "resourcesListChanged",
	// "resourceSubscriptions" (default: the three list changes).
	Supports []string

	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    chan struct{}
}

// ListenFilter is the notifications filter of subscriptions/listen.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
}

type listener struct {
	mu     sync.Mutex // held while the acknowledgement is sent: nothing goes before it
	conn   *Conn
	id     json.RawMessage
	filter ListenFilter
}

// The notifications of each list change.
var changeMethods = map[string]string{
	"toolsListChanged":     "notifications/tools/list_changed",
	"promptsListChanged":   "notifications/prompts/list_changed",
	"resourcesListChanged": "notifications/resources/list_changed",
}

func (f *ChangeFeed) supports(member string) bool {
	if len(f.Supports) == 0 {
		return changeMethods[member] != ""
	}
	return slices.Contains(f.Supports, member)
}

// honoured returns the part of want the feed honours.
func (f *ChangeFeed) honoured(want ListenFilter) ListenFilter {
	got := ListenFilter{
		ToolsListChanged:     want.ToolsListChanged && f.supports("toolsListChanged"),
		PromptsListChanged:   want.PromptsListChanged && f.supports("promptsListChanged"),
		ResourcesListChanged: want.ResourcesListChanged && f.supports("resourcesListChanged"),
	}
	if f.supports("resourceSubscriptions") {
		got.ResourceSubscriptions = want.ResourceSubscriptions
	}
	return got
}

func (f *ChangeFeed) done() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed == nil {
		f.closed = make(chan struct{})
	}
	return f.closed
}

// ServeRPC serves subscriptions/listen (register it with
// mux.Handle("subscriptions/listen", feed)). It needs a connection to the
// client (ConnFromContext): a POST answered with an event stream, or a
// stream transport.
func (f *ChangeFeed) ServeRPC(ctx context.Context, req *Request) (any, error) {
	var p struct {
		Notifications ListenFilter `json:"notifications"`
	}
	if len(req.Params) > 0 {
		if err := jsonv2.Unmarshal(req.Params, &p); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
		}
	}
	c := ConnFromContext(ctx)
	if c == nil || req.IsNotification() {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: subscriptions/listen needs a stream to the client"}
	}
	closed := f.done()
	l := &listener{conn: c, id: json.RawMessage(req.ID.String()), filter: f.honoured(p.Notifications)}
	l.mu.Lock()
	f.mu.Lock()
	if f.listeners == nil {
		f.listeners = map[*listener]struct{}{}
	}
	f.listeners[l] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.listeners, l)
		f.mu.Unlock()
	}()
	ack := struct {
		Meta          map[string]any `json:"_meta"`
		Notifications ListenFilter   `json:"notifications"`
	}{map[string]any{MetaSubscriptionID: l.id}, l.filter}
	err := c.Notify(ctx, "notifications/subscriptions/acknowledged", ack)
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-closed:
		return struct {
			ResultType string         `json:"resultType"`
			Meta       map[string]any `json:"_meta"`
		}{"complete", map[string]any{MetaSubscriptionID: l.id}}, nil
	}
}

// Publish sends the notification of a list change ("toolsListChanged",
// "promptsListChanged", "resourcesListChanged") to every listener that
// asked for it. It never waits for a slow client.
func (f *ChangeFeed) Publish(change string) {
	method := changeMethods[change]
	f.each(func(l *listener) bool {
		return (change == "toolsListChanged" && l.filter.ToolsListChanged) ||
			(change == "promptsListChanged" && l.filter.PromptsListChanged) ||
			(change == "resourcesListChanged" && l.filter.ResourcesListChanged)
	}, method, nil)
}

// PublishResource sends notifications/resources/updated for uri to the
// listeners subscribed to it.
func (f *ChangeFeed) PublishResource(uri string) {
	f.each(func(l *listener) bool { return slices.Contains(l.filter.ResourceSubscriptions, uri) }, "notifications/resources/updated", map[string]any{"uri": uri})
}

func (f *ChangeFeed) each(match func(*listener) bool, method string, params map[string]any) {
	f.mu.Lock()
	var to []*listener
	for l := range f.listeners {
		if match(l) {
			to = append(to, l)
		}
	}
	f.mu.Unlock()
	for _, l := range to {
		p := map[string]any{"_meta": map[string]any{MetaSubscriptionID: l.id}}
		for k, v := range params {
			p[k] = v
		}
		go func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			_ = l.conn.Notify(context.Background(), method, p) // a listener gone is dropped by its handler
		}()
	}
}

// Close ends every subscription gracefully: each listen request is
// answered (resultType complete), which closes its stream.
func (f *ChangeFeed) Close() {
	ch := f.done()
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}
