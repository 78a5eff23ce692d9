package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// subscription is one kind of subscription described by the
// "x-subscription" extension of a subscribe method (see openrpc.Subscription).
type subscription struct {
	goName       string // Subscribe<Kind>
	kind         string
	subscribe    string
	unsubscribe  string
	notification string
	params       *typ // nil: no argument after the kind
	event        *typ
}

// subscriptions reads the "x-subscription" of subscribe method mn.
func (b *builder) subscriptions(mn *node, subscribe string, methodNames *namer) []*subscription {
	x := mn.get("x-subscription")
	if x == nil {
		return nil
	}
	var out []*subscription
	for _, k := range x.list("kinds") {
		kind := k.str("name")
		goName := "Subscribe" + typeName(kind)
		if n := methodNames.unique(goName); n != goName {
			b.warn(fmt.Sprintf("subscription %s %q: Go name %s is taken; using %s", subscribe, kind, goName, n))
			goName = n
		}
		s := &subscription{goName: goName, kind: kind, subscribe: subscribe, unsubscribe: x.str("unsubscribe"), notification: x.str("notification"),
			event: b.typeOf(k.get("event"), typeName(kind)+"Event")}
		if p := k.get("params"); p != nil {
			s.params = b.typeOf(p, typeName(kind)+"Params")
		}
		out = append(out, s)
	}
	return out
}

// subscriptions writes the Subscribe<Kind> helpers of the client.
func (w *goWriter) subscriptions() {
	for _, s := range w.m.subs {
		w.uses["errors"] = true
		args, sent := "", ""
		if s.params != nil {
			args, sent = ", params "+w.typeExpr(s.params), ", params"
		}
		event := w.typeExpr(s.event)
		w.p("\n// %s subscribes to the %q events of %s: each arrives as a\n// %s notification. It needs a client with a connection (a stream or\n// WebSocket jsonrpc.Conn).\n", s.goName, s.kind, s.subscribe, s.notification)
		w.p("//\n// A range over the subscription's Events ends when the subscription does:\n" +
			"// on Unsubscribe, when the connection ends, or when the server ends it with\n" +
			"// an error (Err then says which). A server that simply stops sending (after\n" +
			"// the events asked for, say) sends no message that says so, as in\n" +
			"// go-ethereum's protocol: stop after the events you expect, or take them\n" +
			"// with Next(ctx) under a deadline; ctx bounds the subscribe call only.\n")
		w.p("func (c *Client) %s(ctx context.Context%s) (*jsonrpc.Subscription[%s], error) {\n", s.goName, args, event)
		w.p("\tconn, ok := c.c.(*jsonrpc.Conn)\n\tif !ok {\n\t\treturn nil, errors.New(%s)\n\t}\n",
			strconv.Quote(strings.TrimSuffix(s.subscribe, "_subscribe")+": subscriptions need a connection (a stream or WebSocket client)"))
		w.p("\topts := jsonrpc.SubscribeOptions{SubscribeMethod: %s, UnsubscribeMethod: %s, NotificationMethod: %s}\n",
			strconv.Quote(s.subscribe), strconv.Quote(s.unsubscribe), strconv.Quote(s.notification))
		w.p("\treturn jsonrpc.SubscribeWith[%s](ctx, conn, opts, %s%s)\n}\n", event, strconv.Quote(s.kind), sent)
	}
}
