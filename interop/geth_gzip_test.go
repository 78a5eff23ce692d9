package interop

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
)

// bigResult is a 100 KiB JSON-able result: log-like records.
func bigResult() []map[string]string {
	var out []map[string]string
	for i := range 600 {
		out = append(out, map[string]string{
			"address": "0x" + strings.Repeat("ab", 20),
			"topic":   "0x" + strings.Repeat("0123456789abcdef", 4),
			"data":    "0x" + strings.Repeat("00", 32) + strings.Repeat("f", i%7),
		})
	}
	return out
}

// countWriter counts the bytes of the response bodies written.
type countWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return w.ResponseWriter.Write(p)
}

func (w countWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// A go-ethereum client (whose net/http transport asks for gzip) gets our
// server's large replies compressed.
func TestGethClientGzipReply(t *testing.T) {
	ctx := testContext(t)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "test_logs", func(ctx context.Context, _ []any) ([]map[string]string, error) {
		return bigResult(), nil
	})
	var written atomic.Int64
	count := jsonrpc.ListenHTTPMiddleware(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(countWriter{w, &written}, r) })
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: testLogger(t)}
	l, err := srv.Listen("http://127.0.0.1:0/", count)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	c, err := rpc.DialContext(ctx, l.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []map[string]string
	if err := c.CallContext(ctx, &got, "test_logs"); err != nil || len(got) != 600 || got[599]["data"] != bigResult()[599]["data"] {
		t.Fatalf("%d results, %v", len(got), err)
	}
	if n := written.Load(); n > 20<<10 {
		t.Fatalf("the reply took %d bytes on the wire: not compressed", n)
	}
}

type logsService struct{}

func (logsService) Logs() []map[string]string { return bigResult() }

// encodingRecorder records the Content-Encoding of the responses.
type encodingRecorder struct{ last atomic.Value }

func (r *encodingRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		r.last.Store(resp.Header.Get("Content-Encoding"))
	}
	return resp, err
}

// Our client reads the gzip replies of a go-ethereum node's HTTP server.
func TestClientReadsGethGzip(t *testing.T) {
	ctx := testContext(t)
	stack, err := node.New(&node.Config{HTTPHost: "127.0.0.1", HTTPPort: 0, HTTPModules: []string{"test"}, P2P: p2p.Config{NoDiscovery: true, ListenAddr: ""}})
	if err != nil {
		t.Fatal(err)
	}
	stack.RegisterAPIs([]rpc.API{{Namespace: "test", Service: logsService{}}})
	if err := stack.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stack.Close() })
	var rec encodingRecorder
	c := jsonrpc.NewHTTPClient(stack.HTTPEndpoint(), jsonrpc.WithHTTPClient(&http.Client{Transport: &rec}))
	defer c.Close()
	var got []map[string]string
	if err := c.Call(ctx, "test_logs", nil, &got); err != nil || len(got) != 600 || got[599]["data"] != bigResult()[599]["data"] {
		t.Fatalf("%d results, %v", len(got), err)
	}
	if enc := rec.last.Load(); enc != "gzip" {
		t.Fatalf("go-ethereum's reply had Content-Encoding %q, want gzip", enc)
	}
}
