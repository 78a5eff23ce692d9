// Package bench measures github.com/seedhq/jsonrpc side by side with other
// Go JSON-RPC libraries and with the raw limits of the transports they use.
//
// Every implementation serves the same method, echo, which decodes its
// params {"a":1,"b":"hello"} into a struct and returns it as the result,
// and is driven through the same Client interface by the benchmarks in
// bench_test.go. The scenarios (benchmark names) are:
//
//	TCPSeq      one loopback TCP connection, one call at a time
//	TCPPar64    the same connection shared by 64 concurrent callers
//	HTTPSeq     one HTTP POST per call, one call at a time
//	HTTPPar64   one HTTP POST per call, 64 concurrent callers
//	WSSeq       one WebSocket, one call at a time
//	WSPar64     the same WebSocket shared by 64 concurrent callers
//	StdioSeq    a server on a pair of pipes (a child's standard input and
//	            output), one call at a time
//	StdioPar64  the same pipes, 64 concurrent callers
//	Batch100    a batch of 100 echo calls in one message (over TCP)
//	Echo1MiB    echo of params whose string is 1 MiB (over TCP)
//	OpenLoopTCP, OpenLoopHTTP
//	            latency (p50, p99, p99.9 from each call's due time) under
//	            a fixed offered load of 25%, 50% and 90% of each
//	            implementation's sustained peak (see SustainedPeak, OpenLoop)
//	IdleTCP     server memory and goroutines per idle TCP connection
//	IdleWS      the same for WebSocket connections
//
// The implementations (sub-benchmark names) are ours, jrpc2
// (creachadair/jrpc2), sourcegraph (sourcegraph/jsonrpc2), geth
// (go-ethereum/rpc), and two baselines: raw (the transport with no JSON: a
// newline echo over TCP and pipes, a net/http echo handler and client, a
// bare WebSocket echo) and json (the JSON work of the same messages done by
// encoding/json in memory, with no transport).
//
// run.sh runs the passes interleaved and cmd/table prints the medians.
package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Params is the params object of echo and its result.
type Params struct {
	A int    `json:"a"`
	B string `json:"b"`
}

// SmallParams are the params of the small-message scenarios.
var SmallParams = Params{A: 1, B: "hello"}

// BigParams returns params whose string is n bytes of printable ASCII.
func BigParams(n int) Params {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var sb strings.Builder
	sb.Grow(n)
	for i := range n {
		sb.WriteByte(alphabet[i%len(alphabet)])
	}
	return Params{A: 1, B: sb.String()}
}

// Pipes returns the two ends of a byte stream made of two OS pipes, as a
// parent process and its child see them: the child (server) reads what the
// parent (client) writes and the other way round. Like standard input and
// output, the ends offer no deadlines. Close closes both pipes of an end.
func Pipes() (server, client io.ReadWriteCloser, err error) {
	sr, cw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cr, sw, err := os.Pipe()
	if err != nil {
		sr.Close()
		cw.Close()
		return nil, nil, err
	}
	return &pipeEnd{r: sr, w: sw}, &pipeEnd{r: cr, w: cw}, nil
}

// pipeEnd reads one pipe and writes another. It has no SetReadDeadline
// (nor SetWriteDeadline), as os.Stdin and os.Stdout wrapped by a server
// have none.
type pipeEnd struct{ r, w *os.File }

func (p *pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeEnd) Close() error                { return errors.Join(p.w.Close(), p.r.Close()) }

// ErrUnsupported is returned for what an implementation does not offer
// (sourcegraph/jsonrpc2 has no batches and no HTTP transport, jrpc2 no
// WebSocket).
var ErrUnsupported = errors.New("bench: not supported by this implementation")

// Client is what the benchmarks drive.
type Client interface {
	// Echo calls echo with in and decodes the result into out.
	Echo(ctx context.Context, in, out *Params) error
	// Batch calls echo once per element of in, all in one batch message,
	// and decodes the results into out (same length).
	Batch(ctx context.Context, in, out []Params) error
	Close() error
}

// Impl is one implementation under test. A nil function means the
// implementation does not offer that transport.
type Impl struct {
	Name string

	// ServeTCP serves echo on l (newline framing where there is a choice)
	// until stop is called.
	ServeTCP func(l net.Listener) (stop func())
	// ServeIdle, when set, is the server IdleTCP measures instead of
	// ServeTCP (the raw baseline: one goroutine, no buffers).
	ServeIdle func(l net.Listener) (stop func())
	// DialTCP connects a client to addr (host:port). raw is the message
	// the raw baseline sends; others ignore it.
	DialTCP func(ctx context.Context, addr string, raw Params) (Client, error)

	// HTTPHandler serves echo over HTTP POST.
	HTTPHandler func() (h http.Handler, stop func())
	// DialHTTP connects a client to url using hc.
	DialHTTP func(ctx context.Context, url string, hc *http.Client, raw Params) (Client, error)

	// WSHandler serves echo over WebSocket.
	WSHandler func() (h http.Handler, stop func())
	// DialWS connects a client to url (ws://host:port/).
	DialWS func(ctx context.Context, url string, raw Params) (Client, error)

	// ServeStdio serves echo on rwc, a process's standard input and output
	// as its parent's pipes show them (see Pipes), until stop is called.
	ServeStdio func(rwc io.ReadWriteCloser) (stop func())
	// DialStdio makes a client on rwc, the other ends of those pipes.
	DialStdio func(ctx context.Context, rwc io.ReadWriteCloser, raw Params) (Client, error)

	// Request is the request line a plain client sends to this
	// implementation (the idle-connection client): geth takes positional
	// params only, so its params are [{"a":1,"b":"hello"}].
	Request string
}

// Peers are the libraries we compare against.
var Peers = []string{"jrpc2", "sourcegraph", "geth"}

// Impls lists every implementation, ours first.
func Impls() []*Impl {
	return []*Impl{Ours(), JRPC2(), Sourcegraph(), Geth(), Raw()}
}

const (
	objectRequest     = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1,"b":"hello"}}`
	positionalRequest = `{"jsonrpc":"2.0","id":1,"method":"bench_echo","params":[{"a":1,"b":"hello"}]}`
)

// HTTPClient returns the client every HTTP implementation uses: keep-alive
// connections, enough idle ones for 64 concurrent callers.
func HTTPClient() *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr}
}

func checkEcho(in, out *Params) error {
	if in.A != out.A || in.B != out.B {
		return errors.New("bench: echo returned different params")
	}
	return nil
}
