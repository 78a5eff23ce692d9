package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

func init() {
	var data string
	var count int
	var idle time.Duration
	var reconnect bool
	cmd := &cobra.Command{
		Use:   "subscribe URL [METHOD] [KIND] [PARAMS...]",
		Short: "Subscribe to a server's events and print each as one JSON line",
		Long: `Subscribe in go-ethereum's convention (METHOD is <ns>_subscribe, eth_subscribe by
default; events come as <ns>_subscription notifications) and print each event's
result as one JSON line (pretty on a terminal). Ctrl-C (or --count events)
unsubscribes and exits 0. If the server ends the subscription with an error,
it is printed as one JSON object on stderr and jrpc exits with 1; if the
connection ends, it says the subscription ended and exits with 3. A producer
that stops quietly sends nothing more: after 10s without an event jrpc says
so on stderr, and --idle-timeout D exits with 3 after D without one.

With --reconnect, a dropped connection (a server restart) is dialled again
(--exec: the command is run again) with doubling waits up to 5s, the
subscription is made again, and jrpc goes on printing, with a notice on
stderr that events may have been missed meanwhile.

The params are the subscribe call's whole params array ('["ticker",{…}]'), or
the kind as a word followed by key=value pairs for its argument object.
Subscriptions need a connection: ws://, tcp://, unix:// or --exec.`,
		Example: `  jrpc subscribe ws://127.0.0.1:8081/ demo_subscribe ticker interval_ms=500 count=5
  jrpc subscribe tcp://127.0.0.1:9090 demo_subscribe '["ticker",{"interval_ms":100}]'
  jrpc subscribe ws://127.0.0.1:8546/ eth_subscribe newHeads`,
		Args: targetArgs("[METHOD] [KIND] [PARAMS...]", 0, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubscribe(cmd.Context(), args, data, count, idle, reconnect)
		},
	}
	cmd.Flags().BoolVar(&reconnect, "reconnect", false, "dial again when the connection drops and subscribe again (a notice on stderr)")
	cmd.Flags().DurationVar(&idle, "idle-timeout", 0, "exit with 3 when no event has come for this long (0: wait for ever)")
	cmd.Flags().StringVarP(&data, "data", "d", "", "the params array from `@FILE`, @- (standard input) or literal JSON")
	cmd.Flags().IntVarP(&count, "count", "n", 0, "unsubscribe and exit after this many events (0: until Ctrl-C)")
	rootCmd.AddCommand(cmd)
}

func runSubscribe(ctx context.Context, args []string, data string, count int, idle time.Duration, reconnect bool) error {
	t, rest, err := newTarget(args)
	if err != nil {
		return err
	}
	if t.isHTTP() {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s is plain HTTP, which cannot carry server push", t),
			hint: "a ws://, tcp:// or unix:// URL, or --exec"}
	}
	method := "eth_subscribe"
	if len(rest) > 0 && strings.HasSuffix(rest[0], "_subscribe") {
		method, rest = rest[0], rest[1:]
	}
	ns := strings.TrimSuffix(method, "_subscribe")
	subArgs, err := subscribeArgs(rest, data)
	if err != nil {
		return err
	}
	dctx, cancel := callContext(ctx)
	defer cancel()
	if reconnect {
		return subscribeReconnecting(ctx, t, ns, subArgs, count, idle)
	}
	c, err := t.dial(dctx)
	if err != nil {
		return err
	}
	defer c.Close()
	conn := c.conn()
	if conn == nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s cannot carry server push", t)}
	}
	sub, err := jsonrpc.SubscribeWith[json.RawMessage](dctx, conn, jsonrpc.SubscribeOptions{Namespace: ns}, subArgs...)
	if err != nil {
		return callErr(t, t.commandExit(c, err))
	}
	out := outputFor(os.Stdout)
	for n := 0; count == 0 || n < count; n++ {
		ev, err := nextEvent(ctx, sub, idle)
		if err != nil {
			if ctx.Err() != nil {
				return unsubscribe(sub) // Ctrl-C
			}
			return subscriptionEnded(t, n, idle, t.commandExit(c, err))
		}
		out.print(os.Stdout, ev)
	}
	return unsubscribe(sub)
}

// subscribeReconnecting is runSubscribe with --reconnect: the connection
// is dialled again when it drops, and the subscription made again.
func subscribeReconnecting(ctx context.Context, t *target, ns string, subArgs []any, count int, idle time.Duration) error {
	dctx, cancel := callContext(ctx)
	defer cancel()
	rc, err := jsonrpc.NewReconnectClient(dctx, func(ctx context.Context) (*jsonrpc.Conn, error) {
		c, err := t.dial(ctx)
		if err != nil {
			return nil, err
		}
		conn := c.conn()
		if conn == nil {
			c.Close()
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s cannot carry server push", t)}
		}
		return conn, nil
	}, jsonrpc.WithBackoff(100*time.Millisecond, 5*time.Second), jsonrpc.WithOnReconnect(func(err error) {
		if err != nil {
			fmt.Fprintf(os.Stderr, "jrpc: the connection to %s dropped (%v); reconnecting\n", t, err)
		} else {
			fmt.Fprintf(os.Stderr, "jrpc: reconnected to %s\n", t)
		}
	}))
	if err != nil {
		return err
	}
	defer rc.Close()
	sub, err := jsonrpc.Resubscribe[json.RawMessage](dctx, rc, jsonrpc.SubscribeOptions{Namespace: ns}, subArgs...)
	if err != nil {
		return callErr(t, err)
	}
	out := outputFor(os.Stdout)
	for n := 0; count == 0 || n < count; {
		ev, err := nextEvent(ctx, sub, idle)
		var gap *jsonrpc.SubscriptionGap
		switch {
		case errors.As(err, &gap):
			fmt.Fprintf(os.Stderr, "jrpc: subscribed again (id %s); events sent while disconnected are missed\n", gap.NewID)
			continue
		case err != nil && ctx.Err() != nil:
			return unsubscribe(sub) // Ctrl-C
		case err != nil:
			return subscriptionEnded(t, n, idle, err)
		}
		out.print(os.Stdout, ev)
		n++
	}
	return unsubscribe(sub)
}

// eventSource is a subscription, made once or again after reconnects.
type eventSource interface {
	Next(ctx context.Context) (json.RawMessage, error)
	Unsubscribe(ctx context.Context) error
}

// quietHint is how long subscribe waits for an event before saying that
// none is coming.
const quietHint = 10 * time.Second

// nextEvent waits for the next event, for at most idle (0: no limit),
// saying so on stderr when none has come for quietHint.
func nextEvent(ctx context.Context, sub eventSource, idle time.Duration) (json.RawMessage, error) {
	if idle > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, idle)
		defer cancel()
	}
	if idle == 0 || idle > quietHint {
		hint := time.AfterFunc(quietHint, func() {
			fmt.Fprintf(os.Stderr, "jrpc: no event for %v: the producer may have ended without saying so (--idle-timeout D exits after D without events)\n", quietHint)
		})
		defer hint.Stop()
	}
	return sub.Next(ctx)
}

// subscriptionEnded reports the end of a subscription after n events: no
// event within idle, an error from the server (exit 1), or the connection
// gone (exit 3).
func subscriptionEnded(t *target, n int, idle time.Duration, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return transportError(fmt.Errorf("no event from %s for %v (after %d events): the producer may have ended without saying so", t, idle, n), "a larger --idle-timeout, or check that the server still sends")
	case refusal(err) != nil:
		return t.transportErr(err)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return transportError(fmt.Errorf("the subscription ended after %d events: the connection to %s closed (%v)", n, t, err), "the server went away or dropped the connection: look at its log")
}

func unsubscribe(sub eventSource) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sub.Unsubscribe(ctx) // a subscription the server already ended is fine
	return nil
}

// subscribeArgs builds the subscribe call's params array: a JSON array as
// given, or a kind followed by key=value pairs (its argument object).
func subscribeArgs(rest []string, data string) ([]any, error) {
	var kind string
	if data == "" && len(rest) > 0 && !strings.ContainsAny(rest[0][:1], "[{\"") && !strings.Contains(rest[0], "=") {
		kind, rest = rest[0], rest[1:]
	}
	params, err := buildParams(rest, data, os.Stdin)
	if err != nil {
		return nil, err
	}
	var args []any
	if kind != "" {
		args = append(args, kind)
		if params != nil {
			args = append(args, params)
		}
		return args, nil
	}
	if params == nil {
		return nil, usageErrorf("give the kind of events to subscribe to, e.g. newHeads or '[\"ticker\",{\"interval_ms\":100}]'")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(params, &elems); err != nil {
		return nil, usageErrorf("the subscribe params must be an array (the kind, then its arguments), not %s", params)
	}
	for _, e := range elems {
		args = append(args, e)
	}
	return args, nil
}
