package interop

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// go-ethereum's rpc client subscribes to our server (issue 16): the demo
// ticker through Client.Subscribe and an "eth" namespace through
// EthSubscribe, over WebSocket and over a unix socket (geth's IPC).
func TestGethClientSubscribes(t *testing.T) {
	mux := demo.Shared{}.NewMux()
	eth := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "eth"})
	jsonrpc.AddSubscription(eth, "newHeads", func(ctx context.Context, _ struct{}, sink *jsonrpc.Sink[map[string]string]) error {
		for i := 1; i <= 3; i++ {
			if err := sink.Send(map[string]string{"number": "0x" + string(rune('0'+i))}); err != nil {
				return nil
			}
		}
		<-ctx.Done()
		return nil
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: testLogger(t)}
	hs := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer hs.Close()
	sock := filepath.Join(t.TempDir(), "geth.ipc")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(testContext(t), 20*time.Second)
	defer cancel()
	dials := map[string]func() (*rpc.Client, error){
		"websocket": func() (*rpc.Client, error) {
			return rpc.DialWebsocket(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), "")
		},
		"ipc": func() (*rpc.Client, error) { return rpc.DialIPC(ctx, sock) },
	}
	for name, dial := range dials {
		t.Run(name, func(t *testing.T) {
			c, err := dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ticks := make(chan int64, 16)
			sub, err := c.Subscribe(ctx, "demo", ticks, "ticker", map[string]int{"interval_ms": 1, "count": 5})
			if err != nil {
				t.Fatal(err)
			}
			for want := int64(1); want <= 5; want++ {
				select {
				case got := <-ticks:
					if got != want {
						t.Fatalf("tick %d: got %d", want, got)
					}
				case err := <-sub.Err():
					t.Fatalf("subscription ended: %v", err)
				case <-ctx.Done():
					t.Fatal("timed out waiting for ticks")
				}
			}
			sub.Unsubscribe() // the ticker ended on the server: geth ignores the error

			heads := make(chan map[string]string, 16)
			hsub, err := c.EthSubscribe(ctx, heads, "newHeads")
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				select {
				case h := <-heads:
					if h["number"] != "0x"+string(rune('0'+i)) {
						t.Fatalf("head %d: %v", i, h)
					}
				case <-ctx.Done():
					t.Fatal("timed out waiting for heads")
				}
			}
			hsub.Unsubscribe()
			deadline := time.Now().Add(5 * time.Second)
			for eth.Live() != 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if eth.Live() != 0 {
				t.Fatalf("%d eth subscriptions live after geth unsubscribed", eth.Live())
			}
		})
	}
}
