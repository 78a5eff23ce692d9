package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
