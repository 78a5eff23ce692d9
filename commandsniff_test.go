package jsonrpc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// TestDialCommandSniffsOutput: a command that does not speak JSON-RPC on
// its standard output, or frames its messages the other way, fails the
// call at once and says what it wrote, rather than leaving it to wait out
// its timeout; a line printed before the server speaks (a banner) is
// logged and the calls after it work.
func TestDialCommandSniffsOutput(t *testing.T) {
	cases := []struct {
		name, mode string
		framing    jsonrpc.Framing
		want       string // in the call's error; "" for a call that works
	}{
		{"not JSON-RPC", "hello", jsonrpc.FramingLine, `wrote "hello", which is not JSON`},
		{"an LSP server, dialled by lines", "lsp", jsonrpc.FramingAuto, "writes Content-Length framed messages"},
		{"a line server, dialled LSP", "line", jsonrpc.FramingHeader, "writes newline-delimited JSON"},
		{"a banner first", "banner", jsonrpc.FramingLine, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			noLeaks(t)
			name, args := helperCommand(t, c.mode)
			var logs syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			conn, err := jsonrpc.DialCommand(ctx, name, args, jsonrpc.WithFraming(c.framing), jsonrpc.WithStderr(io.Discard),
				jsonrpc.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), jsonrpc.WithGracePeriod(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			var diff float64
			err = conn.Call(ctx, "subtract", []int{42, 23}, &diff)
			if c.want == "" {
				if err != nil || diff != 19 || !strings.Contains(logs.String(), "not JSON-RPC") || !strings.Contains(logs.String(), "server@1.0.0") {
					t.Fatalf("after a banner: %v %v; logged %q", diff, err, logs.String())
				}
				return
			}
			if err == nil || !errors.Is(err, jsonrpc.ErrClosed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the call returned %v, want ErrClosed saying %q", err, c.want)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("the call failed after %v: it waited for an answer that could never come", d)
			}
		})
	}
}

// TestHeaderStreamRefusesLineJSON: a Content-Length stream given a JSON
// line (a peer framing by lines) fails at once, saying so, instead of
// waiting for the end of a header section.
func TestHeaderStreamRefusesLineJSON(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	ch := jsonrpc.NewStream(struct {
		io.Reader
		io.WriteCloser
	}{r, &nopWriteCloser{}}, jsonrpc.StreamOptions{Framing: jsonrpc.FramingHeader})
	go w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"sum","params":[1]}` + "\n"))
	done := make(chan error, 1)
	go func() { _, err := ch.Recv(); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "newline-delimited") {
			t.Fatalf("Recv: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Recv waits for a header section that never comes")
	}
	r.Close()
}

type nopWriteCloser struct{ bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }
