package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// The subscription rows: faults on the third event of a ticker (an event
// every 20 ms) consumed through Resubscribe on a WithReconnect client.
var subFaults = []string{
	"method=demo_subscription,dir=out,nth=3,delay=150ms",
	"method=demo_subscription,dir=out,nth=3,drop",
	"method=demo_subscription,dir=out,nth=3,dup",
	"method=demo_subscription,dir=out,nth=3,corrupt",
	"method=demo_subscription,dir=out,nth=3,cut",
	"method=demo_subscription,dir=out,nth=3,cut-after-bytes=30",
	"method=demo_subscription,dir=out,nth=3,half-open",
}

var subTransports = []string{"tcp", "ws"}

// subServer serves the demo subscriptions on scheme.
func subServer(t testing.TB, scheme string) string {
	t.Helper()
	mux := jsonrpc.NewMux()
	demo.Shared{}.RegisterSubscriptions(mux)
	srv := &jsonrpc.Server{Handler: mux}
	ln, err := srv.Listen(scheme + "://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ln.Err()
	})
	return ln.URL
}

// subMatrix runs the subscription rows; it returns the table's rows and
// the cells that lost an event without a SubscriptionGap.
func subMatrix(t *testing.T) (rows [][]string, findings []string) {
	targets := map[string]string{}
	for _, s := range subTransports {
		targets[s] = subServer(t, s)
	}
	for _, spec := range subFaults {
		row := []string{"`" + spec + "`"}
		for _, tr := range subTransports {
			o, lost := subCell(t, spec, targets[tr])
			row = append(row, o)
			if lost && !strings.Contains(spec, "drop") && !strings.Contains(spec, "corrupt") {
				// A message lost by a connection's failure must be reported
				// by a gap; a message the proxy drops from a live connection
				// cannot be (the notifications carry no sequence number).
				t.Errorf("%s on %s: an event lost without a SubscriptionGap", spec, tr)
				findings = append(findings, "- `"+spec+"` on "+tr+" Resubscribe: an event lost without a SubscriptionGap")
			}
		}
		rows = append(rows, row)
	}
	return rows, findings
}

// subCell consumes twelve events (or until 2 s pass) and describes what
// the consumer saw: the values in order, gaps reported, values missing or
// repeated. A resubscription's ticker starts again at 1.
func subCell(t *testing.T, spec, target string) (string, bool) {
	t.Helper()
	p, err := chaos.Start("", target, chaos.Options{Faults: []*chaos.Fault{chaos.MustParse(spec)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, p.URL, jsonrpc.WithReconnect(), jsonrpc.WithBackoff(10*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sub, err := jsonrpc.Resubscribe[int64](ctx, c.(*jsonrpc.ReconnectClient), jsonrpc.SubscribeOptions{Namespace: "demo"}, "ticker", demo.TickerParams{IntervalMS: 20})
	if err != nil {
		t.Fatalf("%s: subscribe: %v", spec, err)
	}
	var seen []string
	want, got, lost := int64(1), 0, false
	for got < 12 {
		v, err := sub.Next(ctx)
		var gap *jsonrpc.SubscriptionGap
		switch {
		case errors.As(err, &gap):
			seen = append(seen, "gap")
			want = 1
			continue
		case errors.Is(err, context.DeadlineExceeded):
			seen = append(seen, "stalled to the deadline")
		case err != nil:
			seen = append(seen, "ended: "+classify(err))
		}
		if err != nil {
			break
		}
		got++
		switch {
		case v == want:
			seen = append(seen, "ok")
		case v > want:
			seen = append(seen, fmt.Sprintf("%d missing", v-want))
			lost = true
		default:
			seen = append(seen, fmt.Sprintf("%d repeated", v))
		}
		want = v + 1
	}
	return describe(seen), lost
}

// describe folds runs of "ok": "ok ×2, 1 missing, ok ×9".
func describe(seen []string) string {
	var out []string
	for i := 0; i < len(seen); {
		j := i
		for j < len(seen) && seen[j] == seen[i] {
			j++
		}
		if s := seen[i]; s == "ok" {
			out = append(out, fmt.Sprintf("%d in order", j-i))
		} else {
			out = append(out, s)
		}
		i = j
	}
	return strings.Join(out, ", ")
}
