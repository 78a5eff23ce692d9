package jsonrpc_test

import (
	"bufio"
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
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
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

// BenchmarkBatchTCP: one connection, a batch of 8 calls at a time;
// allocations are counted for client and server together.
func BenchmarkBatchTCP(b *testing.B) {
	c := tcpPair(b, echoServer())
	ctx := context.Background()
	p := echoParams{A: 1, B: "hello"}
	var out [8]echoParams
	b.ReportAllocs()
	for b.Loop() {
		var batch jsonrpc.Batch
		for i := range out {
			batch.Call("echo", p, &out[i])
		}
		if err := c.Batch(ctx, &batch); err != nil {
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

// BenchmarkServerTCPRawClient: our server against a plain client that
// writes a request line and reads the reply line (no JSON work on the
// client), to be set against BenchmarkRawTCPEcho.
func BenchmarkServerTCPRawClient(b *testing.B) {
	srv := echoServer()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	defer srv.Shutdown(context.Background())
	lineRoundTrips(b, l.Addr().String())
}

// BenchmarkRawTCPEcho is the limit: the same exchange with a server that
// echoes lines, no JSON at all.
func BenchmarkRawTCPEcho(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			c.Write(line)
		}
	}()
	lineRoundTrips(b, l.Addr().String())
}

// lineRoundTrips writes the echo request as a line and reads the reply
// line, b.N times, on one connection to addr.
func lineRoundTrips(b *testing.B, addr string) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"b":"hello"}}` + "\n")
	for b.Loop() {
		nc.Write(req)
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
