package jsonrpc_test

import (
	"context"
	"net"
	"testing"

	"github.com/seedhq/jsonrpc"
)

type echoParams struct {
	A int    `json:"a"`
	B string `json:"b"`
}

func echoServer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(_ context.Context, p echoParams) (echoParams, error) { return p, nil })
	return &jsonrpc.Server{Handler: mux}
}

// tcpPair returns a client Conn connected over loopback TCP to srv.
func tcpPair(b *testing.B, srv *jsonrpc.Server) jsonrpc.Client {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l, jsonrpc.FramingLine)
	b.Cleanup(func() { srv.Shutdown(context.Background()) })
	c, err := jsonrpc.Dial(context.Background(), "tcp://"+l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// BenchmarkCallTCP: one connection, one call at a time; allocations are
// counted for client and server together.
func BenchmarkCallTCP(b *testing.B) {
	c := tcpPair(b, echoServer())
	ctx := context.Background()
	p := echoParams{A: 1, B: "hello"}
	var out echoParams
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Call(ctx, "echo", p, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallTCPParallel: 64 callers on one connection.
func BenchmarkCallTCPParallel(b *testing.B) {
	c := tcpPair(b, echoServer())
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		p := echoParams{A: 1, B: "hello"}
		var out echoParams
		for pb.Next() {
			if err := c.Call(ctx, "echo", p, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
