package bench

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
)

// Subscriptions (issue 16): events per second over one TCP connection, to
// one subscriber and to 1,000 subscribers, ours beside go-ethereum's
// notifier in the same run. Each event is Params {"a":i,"b":"hello"}; the
// producers send as fast as the client takes them (ours: OverflowBlock,
// nothing dropped; geth: its notifier queues without bound). One op is one
// event delivered to the client.

type subscribeImpl struct {
	name  string
	serve func(l net.Listener) (stop func())
	// subscribe opens subs subscriptions of n events each on one
	// connection and returns once every event has been received.
	run func(b *testing.B, addr string, subs, n int)
}

func BenchmarkSubscribe(b *testing.B) {
	for _, subs := range []int{1, 1000} {
		for _, im := range []subscribeImpl{oursSubscribe(), gethSubscribe()} {
			b.Run(im.name+"/subs="+itoa(subs), func(b *testing.B) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				stop := im.serve(l)
				defer stop()
				per := max(1, b.N/subs)
				b.ResetTimer()
				start := time.Now()
				im.run(b, l.Addr().String(), subs, per)
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(subs*per)/elapsed.Seconds(), "events/s")
			})
		}
	}
}

func itoa(n int) string {
	if n == 1 {
		return "1"
	}
	return "1000"
}

type eventsParams struct {
	N int `json:"n"`
}

func oursSubscribe() subscribeImpl {
	return subscribeImpl{
		name: "ours",
		serve: func(l net.Listener) func() {
			mux := jsonrpc.NewMux()
			subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "bench"})
			jsonrpc.AddSubscription(subs, "events", func(ctx context.Context, p eventsParams, sink *jsonrpc.Sink[Params]) error {
				for i := range p.N {
					if err := sink.Send(Params{A: i, B: "hello"}); err != nil {
						return nil
					}
				}
				<-ctx.Done()
				return nil
			})
			srv := &jsonrpc.Server{Handler: mux}
			done := make(chan struct{})
			go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
			return func() { shutdown(srv); l.Close(); <-done }
		},
		run: func(b *testing.B, addr string, subs, n int) {
			ctx := context.Background()
			c, err := jsonrpc.Dial(ctx, "tcp://"+addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			conn := c.(*jsonrpc.Conn)
			var wg sync.WaitGroup
			for range subs {
				// The client's queue holds a whole run, as go-ethereum's does (20,000).
				sub, err := jsonrpc.SubscribeWith[Params](ctx, conn, jsonrpc.SubscribeOptions{Namespace: "bench", Buffer: max(n, 20000)}, "events", eventsParams{N: n})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range n {
						ev, err := sub.Next(ctx)
						if err != nil || ev.A != i {
							b.Errorf("event %d: %+v %v", i, ev, err)
							return
						}
					}
				}()
			}
			wg.Wait()
		},
	}
}

type gethSubService struct{}

// Events sends n events on a new subscription.
func (gethSubService) Events(ctx context.Context, p eventsParams) (*rpc.Subscription, error) {
	notifier, ok := rpc.NotifierFromContext(ctx)
	if !ok {
		return nil, rpc.ErrNotificationsUnsupported
	}
	sub := notifier.CreateSubscription()
	go func() {
		for i := range p.N {
			if err := notifier.Notify(sub.ID, Params{A: i, B: "hello"}); err != nil {
				return
			}
		}
	}()
	return sub, nil
}

func gethSubscribe() subscribeImpl {
	return subscribeImpl{
		name: "geth",
		serve: func(l net.Listener) func() {
			srv := rpc.NewServer()
			if err := srv.RegisterName("bench", gethSubService{}); err != nil {
				panic(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); srv.ServeListener(l) }()
			return func() { l.Close(); <-done; srv.Stop() }
		},
		run: func(b *testing.B, addr string, subs, n int) {
			ctx := context.Background()
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			c, err := rpc.DialIO(ctx, nc, nc)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { nc.Close(); c.Close() }() // DialIO does not own nc: Close waits for its reader
			var wg sync.WaitGroup
			for range subs {
				ch := make(chan Params, 64)
				sub, err := c.Subscribe(ctx, "bench", ch, "events", eventsParams{N: n})
				if err != nil {
					b.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer sub.Unsubscribe()
					for i := range n {
						select {
						case ev := <-ch:
							if ev.A != i {
								b.Errorf("event %d: %+v", i, ev)
								return
							}
						case err := <-sub.Err():
							b.Errorf("subscription ended: %v", err)
							return
						}
					}
				}()
			}
			wg.Wait()
		},
	}
}
