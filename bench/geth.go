package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

// Geth is github.com/ethereum/go-ethereum/rpc: a service registered as
// "bench" (so the method is bench_echo) with an Echo method. go-ethereum
// takes positional params only, so its params are [{"a":1,"b":"hello"}]:
// the same object, one level deeper. TCP is served by ServeListener and
// dialled with DialIO over the socket (its codec reads a stream of JSON
// values and writes one per line); HTTP by the Server's ServeHTTP and
// DialOptions with the shared http.Client; WebSocket by WebsocketHandler and
// DialWebsocket; pipes by ServeCodec(NewCodec) and DialIO.
func Geth() *Impl {
	return &Impl{
		Name: "geth",
		ServeTCP: func(l net.Listener) func() {
			srv := gethServer()
			done := make(chan struct{})
			go func() { defer close(done); srv.ServeListener(l) }()
			return func() { l.Close(); <-done; srv.Stop() }
		},
		DialTCP: func(ctx context.Context, addr string, _ Params) (Client, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			c, err := rpc.DialIO(ctx, nc, nc)
			if err != nil {
				nc.Close()
				return nil, err
			}
			return &gethClient{c: c, nc: nc}, nil
		},
		HTTPHandler: func() (http.Handler, func()) {
			srv := gethServer()
			return srv, srv.Stop
		},
		DialHTTP: func(ctx context.Context, url string, hc *http.Client, _ Params) (Client, error) {
			c, err := rpc.DialOptions(ctx, url, rpc.WithHTTPClient(hc))
			if err != nil {
				return nil, err
			}
			return &gethClient{c: c}, nil
		},
		WSHandler: func() (http.Handler, func()) {
			srv := gethServer()
			return srv.WebsocketHandler([]string{"*"}), srv.Stop
		},
		DialWS: func(ctx context.Context, url string, _ Params) (Client, error) {
			c, err := rpc.DialWebsocket(ctx, url, "")
			if err != nil {
				return nil, err
			}
			return &gethClient{c: c}, nil
		},
		ServeStdio: func(rwc io.ReadWriteCloser) func() {
			srv := gethServer()
			go srv.ServeCodec(rpc.NewCodec(gethPipe{rwc}), 0)
			return func() { rwc.Close(); srv.Stop() }
		},
		DialStdio: func(ctx context.Context, rwc io.ReadWriteCloser, _ Params) (Client, error) {
			c, err := rpc.DialIO(ctx, rwc, rwc)
			if err != nil {
				return nil, err
			}
			return &gethClient{c: c, nc: rwc}, nil
		},
		Request: positionalRequest,
	}
}

type gethService struct{}

// Echo returns its params.
func (gethService) Echo(p Params) Params { return p }

func gethServer() *rpc.Server {
	srv := rpc.NewServer()
	if err := srv.RegisterName("bench", gethService{}); err != nil {
		panic(err)
	}
	return srv
}

type gethClient struct {
	c  *rpc.Client
	nc io.Closer // closed with the client (DialIO does not own it)
}

// gethPipe is a stream for ServeCodec, which wants write deadlines: like
// go-ethereum's own stdio connection, it has none.
type gethPipe struct{ io.ReadWriteCloser }

func (gethPipe) SetWriteDeadline(time.Time) error { return errors.ErrUnsupported }

func (c *gethClient) Echo(ctx context.Context, in, out *Params) error {
	return c.c.CallContext(ctx, out, "bench_echo", in)
}

func (c *gethClient) Batch(ctx context.Context, in, out []Params) error {
	elems := make([]rpc.BatchElem, len(in))
	for i := range in {
		elems[i] = rpc.BatchElem{Method: "bench_echo", Args: []any{&in[i]}, Result: &out[i]}
	}
	if err := c.c.BatchCallContext(ctx, elems); err != nil {
		return err
	}
	for i := range elems {
		if elems[i].Error != nil {
			return elems[i].Error
		}
	}
	return nil
}

func (c *gethClient) Close() error {
	if c.nc != nil {
		c.nc.Close() // first: the client's reader waits on it
	}
	c.c.Close()
	return nil
}
