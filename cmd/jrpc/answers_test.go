package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// pythonErrorPage is what python's http.server writes to a request line it
// cannot parse (taken as HTTP/0.9: no status line, no headers), before it
// closes the connection.
const pythonErrorPage = `<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 400</p>
    </body>
</html>
`

// fakeServer serves every connection of l with serve until the test ends.
func fakeServer(t *testing.T, l net.Listener, serve func(c net.Conn)) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				serve(c)
			}()
		}
	}()
}

func listenTCP(t *testing.T, serve func(c net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fakeServer(t, l, serve)
	return "tcp://" + l.Addr().String()
}

// TestNonJSONRPCAnswerNamed: a stream target that answers with anything but
// JSON-RPC (an HTML page, a greeting, an error line) is named for what it
// said, exit 3, whether it then closes or keeps the connection open, never
// "closed before the answer came ... may have crashed" (issue 39, point 1).
func TestNonJSONRPCAnswerNamed(t *testing.T) {
	htmlThenClose := func(c net.Conn) {
		bufio.NewReader(c).ReadString('\n')
		c.Write([]byte(pythonErrorPage))
	}
	sock := filepath.Join(t.TempDir(), "html.sock")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	fakeServer(t, ul, htmlThenClose)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"an HTML page, then closed", []string{listenTCP(t, htmlThenClose)}, `answered with an HTML page ("Error response")`},
		{"an HTML page over unix", []string{"unix://" + sock}, `answered with an HTML page ("Error response")`},
		{"an HTML page with -v", []string{"-v", listenTCP(t, htmlThenClose)}, `answered with an HTML page`},
		{"a greeting (ssh)", []string{listenTCP(t, func(c net.Conn) {
			c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			bufio.NewReader(c).ReadString('\n')
			c.Write([]byte("Invalid SSH identification string.\r\n"))
		})}, `answered "SSH-2.0-OpenSSH_9.6"`},
		{"an error line, kept open (redis)", []string{"--timeout", "2s", listenTCP(t, func(c net.Conn) {
			r := bufio.NewReader(c)
			for {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				c.Write([]byte("-ERR unknown command '{\"jsonrpc\":\"2.0\"'\r\n"))
			}
		})}, `answered "-ERR unknown command`},
	}
	// HTTP: a web server's page for any POST; WebSocket: a server that
	// answers each message with text that is not JSON.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body></body></html>")
	}))
	t.Cleanup(web.Close)
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			if _, _, err := c.Read(r.Context()); err != nil {
				return
			}
			c.Write(r.Context(), websocket.MessageText, []byte("hello, who is there?"))
		}
	}))
	t.Cleanup(chat.Close)
	cases = append(cases, []struct {
		name string
		args []string
		want string
	}{
		{"an HTML page over HTTP", []string{web.URL + "/"}, `answered with an HTML page ("Welcome to nginx!")`},
		{"an HTML page over HTTP with -v", []string{"-v", web.URL + "/"}, `answered with an HTML page ("Welcome to nginx!")`},
		{"text over WebSocket", []string{"--timeout", "3s", "ws" + strings.TrimPrefix(chat.URL, "http") + "/"}, `answered "hello, who is there?"`},
	}...)
	if py, err := exec.LookPath("python3"); err == nil {
		// The server of the report itself: python's http.server.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		srv := exec.Command(py, "-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1", "--directory", t.TempDir())
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		waitListening(t, "127.0.0.1:"+strconv.Itoa(port))
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"python3 -m http.server", []string{"tcp://127.0.0.1:" + strconv.Itoa(port)}, `answered with an HTML page ("Error response")`})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", append(append([]string{"call"}, c.args...), "sum", "[1,2]")...)
			if r.code != exitTransport || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "not speak JSON-RPC") {
				t.Fatalf("exit %d, stderr %q; want 3 and %q", r.code, r.stderr, c.want)
			}
			if strings.Contains(r.stderr, "crashed") || strings.Contains(r.stderr, "closed before") {
				t.Fatalf("stderr %q guesses a crash", r.stderr)
			}
		})
	}
}

// waitListening waits (bounded) until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}
