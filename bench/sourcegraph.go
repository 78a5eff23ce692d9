package bench

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"

	gorilla "github.com/gorilla/websocket"
	"github.com/sourcegraph/jsonrpc2"
	sgws "github.com/sourcegraph/jsonrpc2/websocket"
)

// Sourcegraph is github.com/sourcegraph/jsonrpc2: NewConn over
// NewPlainObjectStream (JSON values separated by newlines) with a
// HandlerWithError echo run on the read goroutine (its default, and its
// fastest for a handler this short), and its websocket package (gorilla);
// the same NewConn over pipes.
// It has no HTTP transport and no batches.
func Sourcegraph() *Impl {
	return &Impl{
		Name:     "sourcegraph",
		ServeTCP: sgServeTCP,
		DialTCP: func(ctx context.Context, addr string, _ Params) (Client, error) {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			c := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(nc), sgNoCalls{}, sgQuiet)
			return &sgClient{c: c}, nil
		},
		WSHandler: func() (http.Handler, func()) {
			var up gorilla.Upgrader
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				wc, err := up.Upgrade(w, r, nil)
				if err != nil {
					return
				}
				// The jsonrpc2.Conn runs on goroutines of its own; the HTTP
				// handler need not wait for it.
				jsonrpc2.NewConn(context.Background(), sgws.NewObjectStream(wc), sgHandler(), sgQuiet)
			})
			return h, func() {}
		},
		DialWS: func(ctx context.Context, url string, _ Params) (Client, error) {
			wc, _, err := gorilla.DefaultDialer.DialContext(ctx, url, nil)
			if err != nil {
				return nil, err
			}
			c := jsonrpc2.NewConn(context.Background(), sgws.NewObjectStream(wc), sgNoCalls{}, sgQuiet)
			return &sgClient{c: c}, nil
		},
		ServeStdio: func(rwc io.ReadWriteCloser) func() {
			c := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(rwc), sgHandler(), sgQuiet)
			return func() { c.Close() }
		},
		DialStdio: func(ctx context.Context, rwc io.ReadWriteCloser, _ Params) (Client, error) {
			return &sgClient{c: jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(rwc), sgNoCalls{}, sgQuiet)}, nil
		},
		Request: objectRequest,
	}
}

var sgQuiet = jsonrpc2.SetLogger(log.New(io.Discard, "", 0))

func sgHandler() jsonrpc2.Handler {
	return jsonrpc2.HandlerWithError(func(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		if req.Method != "echo" {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found"}
		}
		var p Params
		if req.Params == nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "params required"}
		}
		if err := json.Unmarshal(*req.Params, &p); err != nil {
			return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: err.Error()}
		}
		return p, nil
	})
}

// sgServeTCP serves each accepted connection with a jsonrpc2.Conn; the
// connections end when their clients close them (no bookkeeping goroutine
// per connection, which would add to its idle cost).
func sgServeTCP(l net.Listener) func() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			jsonrpc2.NewConn(context.Background(), jsonrpc2.NewPlainObjectStream(nc), sgHandler(), sgQuiet)
		}
	}()
	return func() { l.Close(); <-done }
}

// sgNoCalls answers nothing: the client side serves no methods.
type sgNoCalls struct{}

func (sgNoCalls) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {}

type sgClient struct{ c *jsonrpc2.Conn }

func (c *sgClient) Echo(ctx context.Context, in, out *Params) error {
	return c.c.Call(ctx, "echo", in, out)
}

func (c *sgClient) Batch(ctx context.Context, in, out []Params) error { return ErrUnsupported }

func (c *sgClient) Close() error { return c.c.Close() }
