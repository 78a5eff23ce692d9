package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
)

// Every scheme Dial and Server.Listen serve themselves is refused by
// RegisterTransport: "tls" was accepted and its registration never reached.
func TestRegisterTransportRefusesEveryBuiltinScheme(t *testing.T) {
	for _, scheme := range []string{"http", "https", "ws", "wss", "tcp", "tls", "unix", "stdio"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "built in") {
					t.Errorf("RegisterTransport(%q): %v, want a panic saying it is built in", scheme, r)
				}
			}()
			jsonrpc.RegisterTransport(scheme, mem.dial, mem.listen)
		}()
	}
}

// pipePair is one end of a stream over two OS pipes, as a child process's
// standard input and output are.
type pipePair struct {
	r *os.File
	w *os.File
}

func (p pipePair) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipePair) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipePair) Close() error                { p.w.Close(); return p.r.Close() }

// A Content-Length header line that never ends is cut at the 8 KiB limit
// of a header section: answered with -32700 (in header framing, which the
// line chose) and the connection closed, on tcp, unix and stdio alike.
func TestHeaderLineThatNeverEndsIsCut(t *testing.T) {
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux(), Logger: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	dial := map[string]func(t *testing.T) io.ReadWriteCloser{
		"tcp": func(t *testing.T) io.ReadWriteCloser {
			l, err := srv.Listen("tcp://127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			c, err := net.Dial("tcp", strings.TrimPrefix(l.URL, "tcp://"))
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		"unix": func(t *testing.T) io.ReadWriteCloser {
			path := filepath.Join(t.TempDir(), "s")
			_, err := srv.Listen("unix://" + path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		"stdio": func(t *testing.T) io.ReadWriteCloser {
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				srv.ServeConn(ctx, jsonrpc.NewStream(pipePair{inR, outW}, jsonrpc.StreamOptions{}))
			}()
			t.Cleanup(func() { cancel(); <-done })
			return pipePair{outR, inW}
		},
	}
	for _, name := range []string{"tcp", "unix", "stdio"} {
		t.Run(name, func(t *testing.T) {
			c := dial[name](t)
			defer c.Close()
			go func() {
				c.Write([]byte("Content-Length: "))
				for range 64 { // 64 KiB of digits, never a newline
					if _, err := c.Write([]byte(strings.Repeat("1", 1024))); err != nil {
						return
					}
				}
			}()
			if d, ok := c.(interface{ SetReadDeadline(time.Time) error }); ok {
				d.SetReadDeadline(time.Now().Add(10 * time.Second))
			}
			r := bufio.NewReader(c)
			header, err := r.ReadString('\n')
			if err != nil || !strings.HasPrefix(header, "Content-Length: ") {
				t.Fatalf("answer %q, %v; want a header-framed error", header, err)
			}
			r.ReadString('\n') // the blank line
			body, _ := r.ReadString('}')
			rest, _ := r.ReadString('}')
			body += rest
			if !strings.Contains(body, `"code":-32700`) || !strings.Contains(body, "header section too long") || !strings.Contains(body, `"id":null`) {
				t.Fatalf("answer %q, want -32700 header section too long", body)
			}
			// Closed: EOF, or a reset since the peer's digits were left unread.
			if _, err := io.Copy(io.Discard, r); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the connection was not closed: %v", err)
			}
		})
	}
}

// whoServer answers "who" with the caller's address as the Peer gives it,
// behind a trusted proxy at 127.0.0.1.
func whoServer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "who", func(ctx context.Context, _ []int) (string, error) {
		p, _ := jsonrpc.PeerFromContext(ctx)
		return p.RemoteAddr, nil
	})
	return &jsonrpc.Server{Handler: mux, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Logger: slog.New(slog.DiscardHandler)}
}

func postWho(t *testing.T, url, accept string) (status int, header http.Header, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"who","params":[]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// A client behind a trusted proxy is the same client on plain HTTP,
// WebSocket and Streamable HTTP: Streamable HTTP used the proxy's address.
func TestTrustedProxyClientIsTheSameOnEveryHTTPFlavour(t *testing.T) {
	srv := whoServer()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ws := httptest.NewServer(srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	defer ws.Close()
	sh := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer sh.Close()
	const want = `"203.0.113.7"`
	if _, _, body := postWho(t, hs.URL, "application/json"); !strings.Contains(body, want) {
		t.Errorf("HTTP: %s", body)
	}
	for _, accept := range []string{"application/json", "application/json, text/event-stream"} {
		if _, _, body := postWho(t, sh.URL, accept); !strings.Contains(body, want) {
			t.Errorf("Streamable HTTP (Accept %s): %s", accept, body)
		}
	}
	c, err := jsonrpc.Dial(context.Background(), "ws"+strings.TrimPrefix(ws.URL, "http"), jsonrpc.WithHeader("X-Forwarded-For", "203.0.113.7"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	if err := c.Call(context.Background(), "who", []int{}, &got); err != nil || got != "203.0.113.7" {
		t.Errorf("WebSocket: %q, %v", got, err)
	}
}

// A rate limit (Server.Admit refusing) answers 429 with Retry-After on
// plain HTTP and on Streamable HTTP alike, whether the client takes JSON
// or an event stream (Streamable HTTP answered 200 with -32005).
func TestRateLimitIs429OnEveryHTTPFlavour(t *testing.T) {
	srv := whoServer()
	srv.Admit = func(ctx context.Context, n int) error { return &jsonrpc.LimitError{RetryAfter: 2 * time.Second} }
	hs := httptest.NewServer(srv)
	defer hs.Close()
	sh := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer sh.Close()
	for _, tc := range []struct{ name, url, accept string }{
		{"HTTP", hs.URL, "application/json"},
		{"Streamable HTTP, JSON", sh.URL, "application/json"},
		{"Streamable HTTP, events", sh.URL, "application/json, text/event-stream"},
	} {
		status, h, body := postWho(t, tc.url, tc.accept)
		if status != http.StatusTooManyRequests || h.Get("Retry-After") != "2" || !strings.Contains(body, "-32005") {
			t.Errorf("%s: %d Retry-After %q %s", tc.name, status, h.Get("Retry-After"), body)
		}
	}
}

func inboundServer() *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(ctx context.Context, p []int) ([]int, error) { return p, nil })
	jsonrpc.Register(mux, "sleep", func(ctx context.Context, p []int) ([]int, error) {
		time.Sleep(time.Duration(p[0]) * time.Millisecond)
		return p, nil
	})
	return &jsonrpc.Server{Handler: mux, Logger: slog.New(slog.DiscardHandler)}
}

// dialLines returns a newline-framed connection to srv: over tcp, or over
// OS pipes (as stdio).
func dialLines(t *testing.T, srv *jsonrpc.Server, transport string) (io.ReadWriteCloser, *bufio.Reader) {
	t.Helper()
	var c io.ReadWriteCloser
	if transport == "tcp" {
		l, err := srv.Listen("tcp://127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nc, err := net.Dial("tcp", strings.TrimPrefix(l.URL, "tcp://"))
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		c = nc
	} else {
		inR, inW, _ := os.Pipe()
		outR, outW, _ := os.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.ServeConn(ctx, jsonrpc.NewStream(pipePair{inR, outW}, jsonrpc.StreamOptions{}))
		}()
		t.Cleanup(func() { cancel(); <-done })
		c = pipePair{outR, inW}
	}
	t.Cleanup(func() { c.Close(); srv.Shutdown(context.Background()) })
	return c, bufio.NewReader(c)
}

// One rule for the same id twice in one batch, on every transport: both
// requests are served and answered (tcp and stdio answered the second
// -32600 "id already in use"; HTTP and WebSocket answered both).
func TestDuplicateIDsInOneBatchAreBothAnswered(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","id":7,"method":"echo","params":[1]},{"jsonrpc":"2.0","id":7,"method":"echo","params":[2]}]`
	check := func(t *testing.T, reply string) {
		t.Helper()
		var got []struct {
			ID     int
			Result []int
			Error  *jsonrpc.Error
		}
		if err := json.Unmarshal([]byte(reply), &got); err != nil || len(got) != 2 {
			t.Fatalf("reply %s: %v", reply, err)
		}
		sum := 0
		for _, r := range got {
			if r.ID != 7 || r.Error != nil || len(r.Result) != 1 {
				t.Fatalf("reply %s", reply)
			}
			sum += r.Result[0]
		}
		if sum != 3 {
			t.Fatalf("reply %s: not both served", reply)
		}
	}
	for _, transport := range []string{"tcp", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			c, r := dialLines(t, inboundServer(), transport)
			io.WriteString(c, batch+"\n")
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			check(t, line)
		})
	}
	t.Run("http", func(t *testing.T) {
		hs := httptest.NewServer(inboundServer())
		defer hs.Close()
		resp, err := http.Post(hs.URL, "application/json", strings.NewReader(batch))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		check(t, string(b))
	})
	t.Run("ws", func(t *testing.T) {
		hs := httptest.NewServer(inboundServer().WebSocketHandler(jsonrpc.WebSocketOptions{}))
		defer hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		wc, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer wc.CloseNow()
		if err := wc.Write(ctx, websocket.MessageText, []byte(batch)); err != nil {
			t.Fatal(err)
		}
		_, b, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(t, string(b))
	})
}

// The order rule of doc.go ("Concurrency"): requests start in the order
// they arrive, and responses leave in the order their handlers finish. So
// a slow request pipelined before quick ones is answered after them, and
// with MaxConcurrency 1 the responses leave in request order.
func TestPipelinedRepliesFollowTheOrderRule(t *testing.T) {
	for _, transport := range []string{"tcp", "stdio"} {
		for _, one := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/MaxConcurrency1=%v", transport, one), func(t *testing.T) {
				srv := inboundServer()
				if one {
					srv.MaxConcurrency = 1
				}
				c, r := dialLines(t, srv, transport)
				var msgs strings.Builder
				msgs.WriteString(`{"jsonrpc":"2.0","id":0,"method":"sleep","params":[300]}` + "\n")
				for i := 1; i <= 5; i++ {
					fmt.Fprintf(&msgs, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":[%d]}`+"\n", i, i)
				}
				io.WriteString(c, msgs.String()) // one write: pipelined
				var order []int
				for range 6 {
					line, err := r.ReadString('\n')
					if err != nil {
						t.Fatal(err)
					}
					var resp struct{ ID int }
					json.Unmarshal([]byte(line), &resp)
					order = append(order, resp.ID)
				}
				slow := slices.Index(order, 0)
				if one && !slices.Equal(order, []int{0, 1, 2, 3, 4, 5}) {
					t.Fatalf("MaxConcurrency 1: order %v, want request order", order)
				}
				if !one && slow != 5 {
					t.Fatalf("order %v: the slow request's reply held up the quick ones", order)
				}
				sorted := slices.Clone(order)
				slices.Sort(sorted)
				if !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5}) {
					t.Fatalf("order %v: not each answered once", order)
				}
			})
		}
	}
}
