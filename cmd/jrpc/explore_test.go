package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc/internal/browsertest"
)

const browserDir = "../../explorer/testdata/browser"

var exploreRE = regexp.MustCompile(`explorer listening on (http://\S+/)`)

// startExplore runs jrpc explore with args and returns the page's URL.
func startExplore(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := exploreRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("jrpc explore printed no address")
		return ""
	}
}

// TestExploreBrowser drives headless Chromium through jrpc explore relaying
// to a stdio service (--exec: notifications shown live) and to an HTTP one.
func TestExploreBrowser(t *testing.T) {
	browsertest.Need(t, browserDir)
	t.Run("stdio", func(t *testing.T) {
		browsertest.Run(t, browserDir, startExplore(t, "--exec", execCmd, "explore"), "--notifications", "--screenshot", "out/stdio.png")
	})
	t.Run("http", func(t *testing.T) {
		browsertest.Run(t, browserDir, startExplore(t, "explore", urls["http"]))
	})
}

// TestExploreRefusesForeignHost checks that the relay refuses a WebSocket
// handshake whose Host is not a loopback name (DNS rebinding) or whose
// Origin is another site, and accepts the page's own.
func TestExploreRefusesForeignHost(t *testing.T) {
	u := startExplore(t, "explore", urls["tcp"])
	handshake := func(host, origin string) int {
		req, err := http.NewRequest(http.MethodGet, u+"rpc", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	self := strings.TrimSuffix(strings.TrimPrefix(u, "http://"), "/")
	if got := handshake("evil.example", ""); got != http.StatusForbidden {
		t.Errorf("Host evil.example: %d, want 403", got)
	}
	if got := handshake(self, "http://evil.example"); got != http.StatusForbidden {
		t.Errorf("Origin evil.example: %d, want 403", got)
	}
	if got := handshake(self, "http://"+self); got != http.StatusSwitchingProtocols {
		t.Errorf("the page's own origin: %d, want 101", got)
	}
}

var serveExplorerRE = regexp.MustCompile(`explorer on (http://\S+/explorer/)`)

// TestServeExplorerBrowser drives Chromium through the explorer that jrpc
// serve --explorer mounts beside its HTTP listener (same origin).
func TestServeExplorerBrowser(t *testing.T) {
	browsertest.Need(t, browserDir)
	cmd := exec.Command(bin, "serve", "--explorer", "--listen", "http://127.0.0.1:0/")
	errs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errs)
		for sc.Scan() {
			if m := serveExplorerRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		browsertest.Run(t, browserDir, u, "--screenshot", "out/serve.png")
	case <-time.After(10 * time.Second):
		t.Fatal("jrpc serve --explorer printed no explorer address")
	}
}

// TestExploreRelay checks the relay behind the page over every transport
// the CLI reaches: a WebSocket client (as the page is) sends calls to
// jrpc explore and gets the target's answers, a notification gets none.
func TestExploreRelay(t *testing.T) {
	for name, tgt := range targets() {
		t.Run(name, func(t *testing.T) {
			args := []string{"explore", tgt[0]}
			if tgt[0] == "--exec" || tgt[0] == "--framing" {
				args = append(append([]string{}, tgt...), "explore")
			}
			u := startExplore(t, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(u, "http")+"rpc", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			for _, msg := range []string{
				`{"jsonrpc":"2.0","method":"notify_hello","params":[1]}`,
				`{"jsonrpc":"2.0","id":7,"method":"subtract","params":[42,23]}`,
			} {
				if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
					t.Fatal(err)
				}
			}
			_, got, err := c.Read(ctx)
			if err != nil || string(got) != `{"jsonrpc":"2.0","id":7,"result":19}` {
				t.Fatalf("relayed answer %s, %v", got, err)
			}
		})
	}
}
