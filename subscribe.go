package jsonrpc

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Subscriptions: server push in go-ethereum's convention, which web3 clients
// and jsonrpsee speak too. A client calls <ns>_subscribe with the kind of
// events it wants and that kind's arguments, ["ticker", {...}]; the result is
// a subscription id; events arrive as <ns>_subscription notifications with
// params {"subscription": id, "result": event}; <ns>_unsubscribe [id] ends it.
//
// The guarantees, on every transport with a connection (TCP, unix sockets,
// stdio, WebSocket):
//   - the subscribe response is sent before any event of that subscription;
//     events produced meanwhile are held and follow it, in order;
//   - events of one subscription are sent in the order they were produced;
//   - a subscription's buffer is bounded, and what happens when a client
//     reads too slowly is chosen at registration (an OverflowPolicy);
//   - a subscription ends, and its producer's context is cancelled, on
//     unsubscribe, when the connection ends (disconnect, Close, Shutdown),
//     or when the producer returns.
//
// Two members are added to the notification's params beside "subscription"
// and "result", only when they apply: "dropped" (OverflowDropOldest: how many
// events were dropped just before this one) and "error" (an error object, in
// the last notification of a subscription that ended with an error: its
// producer failed, or OverflowClose found its buffer full).

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
	CodeSubscriptionLimit = -32012
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

// ErrSubscriptionClosed is returned by Sink.Send once the subscription has
// ended (the error wraps the reason when there is one).
var ErrSubscriptionClosed = errors.New("jsonrpc: subscription closed")

// ErrSubscriptionOverflow ends a subscription whose buffer overflowed: on
// the server under OverflowClose, on the client when events arrive faster
// than they are taken.
var ErrSubscriptionOverflow = errors.New("jsonrpc: subscription buffer overflow")

// Subscriptions serves the subscriptions of one namespace on a Mux. Create
// it with NewSubscriptions and add kinds with AddSubscription.
type Subscriptions struct {
	namespace   string // for messages
	subscribe   string
	unsubscribe string
	method      string // of the event notifications
	maxPerConn  int

	mu    sync.Mutex
	kinds map[string]subscriptionKind
	conns map[*Conn]map[string]*subscription // live subscriptions by connection and id
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
}

// subscriptionMethods returns the three method names of a namespace, each
// replaced by the one given when it is not empty: the same rule on both
// sides (SubscriptionsOptions, SubscribeOptions).
func subscriptionMethods(namespace, subscribe, unsubscribe, notification string) (string, string, string) {
	return cmp.Or(subscribe, namespace+"_subscribe"),
		cmp.Or(unsubscribe, namespace+"_unsubscribe"),
		cmp.Or(notification, namespace+"_subscription")
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
		namespace:  cmp.Or(opts.Namespace, opts.SubscribeMethod),
		maxPerConn: opts.MaxPerConn,
		kinds:      make(map[string]subscriptionKind),
		conns:      make(map[*Conn]map[string]*subscription),
	}
	if s.maxPerConn <= 0 {
		s.maxPerConn = DefaultMaxSubscriptionsPerConn
	}
	s.subscribe, s.unsubscribe, s.method = subscriptionMethods(opts.Namespace, opts.SubscribeMethod, opts.UnsubscribeMethod, opts.NotificationMethod)
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
func (k *Sink[E]) ID() string { return k.sub.id }

// Send queues ev to be sent to the subscriber. It is encoded at once, so the
// producer may reuse ev's memory. Under OverflowBlock it waits while the
// buffer is full. Once the subscription has ended it returns an error
// wrapping ErrSubscriptionClosed, and the producer should return.
func (k *Sink[E]) Send(ev E) error {
	raw, err := wire.Marshal(ev)
	if err != nil {
		return err
	}
	return k.sub.push(raw)
}

// SubscriptionKindOptions is the server side's configuration of one kind
// of subscription (AddSubscription): the queue of events each of its
// subscriptions holds unsent. The zero value of each field is its default.
type SubscriptionKindOptions struct {
	// Buffer is how many events a subscription holds unsent (default
	// DefaultSubscriptionBuffer).
	Buffer int
	// Overflow is what happens when the buffer is full (default
	// OverflowBlock).
	Overflow OverflowPolicy
}

type subscriptionKind struct {
	buffer int
	policy OverflowPolicy
	params reflect.Type // P
	event  reflect.Type // E
	// start decodes the arguments and starts the producer; the returned
	// error is sent as the subscribe call's error.
	start func(ctx context.Context, args []byte, sub *subscription) error
}

// AddSubscription adds a kind of subscription to s. fn produces the events:
// it runs on a goroutine of its own once the subscribe call is answered,
// sends events through sink, and returns when the subscription is over. Its
// context is cancelled when the subscription ends otherwise (unsubscribe,
// disconnect, shutdown). If fn returns an error, the subscriber gets it in a
// last notification; when it returns nil, the events sent are delivered and
// the subscription ends quietly.
//
// The arguments after the kind are decoded into P as Register decodes
// params: one argument is P's params (an object by name, an array by
// position); several arguments are an array by position; none is the zero P
// (unless P has required fields). Arguments that do not fit give -32602.
// opts, at most one, sets the kind's buffer and overflow policy.
func AddSubscription[P, E any](s *Subscriptions, kind string, fn func(ctx context.Context, params P, sink *Sink[E]) error, opts ...SubscriptionKindOptions) {
	pd := newParamsDecoder(reflect.TypeFor[P]())
	var o SubscriptionKindOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultSubscriptionBuffer
	}
	k := subscriptionKind{buffer: o.Buffer, policy: o.Overflow, params: reflect.TypeFor[P](), event: reflect.TypeFor[E]()}
	k.start = func(ctx context.Context, args []byte, sub *subscription) error {
		var p P
		if err := pd.decode(args, &p); err != nil {
			return err
		}
		sink := &Sink[E]{sub: sub}
		go func() {
			sub.producerDone(fn(sub.ctx, p, sink))
		}()
		return nil
	}
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

// callScoped reports whether the connection lives only as long as one call
// (a Streamable HTTP POST's), so that nothing can be pushed on it later.
func (c *Conn) callScoped() bool {
	_, ok := c.ch.(*postStream)
	return ok
}

var errNotificationsUnsupported = &Error{Code: CodeMethodNotFound, Message: "notifications not supported"}

func (s *Subscriptions) serveSubscribe(ctx context.Context, params []json.RawMessage) (string, error) {
	conn := SessionConn(ctx) // over Streamable HTTP, events go on the session's GET stream
	if conn == nil {
		return "", errNotificationsUnsupported
	}
	kind, args, err := splitKind(params)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	k, ok := s.kinds[kind]
	s.mu.Unlock()
	if !ok {
		return "", Errorf(CodeMethodNotFound, "no %q subscription in the %s namespace", kind, s.namespace)
	}
	sub := s.newSubscription(ctx, conn, k)
	if err := s.add(conn, sub); err != nil {
		return "", err
	}
	if err := k.start(ctx, args, sub); err != nil {
		sub.end(nil, false)
		return "", err
	}
	// Events wait for the subscribe response to be on its way.
	afterReply(ctx, sub.replied)
	return sub.id, nil
}

type unsubscribeParams struct {
	ID string `json:"id"`
}

func (s *Subscriptions) serveUnsubscribe(ctx context.Context, p unsubscribeParams) (bool, error) {
	conn := SessionConn(ctx)
	if conn == nil {
		return false, errNotificationsUnsupported
	}
	s.mu.Lock()
	sub := s.conns[conn][p.ID]
	s.mu.Unlock()
	if sub == nil {
		return false, Errorf(CodeSubscriptionNotFound, "subscription not found: %q", p.ID)
	}
	sub.end(nil, false)
	return true, nil
}

// splitKind takes the kind (a string, the first element) off the params
// array and returns the rest as the params of that kind.
func splitKind(elems []json.RawMessage) (kind string, args []byte, err error) {
	if len(elems) == 0 || elems[0][0] != '"' {
		return "", nil, invalidParams("/0", "expected the kind of subscription (a string) as the first element of the params array")
	}
	if err := wire.Unmarshal(elems[0], &kind); err != nil {
		return "", nil, invalidParams("/0", err.Error())
	}
	switch rest := elems[1:]; {
	case len(rest) == 0:
		return kind, nil, nil
	case len(rest) == 1 && (rest[0][0] == '{' || rest[0][0] == '['):
		return kind, rest[0], nil
	default:
		// Several arguments (or one scalar): an array by position.
		b := []byte{'['}
		for i, r := range rest {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, r...)
		}
		return kind, append(b, ']'), nil
	}
}

func (s *Subscriptions) add(conn *Conn, sub *subscription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if conn.ctx.Err() != nil {
		return ErrClosed
	}
	m := s.conns[conn]
	if len(m) >= s.maxPerConn {
		return Errorf(CodeSubscriptionLimit, "too many subscriptions on this connection (limit %d)", s.maxPerConn)
	}
	if m == nil {
		m = make(map[string]*subscription)
		s.conns[conn] = m
		// The connection's end ends its subscriptions.
		context.AfterFunc(conn.ctx, func() { s.dropConn(conn) })
	}
	m[sub.id] = sub
	return nil
}

func (s *Subscriptions) remove(sub *subscription) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.conns[sub.conn]; m != nil {
		delete(m, sub.id)
		if len(m) == 0 && sub.conn.ctx.Err() != nil {
			delete(s.conns, sub.conn)
		}
	}
}

func (s *Subscriptions) dropConn(conn *Conn) {
	s.mu.Lock()
	m := s.conns[conn]
	delete(s.conns, conn)
	s.mu.Unlock()
	for _, sub := range m {
		sub.end(ErrClosed, false)
	}
}

// Live returns the number of live subscriptions, over every connection.
func (s *Subscriptions) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.conns {
		n += len(m)
	}
	return n
}

func newSubscriptionID() string {
	var b [16]byte
	rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}

// subscription is one live subscription on the server. Its events wait in
// a bounded queue; a sender goroutine, started while there is something to
// send and the subscribe response has gone, writes them in order.
type subscription struct {
	id     string
	owner  *Subscriptions
	conn   *Conn
	ctx    context.Context // the producer's
	cancel context.CancelCauseFunc
	buffer int
	policy OverflowPolicy
	prefix []byte // {"jsonrpc":"2.0","method":"…","params":{"subscription":"…"

	mu      sync.Mutex
	room    *sync.Cond // signalled when the queue shrinks or the subscription ends
	queue   [][]byte   // encoded events, oldest first
	dropped int64      // events dropped since the last one sent
	ready   bool       // the subscribe response has been sent
	sending bool       // a sender goroutine runs
	ended   bool       // no more events are taken
	final   *Error     // sent after the queue, when the subscription ended with an error
	drop    bool       // the queue is discarded (unsubscribed, disconnected)
}

func (s *Subscriptions) newSubscription(ctx context.Context, conn *Conn, k subscriptionKind) *subscription {
	// The producer keeps the request's values (a principal, say) but lives
	// as long as the subscription, not the subscribe call.
	pctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	sub := &subscription{
		id:     newSubscriptionID(),
		owner:  s,
		conn:   conn,
		ctx:    pctx,
		cancel: cancel,
		buffer: k.buffer,
		policy: k.policy,
	}
	sub.room = sync.NewCond(&sub.mu)
	p := wire.AppendString([]byte(`{"jsonrpc":"2.0","method":`), s.method)
	p = append(p, `,"params":{"subscription":"`...)
	sub.prefix = append(append(p, sub.id...), '"')
	return sub
}

// push queues one encoded event, applying the overflow policy.
func (sub *subscription) push(raw []byte) error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for !sub.ended && len(sub.queue) >= sub.buffer {
		switch sub.policy {
		case OverflowBlock:
			sub.room.Wait()
			continue
		case OverflowDropOldest:
			sub.queue[0] = nil
			sub.queue = sub.queue[1:]
			sub.dropped++
			continue
		}
		// OverflowClose
		sub.endLocked(ErrSubscriptionOverflow, true)
		return sub.closedErr()
	}
	if sub.ended {
		return sub.closedErr()
	}
	sub.queue = append(sub.queue, raw)
	sub.kick()
	return nil
}

func (sub *subscription) closedErr() error {
	if cause := context.Cause(sub.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return errors.Join(ErrSubscriptionClosed, cause)
	}
	return ErrSubscriptionClosed
}

// kick starts the sender if there is something to send; sub.mu is held.
func (sub *subscription) kick() {
	if sub.ready && !sub.sending && (len(sub.queue) > 0 || sub.final != nil) {
		sub.sending = true
		go sub.send()
	}
}

// replied runs once the subscribe response is sent: events may follow.
func (sub *subscription) replied() {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sub.ready = true
	sub.kick()
}

// send writes the queued events in order until the queue is empty.
func (sub *subscription) send() {
	var msg []byte
	for {
		sub.mu.Lock()
		if sub.drop || (len(sub.queue) == 0 && sub.final == nil) {
			sub.sending = false
			sub.mu.Unlock()
			return
		}
		msg = append(msg[:0], sub.prefix...)
		if len(sub.queue) > 0 {
			if sub.dropped > 0 {
				msg = append(msg, `,"dropped":`...)
				msg = strconv.AppendInt(msg, sub.dropped, 10)
				sub.dropped = 0
			}
			msg = append(msg, `,"result":`...)
			msg = append(msg, sub.queue[0]...)
			sub.queue[0] = nil
			sub.queue = sub.queue[1:]
			sub.room.Signal()
		} else {
			msg = append(msg, `,"error":`...)
			msg = appendError(msg, sub.final)
			sub.final = nil
		}
		sub.mu.Unlock()
		msg = append(msg, "}}"...)
		if err := sub.conn.ch.Send(msg); err != nil {
			sub.end(err, false)
			sub.conn.close(err)
			return
		}
	}
}

// producerDone ends the subscription when its producer returns: what it
// sent is still delivered, then its error if it failed.
func (sub *subscription) producerDone(err error) {
	if err != nil && sub.ctx.Err() == nil {
		sub.end(err, true)
		return
	}
	sub.end(nil, true)
}

// end ends the subscription: the producer's context is cancelled and no
// more events are taken. With deliver, the queued events are still sent
// (then the error, if any); without, they are discarded.
func (sub *subscription) end(err error, deliver bool) {
	sub.mu.Lock()
	sub.endLocked(err, deliver)
	sub.mu.Unlock()
}

func (sub *subscription) endLocked(err error, deliver bool) {
	if sub.ended {
		return
	}
	sub.ended = true
	sub.cancel(err)
	sub.room.Broadcast()
	if deliver && err != nil {
		sub.final = sub.errorObject(err)
	}
	if !deliver {
		sub.drop = true
		sub.queue = nil
	}
	sub.kick()
	sub.owner.remove(sub) // lock order: sub.mu, then the owner's
}

func (sub *subscription) errorObject(err error) *Error {
	if errors.Is(err, ErrSubscriptionOverflow) {
		return &Error{Code: CodeSubscriptionOverflow, Message: "subscription closed: the client did not read its events fast enough"}
	}
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return sub.conn.srv.toError(&Request{Method: sub.owner.subscribe}, err)
}

// The client side.

// Subscription is the client's end of a subscription (see Subscribe).
type Subscription[E any] struct {
	conn        *Conn
	id          string
	unsubscribe string
	cs          *clientSub
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
	sub, unsub, notif := subscriptionMethods(opts.Namespace, opts.SubscribeMethod, opts.UnsubscribeMethod, opts.NotificationMethod)
	buffer := opts.Buffer
	if buffer <= 0 {
		buffer = DefaultClientSubscriptionBuffer
	}
	subs := c.clientSubs()
	subs.expect(notif, buffer)
	defer subs.expectDone(notif)
	if args == nil {
		args = []any{}
	}
	var id string
	if err := c.Call(ctx, sub, args, &id); err != nil {
		return nil, err
	}
	cs := subs.claim(notif, id, buffer, func() {
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
	raw, err := s.cs.next(ctx)
	if err != nil {
		return ev, err
	}
	if err := unmarshalLoose(raw, &ev); err != nil {
		return ev, errors.Join(errors.New("jsonrpc: cannot decode a subscription event"), err)
	}
	return ev, nil
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
func (s *Subscription[E]) Err() error {
	s.cs.mu.Lock()
	defer s.cs.mu.Unlock()
	return s.cs.err
}

// Dropped returns how many events the server reported dropped
// (OverflowDropOldest).
func (s *Subscription[E]) Dropped() int64 {
	s.cs.mu.Lock()
	defer s.cs.mu.Unlock()
	return s.cs.dropped
}

// Unsubscribe ends the subscription and tells the server. Events already
// queued are discarded.
func (s *Subscription[E]) Unsubscribe(ctx context.Context) error {
	s.conn.clientSubs().forget(s.cs)
	s.cs.finish(ErrClosed, true)
	var ok bool
	return s.conn.Call(ctx, s.unsubscribe, []string{s.id}, &ok)
}

// clientSubs returns the connection's subscription registry, creating it.
func (c *Conn) clientSubs() *clientSubs {
	if s := c.subs.Load(); s != nil {
		return s
	}
	s := &clientSubs{methods: make(map[string]*clientMethod)}
	if !c.subs.CompareAndSwap(nil, s) {
		return c.subs.Load()
	}
	context.AfterFunc(c.ctx, func() { s.closeAll(ErrClosed) })
	return s
}

// clientSubs routes the events of a connection's subscriptions. Events are
// taken on the read goroutine, so they keep their order; an event whose id
// is not known yet (its subscribe call's answer was read, but the caller has
// not claimed the id) is held while a subscribe call is in flight.
type clientSubs struct {
	mu      sync.Mutex
	methods map[string]*clientMethod
	closed  error
}

type clientMethod struct {
	subs    map[string]*clientSub
	calls   int                   // subscribe calls in flight
	early   map[string]*clientSub // events for ids not yet claimed
	pending int                   // the largest buffer of the calls in flight
}

func (r *clientSubs) expect(method string, buffer int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	if m == nil {
		m = &clientMethod{subs: make(map[string]*clientSub)}
		r.methods[method] = m
	}
	m.calls++
	m.pending = max(m.pending, buffer)
}

func (r *clientSubs) expectDone(method string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	m.calls--
	if m.calls == 0 {
		m.early, m.pending = nil, 0 // events for ids nobody claimed
	}
}

// claim takes the events that arrived for id before its caller could claim
// it, and routes the next ones to it.
func (r *clientSubs) claim(method, id string, buffer int, onOverflow func()) *clientSub {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[method]
	cs := m.early[id]
	delete(m.early, id)
	if cs == nil {
		cs = &clientSub{}
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.method, cs.id, cs.buffer, cs.onOverflow = method, id, buffer, onOverflow
	cs.wake = make(chan struct{}, 1)
	switch {
	case errors.Is(cs.err, ErrSubscriptionOverflow):
		onOverflow() // it overflowed before it was claimed
	case r.closed != nil:
		cs.endLocked(r.closed, false)
	case !cs.ended:
		m.subs[id] = cs
	}
	if len(cs.queue) > 0 || cs.ended {
		cs.signal()
	}
	return cs
}

func (r *clientSubs) forget(cs *clientSub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.methods[cs.method]; m != nil {
		delete(m.subs, cs.id)
	}
}

func (r *clientSubs) closeAll(err error) {
	r.mu.Lock()
	r.closed = err
	var all []*clientSub
	for _, m := range r.methods {
		for _, cs := range m.subs {
			all = append(all, cs)
		}
		m.subs = map[string]*clientSub{}
	}
	r.mu.Unlock()
	for _, cs := range all {
		cs.finish(err, false)
	}
}

// eventParams is the params object of a subscription notification.
type eventParams struct {
	Subscription string          `json:"subscription"`
	Result       json.RawMessage `json:"result"`
	Error        *Error          `json:"error"`
	Dropped      int64           `json:"dropped"`
}

// take routes a notification on the read goroutine; it reports whether it
// was an event of one of our subscriptions.
func (r *clientSubs) take(data []byte, e *wire.Envelope) bool {
	if e.Kind != wire.KindRequest {
		return false
	}
	method := e.MethodName(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.methods[string(method)]
	if m == nil {
		return false
	}
	var p eventParams
	if err := unmarshalLoose(paramsOf(data, e), &p); err != nil || p.Subscription == "" {
		return false
	}
	cs := m.subs[p.Subscription]
	if cs == nil {
		if m.calls == 0 {
			return true // a subscription we no longer have: dropped
		}
		// Its subscribe call's answer was read; the caller claims the id next.
		if m.early == nil {
			m.early = make(map[string]*clientSub)
		}
		cs = m.early[p.Subscription]
		if cs == nil {
			if len(m.early) >= 64 {
				return true
			}
			cs = &clientSub{buffer: m.pending}
			m.early[p.Subscription] = cs
		}
	}
	if cs.add(&p) {
		delete(m.subs, p.Subscription)
	}
	return true
}

// clientSub is the queue of one subscription's events on the client.
type clientSub struct {
	method, id string
	buffer     int
	onOverflow func()

	mu      sync.Mutex
	queue   []json.RawMessage
	wake    chan struct{}
	err     error
	ended   bool
	dropped int64
}

// add queues an event; it reports whether the subscription ended.
func (cs *clientSub) add(p *eventParams) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.ended {
		return true
	}
	cs.dropped += p.Dropped
	if p.Error != nil {
		cs.endLocked(p.Error, false)
		return true
	}
	if cs.buffer > 0 && len(cs.queue) >= cs.buffer {
		cs.endLocked(ErrSubscriptionOverflow, false)
		if cs.onOverflow != nil {
			cs.onOverflow()
		}
		return true
	}
	cs.queue = append(cs.queue, append(json.RawMessage(nil), p.Result...))
	cs.signal()
	return false
}

func (cs *clientSub) signal() {
	if cs.wake != nil {
		select {
		case cs.wake <- struct{}{}:
		default:
		}
	}
}

func (cs *clientSub) finish(err error, discard bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.endLocked(err, discard)
}

func (cs *clientSub) endLocked(err error, discard bool) {
	if cs.ended {
		return
	}
	cs.ended, cs.err = true, err
	if discard {
		cs.queue = nil
	}
	cs.signal()
}

func (cs *clientSub) next(ctx context.Context) (json.RawMessage, error) {
	for {
		cs.mu.Lock()
		if len(cs.queue) > 0 {
			raw := cs.queue[0]
			cs.queue[0] = nil
			cs.queue = cs.queue[1:]
			if len(cs.queue) > 0 {
				cs.signal()
			}
			cs.mu.Unlock()
			return raw, nil
		}
		if cs.ended {
			err := cs.err
			cs.mu.Unlock()
			return nil, err
		}
		cs.mu.Unlock()
		select {
		case <-cs.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// unmarshalLoose decodes JSON into v, ignoring unknown members: events and
// their envelopes come from the server, which may add members.
func unmarshalLoose(data []byte, v any) error {
	return wire.UnmarshalResult(data, v, false)
}
