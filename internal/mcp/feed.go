package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/state"
)

// MetaSubscriptionID is the _meta key that tags the messages of a
// subscriptions/listen stream with the listen request's id.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// Notify sends a notification to a client (the root's Conn.Notify).
type Notify func(ctx context.Context, method string, params any) error

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
		return slices.Contains(supports, member) || len(supports) == 0 && changeMethods[member] != ""
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

// ErrRelay ends the subscriptions/listen requests of an instance whose
// Broker failed: changes published after it may not reach them, so they
// end, answered with this error, rather than go on with a gap.
var ErrRelay = errors.New("subscriptions/listen ended: the broker failed; listen again")

// feedTopic is the Broker topic of the changes: every Feed sharing a
// Broker is one feed.
const feedTopic = "mcp subscriptions/listen"

// Feed is the set of subscriptions/listen streams of a server and the
// fan-out of the changes published to them. Its zero value is ready to
// use; its methods may be called concurrently. With a Broker (the b of
// Listen and Publish, the same on every call), a change published on any
// instance sharing it reaches the listeners of every instance: each
// instance with listeners holds one broker subscription (a relay, made by
// the first listener and closed with the last) whose changes it hands to
// them; when that fails, its listeners end with ErrRelay.
type Feed struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    chan struct{}
	closeOnce sync.Once
	relay     *relay     // under mu; nil without a broker or listeners
	join      sync.Mutex // held while the relay is made
}

// relay is the broker subscription that feeds an instance's listeners.
type relay struct {
	n      int                // listeners, under Feed.mu
	cancel context.CancelFunc // closes it
	failed chan struct{}      // closed once it failed, err set
	err    error
}

// listener is one subscriptions/listen stream. Its notifications wait in
// a queue, sent in order by one goroutine at a time after the
// acknowledgement; a change already waiting is not queued again (the
// client has still to re-read), so that the queue stays bounded however
// slowly the client reads.
type listener struct {
	to     Notify
	id     json.RawMessage
	filter ListenFilter

	mu      sync.Mutex
	queue   []note
	sending bool // a goroutine sends the queue, or the acknowledgement is on its way
}

// note is one notification: a method, and the uri of a resource update.
type note struct{ method, uri string }

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
// filter honoured, then the changes published that match it (through b,
// when not nil), until ctx ends (its error), Close or ended (closed once
// the client finished sending) (nil: the request is answered, resultType
// complete) or b fails (an error wrapping ErrRelay).
func (f *Feed) Listen(ctx context.Context, b state.Broker, to Notify, id json.RawMessage, filter ListenFilter, ended <-chan struct{}) error {
	closed := f.done()
	var r *relay
	var failed <-chan struct{}
	if b != nil {
		var err error
		if r, err = f.joinRelay(ctx, b); err != nil {
			return err
		}
		defer f.leaveRelay(r)
		failed = r.failed
	}
	l := &listener{to: to, id: id, filter: filter, sending: true}
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
	if err := to(ctx, "notifications/subscriptions/acknowledged", ack); err != nil {
		return err
	}
	l.mu.Lock()
	l.sending = false
	l.kick()
	l.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-closed:
		return nil
	case <-ended:
		return nil
	case <-failed:
		return r.err // set before failed was closed
	}
}

// joinRelay counts one more listener of the relay, making it if there is
// none.
func (f *Feed) joinRelay(ctx context.Context, b state.Broker) (*relay, error) {
	f.join.Lock()
	defer f.join.Unlock()
	f.mu.Lock()
	if r := f.relay; r != nil {
		r.n++
		f.mu.Unlock()
		return r, nil
	}
	f.mu.Unlock()
	bs, err := b.Subscribe(ctx, feedTopic)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRelay, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	r := &relay{n: 1, cancel: cancel, failed: make(chan struct{})}
	f.mu.Lock()
	f.relay = r
	f.mu.Unlock()
	go f.run(rctx, bs, r)
	return r, nil
}

// leaveRelay counts one listener less of r, closing it with the last.
func (f *Feed) leaveRelay(r *relay) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r.n--
	if r.n == 0 && f.relay == r {
		f.relay = nil
		r.cancel()
	}
}

// run hands the changes r's broker subscription carries to the listeners,
// until r is closed (ctx ends) or fails.
func (f *Feed) run(ctx context.Context, bs state.Subscription, r *relay) {
	defer bs.Close()
	for {
		data, err := bs.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			slog.Warn("jsonrpc: the broker subscription of subscriptions/listen failed; its listeners end", "err", err)
			f.mu.Lock()
			if f.relay == r {
				f.relay = nil
			}
			r.err = fmt.Errorf("%w: %w", ErrRelay, err)
			close(r.failed)
			f.mu.Unlock()
			return
		}
		f.deliver(strings.Cut(string(data), " "))
	}
}

// Publish sends the notification of a list change ("toolsListChanged",
// "promptsListChanged", "resourcesListChanged") to every listener that
// asked for it: through b, when not nil, once b accepted it (b's error
// otherwise); without, at once. It never waits for a slow client.
func (f *Feed) Publish(b state.Broker, change string) error {
	if changeMethods[change] == "" {
		return fmt.Errorf("mcp: Publish: %q is not a list change", change)
	}
	return f.publish(b, "change "+change)
}

// PublishResource sends notifications/resources/updated for uri to the
// listeners subscribed to it, through b as Publish.
func (f *Feed) PublishResource(b state.Broker, uri string) error {
	return f.publish(b, "resource "+uri)
}

// publish hands msg ("change NAME" or "resource URI") to b, or delivers it.
func (f *Feed) publish(b state.Broker, msg string) error {
	if b != nil {
		return b.Publish(context.Background(), feedTopic, []byte(msg))
	}
	f.deliver(strings.Cut(msg, " "))
	return nil
}

// deliver queues the notification of a list change (kind "change") or a
// resource update (kind "resource") for the listeners that asked for it.
func (f *Feed) deliver(kind, arg string, _ bool) {
	n := note{method: changeMethods[arg]}
	if kind == "resource" {
		n = note{"notifications/resources/updated", arg}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for l := range f.listeners {
		if lf := &l.filter; kind == "resource" && slices.Contains(lf.ResourceSubscriptions, arg) || kind == "change" &&
			(arg == "toolsListChanged" && lf.ToolsListChanged || arg == "promptsListChanged" && lf.PromptsListChanged || arg == "resourcesListChanged" && lf.ResourcesListChanged) {
			l.mu.Lock()
			if !slices.Contains(l.queue, n) {
				l.queue = append(l.queue, n)
			}
			l.kick()
			l.mu.Unlock()
		}
	}
}

// kick starts the sender if there is something to send; l.mu is held.
func (l *listener) kick() {
	if !l.sending && len(l.queue) > 0 {
		l.sending = true
		go l.send()
	}
}

// send sends the queue in order, until it is empty.
func (l *listener) send() {
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.sending = false
			l.mu.Unlock()
			return
		}
		n := l.queue[0]
		l.queue = l.queue[1:]
		l.mu.Unlock()
		p := struct { // a struct, not a map: its members keep one order
			Meta map[string]any `json:"_meta"`
			URI  string         `json:"uri,omitzero"`
		}{map[string]any{MetaSubscriptionID: l.id}, n.uri}
		_ = l.to(context.Background(), n.method, p) // a listener gone is dropped by its handler
	}
}

// Close ends every subscription gracefully: each Listen returns nil.
func (f *Feed) Close() {
	ch := f.done()
	f.closeOnce.Do(func() { close(ch) })
}
