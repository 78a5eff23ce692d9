package jsonrpc_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// A response over the client's size limit fails its call at once with
// "response too large (N bytes, limit M)" (errors.Is ErrMessageTooLarge),
// never with the call's deadline, on every transport; where the framing can
// resynchronise, the connection goes on and the next call is answered.
func TestClientResponseTooLarge(t *testing.T) {
	const limit, n = 64 << 10, 100 << 10
	size := len(`{"jsonrpc":"2.0","id":1,"result":""}`) + n // the id is 1: the first call
	exact := "jsonrpc: response too large (" + strconv.Itoa(size) + " bytes, limit " + strconv.Itoa(limit) + ")"
	unknown := "jsonrpc: response too large (more than " + strconv.Itoa(limit) + " bytes, limit " + strconv.Itoa(limit) + ")"
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), Logger: slog.New(slog.DiscardHandler)}
	defer srv.Shutdown(context.Background())
	listen := func(url string) string {
		l, err := srv.Listen(url)
		if err != nil {
			t.Fatal(err)
		}
		return l.URL
	}
	for _, tc := range []struct {
		name   string
		dial   func(ctx context.Context) (jsonrpc.Client, error)
		want   []string // the error, one of
		goeson bool     // the connection serves the next call
	}{
		{"tcp", dialURL(listen("tcp://127.0.0.1:0")), []string{exact, unknown}, true},
		{"tcp-lsp", dialURL(listen("tcp://127.0.0.1:0"), jsonrpc.WithFraming(jsonrpc.FramingHeader)), []string{exact}, false},
		{"unix", dialURL(listen("unix://" + filepath.Join(t.TempDir(), "s.sock"))), []string{exact, unknown}, true},
		// The server gzips the reply: its size is known only past the limit.
		{"http", dialURL(listen("http://127.0.0.1:0/")), []string{unknown}, true},
		{"ws", dialURL(listen("ws://127.0.0.1:0/")), []string{unknown}, false},
		{"stdio", func(ctx context.Context) (jsonrpc.Client, error) {
			name, args := helperCommand(t, "demo")
			return jsonrpc.DialCommand(ctx, name, args, jsonrpc.WithMaxMessageSize(limit))
		}, []string{exact, unknown}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := tc.dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			err = c.Call(ctx, "big", map[string]int{"n": n}, nil)
			if !errors.Is(err, jsonrpc.ErrMessageTooLarge) || !oneOf(err.Error(), tc.want) {
				t.Fatalf("after %v: %v, want %q", time.Since(start), err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("reported after %v", d)
			}
			if !tc.goeson {
				return
			}
			var s string
			if err := c.Call(ctx, "big", map[string]int{"n": 3}, &s); err != nil || s != "xxx" {
				t.Fatalf("next call: %q %v", s, err)
			}
		})
	}
}

func oneOf(s string, want []string) bool {
	for _, w := range want {
		if s == w {
			return true
		}
	}
	return false
}

// dialURL dials url with a 64 KiB limit (and opts).
func dialURL(url string, opts ...jsonrpc.DialOption) func(ctx context.Context) (jsonrpc.Client, error) {
	return func(ctx context.Context) (jsonrpc.Client, error) {
		return jsonrpc.Dial(ctx, url, append([]jsonrpc.DialOption{jsonrpc.WithMaxMessageSize(64 << 10)}, opts...)...)
	}
}

// Only the call whose response is too large fails: the others on the same
// connection, waiting at the same time, get their results.
func TestClientResponseTooLargeFailsOnlyItsCall(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), Logger: slog.New(slog.DiscardHandler)}
	defer srv.Shutdown(context.Background())
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := dialURL(l.URL)(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			n := 10
			if i == 3 {
				n = 100 << 10
			}
			errs[i] = c.Call(ctx, "big", map[string]int{"n": n}, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i == 3) != errors.Is(err, jsonrpc.ErrMessageTooLarge) || i != 3 && err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}
