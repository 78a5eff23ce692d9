package bench

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
	"github.com/creachadair/jrpc2/jhttp"
	"github.com/creachadair/jrpc2/server"
)

// JRPC2 is github.com/creachadair/jrpc2 with its defaults: server.Loop over
// newline framing (channel.Line), a handler.New echo, jhttp.Bridge and
// jhttp.Channel for HTTP, Server.Start on channel.Line over pipes. It has
// no WebSocket transport of its own.
func JRPC2() *Impl {
	return &Impl{
		Name: "jrpc2",
		ServeTCP: func(l net.Listener) func() {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				server.Loop(ctx, server.NetAccepter(l, channel.Line), server.Static(jrpc2Methods()), nil)
			}()
			return func() { cancel(); l.Close(); <-done }
		},
		DialTCP: func(ctx context.Context, addr string, _ Params) (Client, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return &jrpc2Client{c: jrpc2.NewClient(channel.Line(nc, nc), nil)}, nil
		},
		HTTPHandler: func() (http.Handler, func()) {
			br := jhttp.NewBridge(jrpc2Methods(), nil)
			return br, func() { br.Close() }
		},
		DialHTTP: func(ctx context.Context, url string, hc *http.Client, _ Params) (Client, error) {
			ch := jhttp.NewChannel(url, &jhttp.ChannelOptions{Client: hc})
			return &jrpc2Client{c: jrpc2.NewClient(ch, nil)}, nil
		},
		ServeStdio: func(rwc io.ReadWriteCloser) func() {
			srv := jrpc2.NewServer(jrpc2Methods(), nil).Start(channel.Line(rwc, rwc))
			return func() { rwc.Close(); srv.Stop() }
		},
		DialStdio: func(ctx context.Context, rwc io.ReadWriteCloser, _ Params) (Client, error) {
			return &jrpc2Client{c: jrpc2.NewClient(channel.Line(rwc, rwc), nil)}, nil
		},
		Request: objectRequest,
	}
}

func jrpc2Methods() handler.Map {
	return handler.Map{"echo": handler.New(func(ctx context.Context, p Params) (Params, error) { return p, nil })}
}

type jrpc2Client struct{ c *jrpc2.Client }

func (c *jrpc2Client) Echo(ctx context.Context, in, out *Params) error {
	return c.c.CallResult(ctx, "echo", in, out)
}

func (c *jrpc2Client) Batch(ctx context.Context, in, out []Params) error {
	specs := make([]jrpc2.Spec, len(in))
	for i := range in {
		specs[i] = jrpc2.Spec{Method: "echo", Params: &in[i]}
	}
	rsps, err := c.c.Batch(ctx, specs)
	if err != nil {
		return err
	}
	for i, r := range rsps {
		if err := r.UnmarshalResult(&out[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c *jrpc2Client) Close() error { return c.c.Close() }
