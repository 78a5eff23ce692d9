package bench

import (
	"context"
	"flag"
	"net"
	"sync/atomic"
	"testing"

	"github.com/seedhq/jsonrpc"
)

var loadConns = flag.Int("bench.loadconns", 10000, "idle connections BenchmarkLoadIdle holds while it measures a call load")

// BenchmarkLoadIdle (issue 6): our TCP server holds bench.loadconns idle
// connections (opened by a child process, one call each) while 64 callers on
// 4 more connections run a steady load. It reports the server's memory per
// idle connection and the calls per second served beside them; b.N is the
// number of calls.
func BenchmarkLoadIdle(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := oursServer()
	srv.MaxConns = *loadConns + 64
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	defer func() { shutdown(srv); <-done }()

	before := snapshot()
	defer startIdleClients(b, "tcp", l.Addr().String(), objectRequest, *loadConns)()
	after := snapshot()

	ctx := context.Background()
	var clients []jsonrpc.Client
	for range 4 {
		c, err := jsonrpc.Dial(ctx, "tcp://"+l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	var next atomic.Int64
	b.SetParallelism(32) // 64 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := clients[next.Add(1)%int64(len(clients))]
		in, out := Params{A: 1, B: "hello"}, Params{}
		for pb.Next() {
			if err := c.Call(ctx, "echo", &in, &out); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric((float64(after.bytes)-float64(before.bytes))/float64(*loadConns), "B/idleconn")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(*loadConns), "goroutines/idleconn")
}
