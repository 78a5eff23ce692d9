package jsonrpc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// An idle connection's read goroutine is replaced by a fresh one after a
// while (the read is interrupted with a deadline). Nothing may be lost: a
// message trickled across the replacement is read whole, in either framing.
func TestIdleReaderRefreshLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the idle refresh")
	}
	for _, tc := range []struct {
		name    string
		framing jsonrpc.Framing
		frame   func(string) string
		read    func(*bufio.Reader) (string, error)
	}{
		{"line", jsonrpc.FramingLine, func(m string) string { return m + "\n" }, func(br *bufio.Reader) (string, error) {
			s, err := br.ReadString('\n')
			return strings.TrimSpace(s), err
		}},
		{"header", jsonrpc.FramingHeader, func(m string) string {
			return "Content-Length: " + itoa(len(m)) + "\r\n\r\n" + m
		}, readHeaderFramed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(l, jsonrpc.ListenFraming(tc.framing))
			defer srv.Shutdown(context.Background())
			nc, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(20 * time.Second))
			br := bufio.NewReader(nc)
			call := func(id string) {
				t.Helper()
				want := `{"jsonrpc":"2.0","id":` + id + `,"result":[` + id + `]}`
				if got, err := tc.read(br); err != nil || got != want {
					t.Fatalf("got %q %v, want %s", got, err, want)
				}
			}
			io.WriteString(nc, tc.frame(`{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}`))
			call("1")
			time.Sleep(2500 * time.Millisecond) // idle: the reader is replaced
			io.WriteString(nc, tc.frame(`{"jsonrpc":"2.0","method":"echo","params":[2],"id":2}`))
			call("2")
			// Half a message, a pause past the refresh, then the rest.
			msg := tc.frame(`{"jsonrpc":"2.0","method":"echo","params":[3],"id":3}`)
			io.WriteString(nc, msg[:len(msg)/2])
			time.Sleep(2500 * time.Millisecond)
			io.WriteString(nc, msg[len(msg)/2:])
			call("3")
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func readHeaderFramed(br *bufio.Reader) (string, error) {
	n := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n = 0
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
		}
	}
	buf := make([]byte, n)
	_, err := io.ReadFull(br, buf)
	return string(buf), err
}

// A slow handler served on the read goroutine does not hold up the next
// request: reading moves on within a few milliseconds.
func TestSlowInlineHandlerDoesNotBlockTheNext(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	defer srv.Shutdown(context.Background())
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, `{"jsonrpc":"2.0","method":"sleep","params":{"ms":3000},"id":"slow"}`+"\n")
	time.Sleep(50 * time.Millisecond) // the sleep is being served inline by now
	start := time.Now()
	io.WriteString(nc, `{"jsonrpc":"2.0","method":"echo","params":[1],"id":"fast"}`+"\n")
	line, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"id":"fast"`) {
		t.Fatalf("first reply %s, want the fast one", line)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the fast request waited %v behind the slow one", d)
	}
}
