package nats_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// BenchmarkCalls measures calls/s over NATS, to one and to two instances in
// a queue group, beside a direct TCP connection, in one run. Every call goes
// client → broker → instance → broker → client over loopback; TCP is
// client → server → client, so the difference of ns/op per call (Seq) is the
// broker's cost: a second round trip through nats-server and its routing.
//
//	go test -run '^$' -bench Calls -count 6 ./nats/ | benchstat -
func BenchmarkCalls(b *testing.B) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "add", func(ctx context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	ns := runNATS(b)
	setups := []struct {
		name  string
		start func(b *testing.B) jsonrpc.Client
	}{
		{"tcp", func(b *testing.B) jsonrpc.Client {
			srv := &jsonrpc.Server{Handler: mux}
			l, err := srv.Listen("tcp://127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { srv.Shutdown(context.Background()) })
			return dial(b, l.URL)
		}},
	}
	for _, n := range []int{1, 2} {
		setups = append(setups, struct {
			name  string
			start func(b *testing.B) jsonrpc.Client
		}{fmt.Sprintf("nats-%d", n), func(b *testing.B) jsonrpc.Client {
			url := natsURL(ns, fmt.Sprintf("bench.%d.%d", n, benchSeq.Add(1)))
			for range n {
				srv := &jsonrpc.Server{Handler: mux}
				if _, err := srv.Listen(url); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { srv.Shutdown(context.Background()) })
			}
			return dial(b, url)
		}})
	}
	ctx := context.Background()
	for _, mode := range []string{"seq", "par64"} {
		for _, s := range setups {
			b.Run(mode+"/"+s.name, func(b *testing.B) {
				c := s.start(b)
				var sum int
				if err := c.Call(ctx, "add", [2]int{1, 2}, &sum); err != nil || sum != 3 {
					b.Fatal(sum, err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				if mode == "seq" {
					for b.Loop() {
						if err := c.Call(ctx, "add", [2]int{1, 2}, &sum); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(64 / max(1, testingProcs()))
					b.RunParallel(func(pb *testing.PB) {
						var sum int
						for pb.Next() {
							if err := c.Call(ctx, "add", [2]int{1, 2}, &sum); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
			})
		}
	}
}

var benchSeq atomic.Int64

func testingProcs() int { return runtime.GOMAXPROCS(0) }
