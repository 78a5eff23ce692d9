package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// ChangeFeed serves MCP's subscriptions/listen (2026-07-28): a long-lived
// request whose answer stream (SSE over Streamable HTTP, the connection on
// stdio) carries the change notifications the client opted in to: first
// notifications/subscriptions/acknowledged with the filter honoured, then
// each change given to Publish or PublishResource, every message tagged with
// _meta's io.modelcontextprotocol/subscriptionId (the listen request's id).
// It ends when the client closes the stream or cancels the request, or with
// Close, which answers the request. Its zero value is ready to use.
type ChangeFeed struct {
	// Supports lists the filter members the server honours:
	// "toolsListChanged", "promptsListChanged", "resourcesListChanged",
	// "resourceSubscriptions" (default: the three list changes).
	Supports []string
	// Broker, when set, carries the changes published on any instance to
	// the listeners of all; when it fails, theirs are answered with -32603.
	Broker state.Broker

	feed mcp.Feed // the listeners and the fan-out of changes
}

// ListenFilter is the notifications filter of subscriptions/listen.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitzero"`
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
	id := json.RawMessage(req.ID.String())
	if err := f.feed.Listen(ctx, f.Broker, c.Notify, id, mcp.Honoured(f.Supports, mcp.ListenFilter(p.Notifications)), c.peerFinished()); errors.Is(err, mcp.ErrRelay) {
		return nil, &Error{Code: CodeInternalError, Message: mcp.ErrRelay.Error()}
	} else if err != nil {
		return nil, err
	}
	return struct {
		ResultType string         `json:"resultType"`
		Meta       map[string]any `json:"_meta"`
	}{"complete", map[string]any{MetaSubscriptionID: id}}, nil
}

// Publish sends the notification of a list change ("toolsListChanged",
// "promptsListChanged", "resourcesListChanged") to every listener that
// asked for it, never waiting for a slow client; with a Broker, on every
// instance, once the Broker accepted it (its error otherwise).
func (f *ChangeFeed) Publish(change string) error { return f.feed.Publish(f.Broker, change) }

// PublishResource sends notifications/resources/updated for uri to the
// listeners subscribed to it, as Publish.
func (f *ChangeFeed) PublishResource(uri string) error { return f.feed.PublishResource(f.Broker, uri) }

// Close ends every subscription gracefully: each listen request is
// answered (resultType complete), which closes its stream.
func (f *ChangeFeed) Close() { f.feed.Close() }
