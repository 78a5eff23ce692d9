package nats_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// BenchmarkTopicFanout measures a topic's fan-out across instances: the
// time from Subscriptions.Publish on one instance until every one of subs
// subscribers, each a TCP client of another instance, has taken the
// event (p50 and p99 over the run), through the JetStream broker (each
// instance with its own connection to one embedded nats-server) and the
// memory broker (two instances in one process). One event at a time.
func BenchmarkTopicFanout(b *testing.B) {
	for _, subs := range []int{1, 16} {
		b.Run(fmt.Sprintf("memory/subs=%d", subs), func(b *testing.B) {
			m := state.NewMemoryBroker(10000)
			benchTopicFanout(b, newNode(b, m), newNode(b, m), subs)
		})
		b.Run(fmt.Sprintf("jetstream/subs=%d", subs), func(b *testing.B) {
			ns := runJetStream(b)
			benchTopicFanout(b, newNode(b, newBroker(b, jsConn(b, ns), "BENCH")), newNode(b, newBroker(b, jsConn(b, ns), "BENCH")), subs)
		})
	}
}

func benchTopicFanout(b *testing.B, pub, sub *node, n int) {
	subs := make([]*jsonrpc.Subscription[int], n)
	for i := range subs {
		subs[i] = sub.mustSubscribe(b)
	}
	ctx := b.Context()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := pub.subs.Publish(ctx, "news", i); err != nil {
			b.Fatal(err)
		}
		for _, s := range subs {
			if ev, err := s.Next(ctx); err != nil || ev != i {
				b.Fatalf("event %d: %d, %v", i, ev, err)
			}
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-us")
}

// BenchmarkProducerSubscription is the A/B of the subscriptions that came
// before brokers (AddSubscription, no Broker): a producer's events to one
// TCP client, one event per op. Run on the commits before and after topics
// (benchstat), it shows what a user of neither Broker nor topic pays.
func BenchmarkProducerSubscription(b *testing.B) {
	type params struct {
		N int `json:"n"`
	}
	mux := jsonrpc.NewMux()
	subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "bench"})
	jsonrpc.AddSubscription(subs, "count", func(ctx context.Context, p params, sink *jsonrpc.Sink[int]) error {
		for i := range p.N {
			if err := sink.Send(i); err != nil {
				return nil
			}
		}
		<-ctx.Done()
		return nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	defer func() { srv.Shutdown(context.Background()); <-done }()
	ctx := b.Context()
	c, err := jsonrpc.Dial(ctx, "tcp://"+l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	s, err := jsonrpc.Subscribe[int](ctx, c.(*jsonrpc.Conn), "bench", "count", params{N: b.N})
	if err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		if ev, err := s.Next(ctx); err != nil || ev != i {
			b.Fatalf("event %d: %d, %v", i, ev, err)
		}
	}
}
