package jsonrpc_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
)

// countingServer answers "add" and counts the calls it served.
func countingServer(n *atomic.Int64) *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "add", func(_ context.Context, p [2]int) (int, error) {
		n.Add(1)
		return p[0] + p[1], nil
	})
	return &jsonrpc.Server{Handler: mux, Logger: slog.New(slog.DiscardHandler)}
}

// load calls "add" from 8 goroutines until stop is closed and returns the
// number of successes and the errors.
func load(ctx context.Context, c jsonrpc.Client, stop chan struct{}) (func() (int64, []error), *atomic.Int64) {
	var ok atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var sum int
				err := c.Call(ctx, "add", [2]int{i, 1}, &sum)
				if err == nil && sum == i+1 {
					ok.Add(1)
					continue
				}
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	return func() (int64, []error) { wg.Wait(); return ok.Load(), errs }, &ok
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Issue 26: one of two endpoints killed under load. Every call that fails
// had left (ErrConnectionLost): none that never left is lost; the calls go
// on through the other endpoint, and the probe brings the first back once it
// returns.
func TestFailoverOneOfTwoKilled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, transport := range []string{"tcp", "http"} {
		t.Run(transport, func(t *testing.T) {
			var nA, nB atomic.Int64
			srvA, srvB := countingServer(&nA), countingServer(&nB)
			var urlA, urlB string
			var killA func()
			var restartA func()
			if transport == "tcp" {
				la, err := srvA.Listen("tcp://127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				lb, err := srvB.Listen("tcp://127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				urlA, urlB = la.URL, lb.URL
				killA = func() {
					ctx, cancel := context.WithCancel(context.Background())
					cancel() // no grace: calls in flight are cut
					srvA.Shutdown(ctx)
				}
				restartA = func() {
					srvA = countingServer(&nA)
					if _, err := srvA.Listen(urlA); err != nil {
						t.Fatal(err)
					}
				}
				defer func() { srvA.Shutdown(context.Background()); srvB.Shutdown(context.Background()) }()
			} else {
				ha, hb := httptest.NewServer(srvA), httptest.NewServer(srvB)
				urlA, urlB = ha.URL, hb.URL
				killA = func() { ha.CloseClientConnections(); ha.Close() }
				restartA = func() {
					ha = httptest.NewUnstartedServer(srvA)
					l, err := netListen(urlA)
					if err != nil {
						t.Fatal(err)
					}
					ha.Listener = l
					ha.Start()
				}
				defer func() { ha.Close(); hb.Close() }()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := jsonrpc.DialFailover(ctx, []string{urlA, urlB}, jsonrpc.WithProbeInterval(10*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			stop := make(chan struct{})
			wait, ok := load(ctx, c, stop)
			waitUntil(t, "calls through both endpoints", func() bool { return nA.Load() > 50 && nB.Load() > 50 })
			killA()
			before := ok.Load()
			waitUntil(t, "calls after the kill", func() bool { return ok.Load() > before+200 })
			restartA()
			a := nA.Load()
			waitUntil(t, "the endpoint's return", func() bool { return nA.Load() > a+50 })
			close(stop)
			n, errs := wait()
			for _, err := range errs {
				if !errors.Is(err, jsonrpc.ErrConnectionLost) {
					t.Errorf("a call failed that was not in flight at the kill: %v", err)
				}
			}
			t.Logf("%d calls, %d in flight at the kill (ErrConnectionLost); %d served by A, %d by B", n, len(errs), nA.Load(), nB.Load())
		})
	}
}

// netListen listens again on the host and port of an http:// URL.
func netListen(rawURL string) (net.Listener, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return net.Listen("tcp", u.Host)
}
