package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/seedhq/jsonrpc"
)

// Ours is github.com/seedhq/jsonrpc: a Server with a typed echo method
// registered on a Mux, served with Serve(listener, FramingLine), as an
// http.Handler, through WebSocketHandler and with ServeConn on pipes;
// clients from jsonrpc.Dial (NewConn on pipes, as DialCommand makes).
func Ours() *Impl {
	return &Impl{
		Name:     "ours",
		ServeTCP: oursServeTCP,
		DialTCP: func(ctx context.Context, addr string, _ Params) (Client, error) {
			return oursDial(ctx, "tcp://"+addr)
		},
		HTTPHandler: func() (http.Handler, func()) {
			srv := oursServer()
			return srv, func() { shutdown(srv) }
		},
		DialHTTP: func(ctx context.Context, url string, hc *http.Client, _ Params) (Client, error) {
			return oursDial(ctx, url, jsonrpc.WithHTTPClient(hc))
		},
		WSHandler: func() (http.Handler, func()) {
			srv := oursServer()
			return srv.WebSocketHandler(jsonrpc.WebSocketOptions{}), func() { shutdown(srv) }
		},
		DialWS: func(ctx context.Context, url string, _ Params) (Client, error) {
			return oursDial(ctx, url)
		},
		ServeStdio: oursServeStdio,
		DialStdio: func(ctx context.Context, rwc io.ReadWriteCloser, _ Params) (Client, error) {
			// As DialCommand does on a child's pipes: newline framing.
			return &oursClient{c: jsonrpc.NewConn(jsonrpc.NewStream(rwc, jsonrpc.StreamOptions{Framing: jsonrpc.FramingLine}), nil)}, nil
		},
		Request: objectRequest,
	}
}

// oursServer is the echo server. Its MaxConns is raised from the default
// (16,384) so that BenchmarkIdleScale's 100,000 connections are served;
// the limit costs nothing until it is reached.
func oursServer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p Params) (Params, error) { return p, nil })
	return &jsonrpc.Server{Handler: mux, MaxConns: 1 << 20}
}

func shutdown(srv *jsonrpc.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

func oursServeTCP(l net.Listener) func() {
	srv := oursServer()
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine)) }()
	return func() { shutdown(srv); l.Close(); <-done }
}

// oursServeStdio serves rwc as Listen("stdio:") serves standard input and
// output: a stream with the default framing (FramingAuto).
func oursServeStdio(rwc io.ReadWriteCloser) func() {
	srv := oursServer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.ServeConn(ctx, jsonrpc.NewStream(rwc, jsonrpc.StreamOptions{})) }()
	return func() { cancel(); rwc.Close(); <-done }
}

// oursDial recovers from a panic so that a transport still being written
// (a stub that panics) skips its benchmarks instead of ending the run.
func oursDial(ctx context.Context, url string, opts ...jsonrpc.DialOption) (c Client, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, fmt.Errorf("bench: jsonrpc.Dial(%s) panicked: %v", url, p)
		}
	}()
	jc, err := jsonrpc.Dial(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	return &oursClient{c: jc}, nil
}

type oursClient struct{ c jsonrpc.Client }

func (c *oursClient) Echo(ctx context.Context, in, out *Params) error {
	return c.c.Call(ctx, "echo", in, out)
}

func (c *oursClient) Batch(ctx context.Context, in, out []Params) error {
	var b jsonrpc.Batch
	calls := make([]*jsonrpc.BatchCall, len(in))
	for i := range in {
		calls[i] = b.Call("echo", &in[i], &out[i])
	}
	if err := c.c.Batch(ctx, &b); err != nil {
		return err
	}
	for _, bc := range calls {
		if bc.Err != nil {
			return bc.Err
		}
	}
	return nil
}

func (c *oursClient) Close() error { return c.c.Close() }
