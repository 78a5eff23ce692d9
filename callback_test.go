package jsonrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// Two peers whose handlers all call each other back, many at once, with
// one concurrency slot each, never deadlock, whatever the Channel: a byte
// stream (which implements the optional capabilities), a WebSocket and a
// user's Channel (which implement none).

// chanChannel is a user's Channel over unbuffered Go channels: a Send
// waits until the peer's Recv takes the message, the harshest case for
// two peers writing to each other.
type chanChannel struct {
	in, out        chan []byte
	done, peerDone chan struct{}
	once           *sync.Once
}

func chanPair() (a, b *chanChannel) {
	ab, ba := make(chan []byte), make(chan []byte)
	da, db := make(chan struct{}), make(chan struct{})
	return &chanChannel{in: ba, out: ab, done: da, peerDone: db, once: new(sync.Once)},
		&chanChannel{in: ab, out: ba, done: db, peerDone: da, once: new(sync.Once)}
}

func (c *chanChannel) Recv() ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, jsonrpc.ErrClosed
	case <-c.peerDone:
		return nil, io.EOF
	}
}

func (c *chanChannel) Send(msg []byte) error {
	m := append([]byte(nil), msg...)
	select {
	case c.out <- m:
		return nil
	case <-c.done:
		return jsonrpc.ErrClosed
	case <-c.peerDone:
		return jsonrpc.ErrClosed
	}
}

func (c *chanChannel) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// bouncer serves "bounce" [n]: with n > 0 it calls "bounce" on its peer with
// n-1 and returns the answer plus one.
func bouncer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "bounce", func(ctx context.Context, p [1]int) (int, error) {
		n := p[0]
		if n == 0 {
			return 0, nil
		}
		var got int
		if err := jsonrpc.ConnFromContext(ctx).Call(ctx, "bounce", [1]int{n - 1}, &got); err != nil {
			return 0, err
		}
		return got + 1, nil
	})
	return &jsonrpc.Server{Handler: mux, MaxConcurrency: 1}
}

// bounceBothWays makes callers on each side call "bounce" at once and
// checks every answer, failing if they do not all come back in time.
func bounceBothWays(t *testing.T, a, b *jsonrpc.Conn) {
	t.Helper()
	const callers, depth = 64, 3
	errs := make(chan error, 2*callers)
	for _, c := range []*jsonrpc.Conn{a, b} {
		for range callers {
			go func() {
				var got int
				err := c.Call(context.Background(), "bounce", [1]int{depth}, &got)
				if err == nil && got != depth {
					err = errors.New("wrong answer " + itoa(got))
				}
				errs <- err
			}()
		}
	}
	timeout := time.After(30 * time.Second)
	for range 2 * callers {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("deadlock: the peers' callbacks never all came back")
		}
	}
}

func TestMutualCallbacksNeverDeadlock(t *testing.T) {
	t.Run("user channel", func(t *testing.T) {
		x, y := chanPair()
		a := jsonrpc.NewConn(x, bouncer())
		b := jsonrpc.NewConn(y, bouncer())
		defer a.Close()
		defer b.Close()
		bounceBothWays(t, a, b)
	})
	t.Run("pipe stream", func(t *testing.T) {
		x, y := net.Pipe()
		a := jsonrpc.NewConn(jsonrpc.NewStream(x, jsonrpc.StreamOptions{}), bouncer())
		b := jsonrpc.NewConn(jsonrpc.NewStream(y, jsonrpc.StreamOptions{}), bouncer())
		defer a.Close()
		defer b.Close()
		bounceBothWays(t, a, b)
	})
	t.Run("websocket", func(t *testing.T) {
		srv := bouncer()
		peer := make(chan *jsonrpc.Conn, 1)
		mux := srv.Handler.(*jsonrpc.Mux)
		mux.HandleFunc("hello", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			peer <- jsonrpc.ConnFromContext(ctx)
			return true, nil
		})
		ts := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
		defer ts.Close()
		defer srv.Shutdown(context.Background())
		url := "ws" + strings.TrimPrefix(ts.URL, "http")
		b, err := jsonrpc.DialWebSocket(context.Background(), url, jsonrpc.WithHandler(bouncer().Handler), jsonrpc.WithMaxConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Call(context.Background(), "hello", nil, nil); err != nil {
			t.Fatal(err)
		}
		bounceBothWays(t, <-peer, b)
	})
}
