//go:build unix

package bench

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// BenchmarkCompression measures what compression costs and saves, ours on
// both ends: bytes on the wire per call (wire-B/op, both directions, as the
// server's sockets see them) and CPU per call (cpu-µs/op, the process's
// user+system time, client and server together) for
//
//	1MiB     echo of a 1 MiB string of printable ASCII (params and result)
//	100KiB   a 100 KiB JSON result (log-like records) for small params
//
// over HTTP (plain, or gzip: WithCompression and the server's default) and
// WebSocket (plain, or permessage-deflate on both sides).
func BenchmarkCompression(b *testing.B) {
	big := BigParams(bigSize)
	var logs []map[string]any
	json.Unmarshal([]byte(toolText(100<<10)), &logs)
	for _, sc := range []struct {
		name   string
		params any
		result func() any
	}{
		{"1MiB", big, nil},
		{"100KiB", []int{1}, func() any { return logs }},
	} {
		for _, tr := range []string{"http", "http-gzip", "ws", "ws-deflate"} {
			b.Run(sc.name+"/"+tr, func(b *testing.B) {
				runCompression(b, tr, sc.params, sc.result)
			})
		}
	}
}

func runCompression(b *testing.B, tr string, params any, result func() any) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p Params) (Params, error) { return p, nil })
	if result != nil {
		res := result()
		jsonrpc.Register(mux, "logs", func(ctx context.Context, _ []int) (any, error) { return res, nil })
	}
	method := "echo"
	if result != nil {
		method = "logs"
	}
	srv := &jsonrpc.Server{Handler: mux}
	var opts []jsonrpc.DialOption
	var wsOpts jsonrpc.WebSocketOptions
	switch tr {
	case "http":
		srv.HTTPCompressMinSize = -1
	case "http-gzip", "ws-deflate":
		opts = append(opts, jsonrpc.WithCompression())
		wsOpts.Compression = true
	}
	h := srv.WebSocketHandler(wsOpts)
	scheme := "ws"
	if strings.HasPrefix(tr, "http") {
		h, scheme = srv, "http"
	}
	var wire atomic.Int64
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = wireListener{ts.Listener, &wire}
	ts.Start()
	defer func() { ts.CloseClientConnections(); ts.Close(); shutdown(srv) }()
	hc := HTTPClient()
	defer hc.CloseIdleConnections()
	c, err := jsonrpc.Dial(context.Background(), scheme+strings.TrimPrefix(ts.URL, "http")+"/", append(opts, jsonrpc.WithHTTPClient(hc))...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	var out json.RawMessage
	if err := c.Call(ctx, method, params, &out); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	wire.Store(0)
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		if err := c.Call(ctx, method, params, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(wire.Load())/float64(b.N), "wire-B/op")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wireListener counts the bytes its connections read and write.
type wireListener struct {
	net.Listener
	n *atomic.Int64
}

func (l wireListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wireConn{nc, l.n}, nil
}

type wireConn struct {
	net.Conn
	n *atomic.Int64
}

func (c wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c wireConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}
