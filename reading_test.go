package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A client that only made calls reads its responses itself and stops
// reading between calls (reading.go). These tests show that nothing is
// missed meanwhile: a message of the peer still arrives, a hang-up still
// ends the connection, Close still returns, and a caller whose context
// ends stops waiting even in the middle of a message, which is then read
// whole.

func loopbackPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestIdleClientStillReceivesNotifications(t *testing.T) {
	a, b := loopbackPair(t)
	peer := make(chan *jsonrpc.Conn, 1)
	mux := jsonrpc.NewMux()
	mux.HandleFunc("hello", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		select {
		case peer <- jsonrpc.ConnFromContext(ctx):
		default:
		}
		return "hi", nil
	})
	server := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: mux})
	defer server.Close()

	got := make(chan string, 1)
	clientMux := jsonrpc.NewMux()
	clientMux.HandleFunc("news", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		got <- string(req.Params)
		return nil, nil
	})
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: clientMux})
	defer client.Close()

	for range 3 { // the client reads its own responses
		var s string
		if err := client.Call(context.Background(), "hello", nil, &s); err != nil || s != "hi" {
			t.Fatalf("call: %q %v", s, err)
		}
	}
	// Now the client is idle and has made calls only: a notification
	// from the server must still reach its handler.
	time.Sleep(20 * time.Millisecond)
	if err := (<-peer).Notify(context.Background(), "news", []int{42}); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-got:
		if p != "[42]" {
			t.Fatalf("params %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the idle client never read the notification")
	}
	// From now on the client keeps reading; calls still work.
	var s string
	if err := client.Call(context.Background(), "hello", nil, &s); err != nil || s != "hi" {
		t.Fatalf("call after the notification: %q %v", s, err)
	}
}

// rawPeer answers the requests it reads with fn's reply (written as is).
func rawPeer(t *testing.T, nc net.Conn, fn func(req string) string) {
	go func() {
		br := bufio.NewReader(nc)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if reply := fn(strings.TrimSpace(line)); reply != "" {
				if _, err := io.WriteString(nc, reply); err != nil {
					return
				}
			}
		}
	}()
}

func TestIdleClientSeesHangUpAndCloses(t *testing.T) {
	a, b := loopbackPair(t)
	rawPeer(t, a, func(req string) string { return `{"jsonrpc":"2.0","id":1,"result":true}` + "\n" })
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	if err := client.Call(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	a.Close() // the peer hangs up while the client is idle
	select {
	case <-client.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the hang-up of the peer was never noticed")
	}
	if err := client.Call(context.Background(), "x", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("call after hang-up: %v", err)
	}

	c, d := loopbackPair(t)
	rawPeer(t, c, func(req string) string { return `{"jsonrpc":"2.0","id":1,"result":true}` + "\n" })
	client = jsonrpc.NewConn(jsonrpc.NewStream(d, jsonrpc.StreamOptions{}), nil)
	if err := client.Call(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { client.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close of an idle client did not return")
	}
}

func TestReadingCallerStopsAtItsDeadlineMidMessage(t *testing.T) {
	for _, framing := range []jsonrpc.Framing{jsonrpc.FramingLine, jsonrpc.FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			a, b := loopbackPair(t)
			frame := func(m string) string {
				if framing == jsonrpc.FramingHeader {
					return "Content-Length: " + itoa(len(m)) + "\r\n\r\n" + m
				}
				return m + "\n"
			}
			returned := make(chan struct{})
			warm := frame(`{"jsonrpc":"2.0","id":1,"result":"ok"}`)
			late := frame(`{"jsonrpc":"2.0","id":2,"result":"late"}`)
			next := frame(`{"jsonrpc":"2.0","id":3,"result":"ok"}`)
			go func() {
				// Each request arrives in one read on loopback.
				buf := make([]byte, 4096)
				if _, err := a.Read(buf); err != nil {
					return
				}
				io.WriteString(a, warm)
				if _, err := a.Read(buf); err != nil {
					return
				}
				// Half of the answer to call 2, then nothing until the
				// caller has given up.
				io.WriteString(a, late[:len(late)/2])
				select {
				case <-returned:
				case <-time.After(5 * time.Second):
				}
				io.WriteString(a, late[len(late)/2:])
				if _, err := a.Read(buf); err != nil {
					return
				}
				io.WriteString(a, next)
			}()
			client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{Framing: framing}), nil)
			defer client.Close()
			// A first call: from then on the client reads its responses
			// itself, so the next caller is the one reading.
			if err := client.Call(context.Background(), "warm", nil, nil); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := client.Call(ctx, "slow", nil, nil)
			close(returned)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the deadline", err)
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Fatalf("the caller waited %v for the rest of a message", d)
			}
			// The half message was kept: the stream is in step and the
			// next call gets its own answer.
			var s string
			if err := client.Call(context.Background(), "next", nil, &s); err != nil || s != "ok" {
				t.Fatalf("next call: %q %v", s, err)
			}
		})
	}
}

// Many callers on one client connection, some giving up on slow answers,
// pass reading between them and the read loop many times: every answer
// still reaches the caller it belongs to, and nothing is left running.
func TestReadingChangesHandsUnderLoad(t *testing.T) {
	// With no overlap window, reading parks whenever no call waits, even
	// with several callers: the most hand-overs between callers and the
	// read loop. The default window is tried too.
	for _, window := range []time.Duration{0, 100 * time.Millisecond} {
		for _, framing := range []jsonrpc.Framing{jsonrpc.FramingLine, jsonrpc.FramingHeader} {
			t.Run(framing.String()+"/"+window.String(), func(t *testing.T) {
				handsUnderLoad(t, framing, window)
			})
		}
	}
}

func handsUnderLoad(t *testing.T, framing jsonrpc.Framing, window time.Duration) {
	{
		{
			a, b := loopbackPair(t)
			mux := jsonrpc.NewMux()
			jsonrpc.Register(mux, "echo", func(ctx context.Context, p []int) ([]int, error) {
				if p[1]%7 == 0 {
					time.Sleep(2 * time.Millisecond) // some answers come late
				}
				return p, nil
			})
			server := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{Framing: framing}), &jsonrpc.Server{Handler: mux})
			defer server.Close()
			client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{Framing: framing}), nil)
			defer client.Close()
			jsonrpc.SetOverlapWindow(client, window)

			const callers, calls = 8, 150
			errs := make(chan error, callers)
			for g := range callers {
				go func() {
					for i := range calls {
						ctx := context.Background()
						var cancel context.CancelFunc = func() {}
						if i%5 == 0 {
							ctx, cancel = context.WithTimeout(ctx, time.Millisecond)
						}
						var got []int
						err := client.Call(ctx, "echo", []int{g, i}, &got)
						cancel()
						switch {
						case err == nil && (len(got) != 2 || got[0] != g || got[1] != i):
							errs <- errors.New("wrong answer: " + itoa(got[0]) + "," + itoa(got[1]) + " for " + itoa(g) + "," + itoa(i))
							return
						case err != nil && !errors.Is(err, context.DeadlineExceeded):
							errs <- err
							return
						}
						if i%13 == 0 {
							time.Sleep(3 * time.Millisecond) // idle: reading parks, the timer may hand it to a read loop
						}
					}
					errs <- nil
				}()
			}
			for range callers {
				select {
				case err := <-errs:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(60 * time.Second):
					t.Fatal("callers stuck")
				}
			}
		}
	}
}

func TestIdleClientShutdown(t *testing.T) {
	a, b := loopbackPair(t)
	rawPeer(t, a, func(req string) string { return `{"jsonrpc":"2.0","id":1,"result":true}` + "\n" })
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	if err := client.Call(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown of an idle client: %v", err)
	}
	select {
	case <-client.Done():
	default:
		t.Fatal("Shutdown returned before the connection ended")
	}
}

// Close ends a call whose caller is reading for its answer.
func TestCloseEndsAReadingCaller(t *testing.T) {
	a, b := loopbackPair(t)
	answered := false
	rawPeer(t, a, func(req string) string {
		if answered {
			return "" // the second call is never answered
		}
		answered = true
		return `{"jsonrpc":"2.0","id":1,"result":true}` + "\n"
	})
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	if err := client.Call(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- client.Call(context.Background(), "y", nil, nil) }() // reads for itself
	time.Sleep(50 * time.Millisecond)
	client.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("got %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a reading caller waiting")
	}
}
