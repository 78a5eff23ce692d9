package nats_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// BenchmarkTopicFanout measures a topic's fan-out across instances: the
// time from Subscriptions.Publish on one instance until every one of subs
// subscribers, each a TCP connection to another instance, has read the
// event's notification (p50 and p99 over the run), through the JetStream
// broker (each instance with its own connection to one embedded
// nats-server) and the memory broker (two instances in one process),
// beside one instance with no broker. One event at a time. The
// subscribers read their socket themselves, so that only the server's
// side is timed (a *jsonrpc.Conn client's own reading is the same with any
// broker).
func BenchmarkTopicFanout(b *testing.B) {
	for _, subs := range []int{1, 16} {
		b.Run(fmt.Sprintf("none/subs=%d", subs), func(b *testing.B) {
			n := newNode(b, nil)
			benchTopicFanout(b, n, n, subs)
		})
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
	readers := make([]*bufio.Reader, n)
	for i := range readers {
		nc, err := net.Dial("tcp", sub.addr)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		readers[i] = bufio.NewReader(nc)
		if _, err := nc.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"test_subscribe","params":["news"]}` + "\n")); err != nil {
			b.Fatal(err)
		}
		if line, err := readers[i].ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result":"0x`)) {
			b.Fatalf("subscribe: %s, %v", line, err)
		}
	}
	ctx := b.Context()
	var lat []time.Duration
	var want []byte
	i := 0
	for b.Loop() {
		want = append(strconv.AppendInt(append(want[:0], `"result":`...), int64(i), 10), "}}\n"...)
		start := time.Now()
		if err := pub.subs.Publish(ctx, "news", i); err != nil {
			b.Fatal(err)
		}
		for _, r := range readers {
			if line, err := r.ReadSlice('\n'); err != nil || !bytes.HasSuffix(line, want) {
				b.Fatalf("event %d: %s, %v", i, line, err)
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
	// The client may queue every event: a run measures the path, not the
	// bound that ends a subscription whose consumer falls 20,000 behind.
	s, err := jsonrpc.SubscribeWith[int](ctx, c.(*jsonrpc.Conn), jsonrpc.SubscribeOptions{Namespace: "bench", Buffer: b.N + 1}, "count", params{N: b.N})
	if err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		if ev, err := s.Next(ctx); err != nil || ev != i {
			b.Fatalf("event %d: %d, %v", i, ev, err)
		}
	}
}

// BenchmarkClientEventLatency measures one event of a topic with no broker
// until a *jsonrpc.Conn subscriber has taken it (Next), one at a time:
// what a client adds to BenchmarkTopicFanout's raw readers. p50 was
// 1,143 us while a subscriber's reading parked after each event, 17 us since.
func BenchmarkClientEventLatency(b *testing.B) {
	n := newNode(b, nil)
	s := n.mustSubscribe(b)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := n.subs.Publish(b.Context(), "news", i); err != nil {
			b.Fatal(err)
		}
		if ev, err := s.Next(b.Context()); err != nil || ev != i {
			b.Fatalf("event %d: %d, %v", i, ev, err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-us")
}
