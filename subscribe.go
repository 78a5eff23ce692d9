package jsonrpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/params"
	"github.com/seedhq/jsonrpc/internal/pubsub"
	"github.com/seedhq/jsonrpc/internal/wire"
	"github.com/seedhq/jsonrpc/state"
)

// Error codes of the subscription layer (server-defined range).
const (
	// CodeSubscriptionNotFound answers <ns>_unsubscribe with an id that is
	// not a live subscription of this connection.
	CodeSubscriptionNotFound = -32010
	// CodeSubscriptionOverflow is the error of the final notification of a
	// subscription ended by OverflowClose.
	CodeSubscriptionOverflow = -32011
	// CodeSubscriptionLimit answers <ns>_subscribe on a connection that
	// already holds SubscriptionsOptions.MaxPerConn live subscriptions.
	CodeSubscriptionLimit  = -32012
	CodeSubscriptionBroker = -32013 // a topic's Broker failed, or the server fell behind it (AddTopic)
)

// Defaults of the subscription layer.
const (
	DefaultSubscriptionBuffer       = 256   // events queued per subscription (server side)
	DefaultMaxSubscriptionsPerConn  = 1024  // live subscriptions per connection
	DefaultClientSubscriptionBuffer = 20000 // events queued per subscription (client side), as go-ethereum's client
)

// OverflowPolicy says what a subscription does when its buffer is full
// because the client reads more slowly than the producer sends.
type OverflowPolicy uint8

const (
	// OverflowBlock makes Sink.Send wait for room: back-pressure on the
	// producer, nothing lost. A client that stops reading for good is cut
	// off by the connection's write timeout.
	OverflowBlock OverflowPolicy = iota
	// OverflowDropOldest drops the oldest queued event to make room; the
	// next event sent carries the number dropped ("dropped").
	OverflowDropOldest
	// OverflowClose ends the subscription: the events already queued are
	// sent, then a final notification with a CodeSubscriptionOverflow error.
	OverflowClose
)

// Subscriptions serves the subscriptions of one namespace on a Mux in
// go-ethereum's convention (guarantees in doc.go): <ns>_subscribe ["kind",
// args...] returns an id; events come as <ns>_subscription {"subscription":
// id, "result": event}, with "dropped" (OverflowDropOldest: events dropped
// just before this one) and, in the last one of a subscription that failed,
// "error" (an error object); <ns>_unsubscribe [id] ends it. Create it with
// NewSubscriptions; add kinds with AddSubscription or AddTopic.
type Subscriptions struct {
	namespace   string // for messages
	subscribe   string
	unsubscribe string
	method      string                             // of the event notifications
	live        *pubsub.Live[*Conn, *subscription] // live subscriptions by connection and id
	fan         *pubsub.Fanout                     // the topics' events (AddTopic)

	mu    sync.Mutex
	kinds map[string]subscriptionKind
}

// SubscriptionsOptions is the server side's configuration of one
// namespace of subscriptions (NewSubscriptions); the client's, for one
// subscribe call, is SubscribeOptions. The zero value of each field is its
// default.
type SubscriptionsOptions struct {
	// Namespace names the methods, go-ethereum's convention:
	// <ns>_subscribe, <ns>_unsubscribe and the <ns>_subscription
	// notifications.
	Namespace string
	// SubscribeMethod, UnsubscribeMethod and NotificationMethod, when set,
	// replace the names Namespace makes.
	SubscribeMethod, UnsubscribeMethod, NotificationMethod string
	// MaxPerConn caps the live subscriptions of one connection (default
	// DefaultMaxSubscriptionsPerConn); a subscribe call over the cap is
	// answered with CodeSubscriptionLimit.
	MaxPerConn int
	// Broker, when set, carries the events of topics (AddTopic) between
	// every instance sharing it (nil: this process only).
	Broker state.Broker
}

// NewSubscriptions registers the subscribe and unsubscribe methods of
// opts's namespace on mux. Over Streamable HTTP with sessions, a
// subscription belongs to the session (SessionConn) and its events go on
// the session's standalone GET stream. Over a transport without a
// connection that outlives the call (plain HTTP, stateless Streamable
// HTTP), subscribing is answered with -32601 "notifications not
// supported", as go-ethereum does.
func NewSubscriptions(mux *Mux, opts SubscriptionsOptions) *Subscriptions {
	s := &Subscriptions{
		namespace: cmp.Or(opts.Namespace, opts.SubscribeMethod),
		kinds:     make(map[string]subscriptionKind),
	}
	maxPerConn := orDefault(opts.MaxPerConn, DefaultMaxSubscriptionsPerConn)
	s.live = pubsub.NewLive[*Conn](maxPerConn, func(sub *subscription) { sub.End(ErrClosed, false) })
	s.subscribe, s.unsubscribe, s.method = pubsub.Methods(opts.Namespace, opts.SubscribeMethod, opts.UnsubscribeMethod, opts.NotificationMethod)
	s.fan = pubsub.NewFanout(opts.Broker, s.subscribe+" ")
	Register(mux, s.subscribe, s.serveSubscribe, MethodDoc{
		Summary: "Starts a subscription: params are the kind of events, then its arguments; the result is the subscription id.",
	})
	mux.mu.Lock()
	mux.methods[s.subscribe].info.Subscriptions = s
	mux.mu.Unlock()
	Register(mux, s.unsubscribe, s.serveUnsubscribe, MethodDoc{
		Summary: "Ends a subscription of this connection; returns true.",
	})
	return s
}

// Sink is where a producer sends the events of one subscription.
type Sink[E any] struct{ sub *subscription }

// ID returns the subscription's id, as the client received it.
func (k *Sink[E]) ID() string { return k.sub.ID }

// Send queues ev to be sent to the subscriber. It is encoded at once, so the
// producer may reuse ev's memory. Under OverflowBlock it waits while the
// buffer is full. Once the subscription has ended it returns an error
// wrapping ErrSubscriptionClosed, and the producer should return.
func (k *Sink[E]) Send(ev E) error {
	raw, err := codec.Marshal(ev)
	if err != nil {
		return err
	}
	return k.sub.PushEvent(raw)
}

// SubscriptionKindOptions is the server side's configuration of one kind
// of subscription (AddSubscription, AddTopic): the queue of events each of
// its subscriptions holds unsent. The zero value of each field is its default.
type SubscriptionKindOptions struct {
	Buffer   int            // events a subscription holds unsent (default DefaultSubscriptionBuffer)
	Overflow OverflowPolicy // what happens when the buffer is full (default OverflowBlock)
}

type subscriptionKind struct {
	buffer        int
	policy        OverflowPolicy
	params, event reflect.Type // P, E
	// start decodes the arguments and starts the producer; the returned
	// error is sent as the subscribe call's error.
	start func(ctx context.Context, args []byte, sub *subscription) error
}

func newKind[P, E any](opts []SubscriptionKindOptions) subscriptionKind {
	var o SubscriptionKindOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	return subscriptionKind{buffer: orDefault(o.Buffer, DefaultSubscriptionBuffer), policy: o.Overflow, params: reflect.TypeFor[P](), event: reflect.TypeFor[E]()}
}

// AddSubscription adds a kind of subscription to s. fn runs on a goroutine
// of its own once the subscribe call is answered, sends events through sink,
// and returns when the subscription is over; its context is cancelled when
// the subscription ends otherwise (unsubscribe, disconnect, shutdown). An
// error it returns reaches the subscriber in a last notification; after nil
// the events sent are delivered and the subscription ends quietly.
//
// The arguments after the kind are decoded into P as Register decodes
// params: one argument is P's params (an object by name, an array by
// position); several arguments are an array by position; none is the zero P
// (unless P has required fields). Arguments that do not fit give -32602.
// opts, at most one, sets the kind's buffer and overflow policy.
func AddSubscription[P, E any](s *Subscriptions, kind string, fn func(ctx context.Context, params P, sink *Sink[E]) error, opts ...SubscriptionKindOptions) {
	pd := params.NewDecoder(reflect.TypeFor[P]())
	k := newKind[P, E](opts)
	k.start = func(ctx context.Context, args []byte, sub *subscription) error {
		var p P
		if err := decodeParams(pd, args, &p); err != nil {
			return err
		}
		go func() { sub.ProducerDone(fn(sub.Ctx, p, &Sink[E]{sub: sub})) }()
		return nil
	}
	s.addKind(kind, k)
}

// AddTopic adds a kind of subscription, with no arguments, whose events are
// those given to Publish on any instance sharing the Broker: each subscriber
// receives each one published after its subscribe call was answered, once,
// in the Broker's order (without one, the Publishes'). opts sets the buffer
// and overflow policy of each subscription (under OverflowBlock, a slow one
// holds back the others of its instance). Broker failures: docs/subscriptions.md.
func AddTopic[E any](s *Subscriptions, kind string, opts ...SubscriptionKindOptions) {
	k := newKind[struct{}, E](opts)
	pubsub.AddTopic[E](s.fan, kind)
	k.start = func(ctx context.Context, args []byte, sub *subscription) error {
		if len(args) > 0 {
			return invalidParams("/1", "the "+kind+" subscription takes no arguments")
		}
		if err := s.fan.Join(ctx, kind, &sub.Sub); err != nil {
			return sub.errorObject(err)
		}
		return nil
	}
	s.addKind(kind, k)
}

// Publish sends event, an E of kind's AddTopic, to kind's subscribers: with
// a Broker, once it accepted the event (or its error); without, once each
// subscription here has queued it.
func (s *Subscriptions) Publish(ctx context.Context, kind string, event any) error {
	return s.fan.Publish(ctx, kind, event)
}

func (s *Subscriptions) addKind(kind string, k subscriptionKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.kinds[kind]; dup {
		panic("jsonrpc: subscription kind registered twice: " + kind)
	}
	s.kinds[kind] = k
}

// SubscriptionKind describes one kind of subscription: its name (the
// first argument of the subscribe call), the Go type of its arguments and
// of its events.
type SubscriptionKind struct {
	Name       string
	ParamsType reflect.Type
	EventType  reflect.Type
}

// Kinds returns the kinds of subscriptions added so far, sorted by name.
func (s *Subscriptions) Kinds() []SubscriptionKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SubscriptionKind, 0, len(s.kinds))
	for name, k := range s.kinds {
		out = append(out, SubscriptionKind{Name: name, ParamsType: k.params, EventType: k.event})
	}
	slices.SortFunc(out, func(a, b SubscriptionKind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MethodNames returns the names of the subscribe and unsubscribe methods
// and of the event notifications.
func (s *Subscriptions) MethodNames() (subscribe, unsubscribe, notification string) {
	return s.subscribe, s.unsubscribe, s.method
}

var errNotificationsUnsupported = &Error{Code: CodeMethodNotFound, Message: "notifications not supported"}

func (s *Subscriptions) serveSubscribe(ctx context.Context, params []json.RawMessage) (string, error) {
	conn := SessionConn(ctx) // over Streamable HTTP, events go on the session's GET stream
	if conn == nil {
		return "", errNotificationsUnsupported
	}
	kind, args, problem := pubsub.SplitKind(params)
	if problem != "" {
		return "", invalidParams("/0", problem)
	}
	s.mu.Lock()
	k, ok := s.kinds[kind]
	s.mu.Unlock()
	if !ok {
		return "", Errorf(CodeMethodNotFound, "no %q subscription in the %s namespace", kind, s.namespace)
	}
	sub := &subscription{owner: s, conn: conn}
	sub.Start(ctx, s.method, k.buffer, pubsub.Policy(k.policy), sub)
	switch err := s.live.Add(conn.ctx, conn, sub.ID, sub); {
	case errors.Is(err, pubsub.ErrConnEnded):
		return "", ErrClosed
	case err != nil:
		return "", Errorf(CodeSubscriptionLimit, "too many subscriptions on this connection (limit %d)", s.live.Max())
	}
	if err := k.start(ctx, args, sub); err != nil {
		sub.End(nil, false)
		return "", err
	}
	// Events wait for the subscribe response to be on its way.
	afterReply(ctx, sub.Ready)
	return sub.ID, nil
}

type unsubscribeParams struct {
	ID string `json:"id"`
}

func (s *Subscriptions) serveUnsubscribe(ctx context.Context, p unsubscribeParams) (bool, error) {
	conn := SessionConn(ctx)
	if conn == nil {
		return false, errNotificationsUnsupported
	}
	sub, ok := s.live.Get(conn, p.ID)
	if !ok {
		return false, Errorf(CodeSubscriptionNotFound, "subscription not found: %q", p.ID)
	}
	sub.End(nil, false)
	return true, nil
}

// Live returns the number of live subscriptions, over every connection.
func (s *Subscriptions) Live() int { return s.live.Len() }

// subscription is one live subscription on the server; its events wait
// in its Outbox.
type subscription struct {
	pubsub.Sub
	owner *Subscriptions
	conn  *Conn
}

// Send, Ended, AppendError and Broken make a subscription its Outbox's
// pubsub.Subscriber.

func (sub *subscription) Send(msg []byte) error { return sub.conn.ch.Send(msg) }

func (sub *subscription) Ended(err error) {
	sub.Cancel(err)
	sub.owner.fan.Leave(&sub.Sub)
	sub.owner.live.Remove(sub.conn, sub.ID, sub.conn.ctx.Err() != nil) // lock order: the Outbox's, then the registry's
}

func (sub *subscription) AppendError(b []byte, err error) []byte {
	return appendError(b, sub.errorObject(err))
}

func (sub *subscription) Broken(err error) { sub.conn.close(err) }

func (sub *subscription) errorObject(err error) *Error {
	if errors.Is(err, ErrSubscriptionOverflow) {
		return &Error{Code: CodeSubscriptionOverflow, Message: "subscription closed: the client did not read its events fast enough"}
	}
	var e *Error
	if re := (*pubsub.RelayError)(nil); !errors.As(err, &e) && errors.As(err, &re) {
		return &Error{Code: CodeSubscriptionBroker, Message: re.Error()}
	}
	return sub.conn.srv.toError(&Request{Method: sub.owner.subscribe}, err) // an *Error in err's chain as it is
}

// The client side.

// Subscription is the client's end of a subscription (see Subscribe).
type Subscription[E any] struct {
	conn        *Conn
	id          string
	unsubscribe string
	cs          *pubsub.Queue
}

// SubscribeOptions is the client side's configuration of one subscribe
// call (SubscribeWith); the server's is SubscriptionsOptions.
type SubscribeOptions struct {
	// Namespace selects the methods <ns>_subscribe, <ns>_unsubscribe and
	// <ns>_subscription.
	Namespace string
	// Methods, when set, replace those three names (as on the server).
	SubscribeMethod, UnsubscribeMethod, NotificationMethod string
	// Buffer is how many events wait to be taken before the subscription
	// ends with ErrSubscriptionOverflow (default DefaultClientSubscriptionBuffer).
	Buffer int
}

// Subscribe calls namespace+"_subscribe" with args (the kind of events,
// then its arguments) and returns the subscription. Events are decoded into
// E as they are taken (Next, Events). Events that arrive while
// DefaultClientSubscriptionBuffer events wait untaken end the subscription
// with ErrSubscriptionOverflow, and the client unsubscribes: memory stays
// bounded however fast the server sends.
func Subscribe[E any](ctx context.Context, c *Conn, namespace string, args ...any) (*Subscription[E], error) {
	return SubscribeWith[E](ctx, c, SubscribeOptions{Namespace: namespace}, args...)
}

// SubscribeWith is Subscribe with options.
func SubscribeWith[E any](ctx context.Context, c *Conn, opts SubscribeOptions, args ...any) (*Subscription[E], error) {
	sub, unsub, notif := pubsub.Methods(opts.Namespace, opts.SubscribeMethod, opts.UnsubscribeMethod, opts.NotificationMethod)
	buffer := orDefault(opts.Buffer, DefaultClientSubscriptionBuffer)
	subs := c.clientSubs()
	subs.Expect(notif, buffer)
	defer subs.ExpectDone(notif)
	if args == nil {
		args = []any{}
	}
	var id string
	if err := c.Call(ctx, sub, args, &id); err != nil {
		return nil, err
	}
	cs := subs.Claim(notif, id, buffer, func() {
		// Tell the server, from a goroutine of its own: this runs on the
		// connection's reader, which must go on reading.
		go c.Call(context.Background(), unsub, []string{id}, nil)
	})
	return &Subscription[E]{conn: c, id: id, unsubscribe: unsub, cs: cs}, nil
}

// ID returns the subscription's id.
func (s *Subscription[E]) ID() string { return s.id }

// Next waits for the next event. After the subscription has ended and its
// queued events are taken, it returns the reason (see Err).
func (s *Subscription[E]) Next(ctx context.Context) (E, error) {
	var ev E
	err := s.cs.NextInto(ctx, &ev)
	return ev, err
}

// Events returns an iterator over the events, for use in a range loop that
// ends when the subscription does; Err then says why.
func (s *Subscription[E]) Events() func(yield func(E) bool) {
	return func(yield func(E) bool) {
		for {
			ev, err := s.Next(context.Background())
			if err != nil || !yield(ev) {
				return
			}
		}
	}
}

// Err returns why the subscription ended: nil while it is live; ErrClosed
// after Unsubscribe or when the connection ended; the server's *Error when it
// ended the subscription with one; ErrSubscriptionOverflow when events were
// not taken fast enough.
func (s *Subscription[E]) Err() error { return s.cs.Err() }

// Dropped returns how many events the server reported dropped
// (OverflowDropOldest).
func (s *Subscription[E]) Dropped() int64 { return s.cs.Dropped() }

// Unsubscribe ends the subscription and tells the server. Events already
// queued are discarded.
func (s *Subscription[E]) Unsubscribe(ctx context.Context) error {
	s.conn.clientSubs().Forget(s.cs)
	s.cs.Finish(ErrClosed, true)
	var ok bool
	return s.conn.Call(ctx, s.unsubscribe, []string{s.id}, &ok)
}

// clientSubs returns the connection's subscription registry, creating it.
func (c *Conn) clientSubs() *pubsub.Registry {
	if s := c.subs.Load(); s != nil {
		return s
	}
	s := pubsub.NewRegistry(func(o *pubsub.ErrorObject) error { return (*Error)(o) }) // the same object
	if !c.subs.CompareAndSwap(nil, s) {
		return c.subs.Load()
	}
	context.AfterFunc(c.ctx, func() { s.CloseAll(ErrClosed) })
	return s
}

// takeEvent routes a notification that may be an event of one of our
// subscriptions, on the read goroutine (see pubsub.Registry.Take).
func (c *Conn) takeEvent(data []byte, e *wire.Envelope) bool {
	r := c.subs.Load()
	return r != nil && e.Kind == wire.KindRequest && r.Take(e.MethodName(data), paramsOf(data, e))
}
