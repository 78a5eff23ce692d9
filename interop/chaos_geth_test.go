package interop

import (
	"bufio"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
)

var chaosListening = regexp.MustCompile(`^chaos: listening on (\S+) for`)

// startChaosCLI runs `jrpc chaos args...` until the test ends; it returns
// the proxy's URL and a func returning its stderr so far (the reports).
func startChaosCLI(t *testing.T, args ...string) (string, func() string) {
	t.Helper()
	cmd := exec.Command(jrpcBinary(t), append([]string{"chaos"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	var mu sync.Mutex
	var log strings.Builder
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := chaosListening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	read := func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
	select {
	case u := <-found:
		return u, read
	case <-time.After(60 * time.Second):
		t.Fatalf("jrpc chaos did not start: %s", read())
	}
	return "", nil
}

// jrpc chaos between go-ethereum's client and go-ethereum's RPC server, on
// HTTP and WebSocket: the second test_echo gets the injected error with its
// id (geth's client matches it to its call), a reordered batch is matched
// element by element, and each fault is reported.
func TestChaosBetweenGethClientAndServer(t *testing.T) {
	srv := gethServer(t)
	for _, tc := range []struct{ name, scheme string }{{"http", "http"}, {"ws", "ws"}} {
		t.Run(tc.name, func(t *testing.T) {
			var hs *httptest.Server
			if tc.scheme == "ws" {
				hs = httptest.NewServer(srv.WebsocketHandler([]string{"*"}))
			} else {
				hs = httptest.NewServer(srv)
			}
			t.Cleanup(hs.Close)
			target := tc.scheme + strings.TrimPrefix(hs.URL, "http") + "/"
			u, reports := startChaosCLI(t, "--listen", tc.scheme+"://127.0.0.1:0/", target,
				"--fault", "method=test_echo,dir=in,nth=2,error=-32042", "--fault", "dir=in,nth=4,reorder")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := rpc.DialContext(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var s string
			if err := c.CallContext(ctx, &s, "test_echo", "one"); err != nil || s != "one" {
				t.Fatalf("first: %q %v", s, err)
			}
			err = c.CallContext(ctx, &s, "test_echo", "two")
			var re rpc.Error
			if !errors.As(err, &re) || re.ErrorCode() != -32042 {
				t.Fatalf("second: %v, want the injected -32042", err)
			}
			if err := c.CallContext(ctx, &s, "test_echo", "three"); err != nil || s != "three" {
				t.Fatalf("third: %q %v", s, err)
			}
			var a, b string
			batch := []rpc.BatchElem{{Method: "test_echo", Args: []any{"a"}, Result: &a}, {Method: "test_echo", Args: []any{"b"}, Result: &b}}
			if err := c.BatchCallContext(ctx, batch); err != nil || batch[0].Error != nil || batch[1].Error != nil || a != "a" || b != "b" {
				t.Fatalf("reordered batch: %v %v %v %q %q", err, batch[0].Error, batch[1].Error, a, b)
			}
			for end := time.Now().Add(10 * time.Second); !strings.Contains(reports(), "chaos: reorder dir=in"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatalf("reports: %s", reports())
				}
			}
			if !strings.Contains(reports(), "chaos: error dir=in method=test_echo") {
				t.Fatalf("reports: %s", reports())
			}
		})
	}
}
