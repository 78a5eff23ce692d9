package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// The reconnect tests' helper process serves cutMux on stdio; its "cut"
// ends the process.
const reconnectModeEnv = "JSONRPC_TEST_RECONNECT_SERVER"

func TestReconnectHelperProcess(t *testing.T) {
	if os.Getenv(reconnectModeEnv) == "" {
		t.Skip("helper process for the reconnect tests")
	}
	srv := &jsonrpc.Server{Handler: cutMux(func(*jsonrpc.Conn) { os.Exit(0) })}
	l, err := srv.Listen("stdio:")
	if err != nil {
		os.Exit(1)
	}
	<-l.Done()
	os.Exit(0)
}

// cutMux is the demo service, plus "cut", which drops the connection while
// its call is in flight (cut is what drops it), and "greet", which calls the
// client back.
func cutMux(cut func(*jsonrpc.Conn)) *jsonrpc.Mux {
	mux := demo.Shared{}.NewMux()
	jsonrpc.Register(mux, "cut", func(ctx context.Context, _ struct{}) (bool, error) {
		go cut(jsonrpc.ConnFromContext(ctx))
		<-ctx.Done()
		return false, ctx.Err()
	})
	jsonrpc.Register(mux, "greet", func(ctx context.Context, _ struct{}) (string, error) {
		var name string
		err := jsonrpc.ConnFromContext(ctx).Call(ctx, "client.name", nil, &name)
		return "hello, " + name, err
	})
	return mux
}

// clientHandler answers the server's callbacks.
func clientHandler() jsonrpc.Handler {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "client.name", func(context.Context, struct{}) (string, error) { return "client", nil })
	return mux
}

// Issue 26: connections cut mid-call and mid-subscription on tcp, unix,
// WebSocket and stdio: the call in flight fails with ErrConnectionLost, the
// next call succeeds on the new connection (the server's callbacks still
// reach the client's handlers), and the subscription is made again and
// reports the gap.
func TestReconnectAfterCut(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	closeConn := func(c *jsonrpc.Conn) { c.Close() }
	srv := &jsonrpc.Server{Handler: cutMux(closeConn), Logger: slog.New(slog.DiscardHandler)}
	tcp, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unix, err := srv.Listen("unix://" + filepath.Join(t.TempDir(), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer func() { hs.Close(); srv.Shutdown(context.Background()) }()
	opts := []jsonrpc.DialOption{jsonrpc.WithBackoff(5*time.Millisecond, 50*time.Millisecond), jsonrpc.WithHandler(clientHandler())}
	dialURL := func(url string) func(ctx context.Context) (*jsonrpc.ReconnectClient, error) {
		return func(ctx context.Context) (*jsonrpc.ReconnectClient, error) {
			c, err := jsonrpc.Dial(ctx, url, append(opts, jsonrpc.WithReconnect())...)
			if err != nil {
				return nil, err
			}
			return c.(*jsonrpc.ReconnectClient), nil
		}
	}
	for _, tc := range []struct {
		name string
		dial func(ctx context.Context) (*jsonrpc.ReconnectClient, error)
	}{
		{"tcp", dialURL(tcp.URL)},
		{"unix", dialURL(unix.URL)},
		{"ws", dialURL("ws" + strings.TrimPrefix(hs.URL, "http"))},
		{"stdio", func(ctx context.Context) (*jsonrpc.ReconnectClient, error) {
			t.Setenv(reconnectModeEnv, "1")
			t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return jsonrpc.NewReconnectClient(ctx, func(ctx context.Context) (*jsonrpc.Conn, error) {
				return jsonrpc.DialCommand(ctx, os.Args[0], []string{"-test.run=^TestReconnectHelperProcess$"}, jsonrpc.WithHandler(clientHandler()))
			}, opts...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rc, err := tc.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			checkCutAndResume(t, ctx, rc)
		})
	}
}

func checkCutAndResume(t *testing.T, ctx context.Context, rc *jsonrpc.ReconnectClient) {
	t.Helper()
	sub, err := jsonrpc.Resubscribe[int64](ctx, rc, jsonrpc.SubscribeOptions{Namespace: "demo"}, "ticker", map[string]int{"interval_ms": 5})
	if err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 2; want++ {
		if got, err := sub.Next(ctx); err != nil || got != want {
			t.Fatalf("event %d: %d, %v", want, got, err)
		}
	}
	oldID := sub.ID()

	err = rc.Call(ctx, "cut", nil, nil)
	if !errors.Is(err, jsonrpc.ErrConnectionLost) || !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("the call in flight at the cut: %v, want ErrConnectionLost", err)
	}
	var hello string
	if err := rc.Call(ctx, "greet", nil, &hello); err != nil || hello != "hello, client" {
		t.Fatalf("the call after the cut: %q, %v", hello, err)
	}

	// Events queued before the cut come first, then the gap, then the new
	// subscription's events from 1.
	var gap *jsonrpc.SubscriptionGap
	for {
		_, err := sub.Next(ctx)
		if errors.As(err, &gap) {
			break
		}
		if err != nil {
			t.Fatalf("waiting for the gap: %v", err)
		}
	}
	if gap.OldID != oldID || gap.NewID == oldID || gap.NewID != sub.ID() || !errors.Is(gap, jsonrpc.ErrClosed) {
		t.Fatalf("gap %+v (old id %s, now %s)", gap, oldID, sub.ID())
	}
	if got, err := sub.Next(ctx); err != nil || got != 1 {
		t.Fatalf("first event after the gap: %d, %v", got, err)
	}
	if err := sub.Unsubscribe(ctx); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
}

// A server that goes away and comes back on the same address: calls made
// meanwhile wait (up to their context), and the first after its return
// succeeds.
func TestReconnectAfterServerRestart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), Logger: slog.New(slog.DiscardHandler)}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var events []error
	eventsCh := make(chan error, 16)
	// The callback told of the return calls over the new connection (as a
	// client subscribing again would).
	var client atomic.Value // jsonrpc.Client, once dialled
	calledBack := make(chan error, 1)
	onReconnect := func(err error) {
		if err == nil {
			var n float64
			cerr := client.Load().(jsonrpc.Client).Call(ctx, "sum", []int{4, 5}, &n)
			if cerr == nil && n != 9 {
				cerr = fmt.Errorf("sum [4,5] = %v", n)
			}
			calledBack <- cerr
		}
		eventsCh <- err
	}
	c, err := jsonrpc.Dial(ctx, l.URL, jsonrpc.WithBackoff(5*time.Millisecond, 20*time.Millisecond), jsonrpc.WithOnReconnect(onReconnect))
	if err != nil {
		t.Fatal(err)
	}
	client.Store(c)
	defer c.Close()
	var n float64
	if err := c.Call(ctx, "sum", []int{1, 2}, &n); err != nil || n != 3 {
		t.Fatalf("sum: %v, %v", n, err)
	}
	srv.Shutdown(ctx)
	events = append(events, <-eventsCh) // the drop
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	err = c.Call(short, "sum", []int{1, 2}, &n)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call while the server is away: %v, want it to wait for its context", err)
	}
	srv2 := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), Logger: slog.New(slog.DiscardHandler)}
	if _, err := srv2.Listen(l.URL); err != nil {
		t.Fatal(err)
	}
	defer srv2.Shutdown(context.Background())
	if err := c.Call(ctx, "sum", []int{2, 3}, &n); err != nil || n != 5 {
		t.Fatalf("sum after the restart: %v, %v", n, err)
	}
	events = append(events, <-eventsCh)
	if events[0] == nil || events[1] != nil {
		t.Fatalf("reconnect notices: %v", events)
	}
	if err := <-calledBack; err != nil {
		t.Fatalf("a call from the reconnect callback: %v", err)
	}
}
