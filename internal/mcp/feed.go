package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
)

// MetaSubscriptionID is the _meta key that tags the messages of a
// subscriptions/listen stream with the listen request's id.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// Notifier sends a notification to a client (the root's *Conn).
type Notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// ListenFilter is the notifications filter of subscriptions/listen (the
// root's ListenFilter converts to it).
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
}

// The notifications of each list change.
var changeMethods = map[string]string{
	"toolsListChanged":     "notifications/tools/list_changed",
	"promptsListChanged":   "notifications/prompts/list_changed",
	"resourcesListChanged": "notifications/resources/list_changed",
}

// Honoured returns the part of want that a server honouring the filter
// members supports honours (none listed: the three list changes).
func Honoured(supports []string, want ListenFilter) ListenFilter {
	has := func(member string) bool {
		if len(supports) == 0 {
			return changeMethods[member] != ""
		}
		return slices.Contains(supports, member)
	}
	got := ListenFilter{
		ToolsListChanged:     want.ToolsListChanged && has("toolsListChanged"),
		PromptsListChanged:   want.PromptsListChanged && has("promptsListChanged"),
		ResourcesListChanged: want.ResourcesListChanged && has("resourcesListChanged"),
	}
	if has("resourceSubscriptions") {
		got.ResourceSubscriptions = want.ResourceSubscriptions
	}
	return got
}

// Feed is the set of subscriptions/listen streams of a server and the
// fan-out of the changes published to them. Its zero value is ready to
// use; its methods may be called concurrently.
type Feed struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    chan struct{}
}

type listener struct {
	mu     sync.Mutex // held while the acknowledgement is sent: nothing goes before it
	to     Notifier
	id     json.RawMessage
	filter ListenFilter
}

func (f *Feed) done() chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed == nil {
		f.closed = make(chan struct{})
	}
	return f.closed
}

// Listen serves one subscriptions/listen request, whose id is id, for the
// client to: it sends notifications/subscriptions/acknowledged with the
// filter honoured, then the changes published that match it, until ctx
// ends (its error) or Close (nil: the request is answered, resultType
// complete).
func (f *Feed) Listen(ctx context.Context, to Notifier, id json.RawMessage, filter ListenFilter) error {
	closed := f.done()
	l := &listener{to: to, id: id, filter: filter}
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
	err := to.Notify(ctx, "notifications/subscriptions/acknowledged", ack)
	l.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-closed:
		return nil
	}
}

// Publish sends the notification of a list change ("toolsListChanged",
// "promptsListChanged", "resourcesListChanged") to every listener that
// asked for it. It never waits for a slow client.
func (f *Feed) Publish(change string) {
	method := changeMethods[change]
	f.each(func(l *listener) bool {
		return (change == "toolsListChanged" && l.filter.ToolsListChanged) ||
			(change == "promptsListChanged" && l.filter.PromptsListChanged) ||
			(change == "resourcesListChanged" && l.filter.ResourcesListChanged)
	}, method, nil)
}

// PublishResource sends notifications/resources/updated for uri to the
// listeners subscribed to it.
func (f *Feed) PublishResource(uri string) {
	f.each(func(l *listener) bool { return slices.Contains(l.filter.ResourceSubscriptions, uri) }, "notifications/resources/updated", map[string]any{"uri": uri})
}

func (f *Feed) each(match func(*listener) bool, method string, params map[string]any) {
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
			_ = l.to.Notify(context.Background(), method, p) // a listener gone is dropped by its handler
		}()
	}
}

// Close ends every subscription gracefully: each Listen returns nil.
func (f *Feed) Close() {
	ch := f.done()
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}
