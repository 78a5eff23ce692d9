package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/state"
)

// listenDemo serves mux on a loopback TCP listener until the test ends and
// returns a connection to it.
func listenDemo(t *testing.T, mux *jsonrpc.Mux) *jsonrpc.Conn {
	t.Helper()
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	c, err := jsonrpc.Dial(t.Context(), l.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*jsonrpc.Conn)
}

// TestDemoBroadcastAcrossInstances: two demo instances share a broker;
// demo_broadcast on either, right after the subscribe calls were answered,
// reaches the broadcast subscribers of both, each value once, in publish
// order.
func TestDemoBroadcastAcrossInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	sh := demo.Shared{Broker: state.NewMemoryBroker(64)}
	a, b := listenDemo(t, sh.NewMux()), listenDemo(t, sh.NewMux())
	subs := make([]*jsonrpc.Subscription[json.RawMessage], 2)
	for i, c := range []*jsonrpc.Conn{a, b} {
		s, err := jsonrpc.Subscribe[json.RawMessage](ctx, c, "demo", "broadcast")
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	for i := 1; i <= 20; i++ {
		via := a
		if i%2 == 0 {
			via = b
		}
		var ok bool
		if err := via.Call(ctx, "demo_broadcast", map[string]any{"value": map[string]int{"n": i}}, &ok); err != nil || !ok {
			t.Fatalf("demo_broadcast %d: %v %v", i, ok, err)
		}
	}
	for i, s := range subs {
		n := 0
		for n < 20 {
			ev, err := s.Next(ctx)
			if err != nil {
				t.Fatalf("subscriber %d after %d: %v", i, n, err)
			}
			n++
			if want := fmt.Sprintf(`{"n":%d}`, n); string(ev) != want {
				t.Fatalf("subscriber %d: event %s, want %s", i, ev, want)
			}
		}
	}
	var e *jsonrpc.Error
	if err := a.Call(ctx, "demo_broadcast", map[string]any{}, nil); !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("demo_broadcast without a value: %v", err)
	}
}
