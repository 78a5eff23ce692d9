package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
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
	demo.NeedBrowser(t, browserDir)
	// --jrpc: the page's "copy as jrpc" (and curl, over HTTP) is run and
	// gives the answer the page showed.
	t.Run("stdio", func(t *testing.T) {
		demo.BrowserTest(t, browserDir, startExplore(t, "--exec", execCmd, "explore"), "--notifications", "--screenshot", "out/stdio.png", "--jrpc", bin)
	})
	t.Run("http", func(t *testing.T) {
		demo.BrowserTest(t, browserDir, startExplore(t, "explore", urls["http"]), "--jrpc", bin)
	})
	t.Run("tcp", func(t *testing.T) {
		demo.BrowserTest(t, browserDir, startExplore(t, "explore", urls["tcp"]), "--jrpc", bin)
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
	demo.NeedBrowser(t, browserDir)
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
		demo.BrowserTest(t, browserDir, u, "--screenshot", "out/serve.png")
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

// withoutDiscover is h as a service that does not describe itself, as geth
// and most MCP servers.
func withoutDiscover(h jsonrpc.Handler) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == "rpc.discover" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return h.ServeRPC(ctx, req)
	})
}

// TestExploreWithoutDiscover drives Chromium through jrpc explore relaying
// to a service without rpc.discover: the page says so and calls methods by
// name (served under the path of a --listen URL); with --schema FILE it
// lists the document's methods and calls them; a target that cannot be
// reached is explained on the page.
func TestExploreWithoutDiscover(t *testing.T) {
	demo.NeedBrowser(t, browserDir)
	blind := httptest.NewServer(&jsonrpc.Server{Handler: withoutDiscover(demo.Shared{}.NewMux())})
	defer blind.Close()
	t.Run("by-name", func(t *testing.T) {
		u := startExplore(t, "explore", "--listen", "http://127.0.0.1:0/ui/", blind.URL+"/")
		if !strings.HasSuffix(u, "/ui/") {
			t.Fatalf("the page is at %s, want the --listen URL's path /ui/", u)
		}
		demo.BrowserTest(t, browserDir, u, "--mode", "free", "--banner", "rpc.discover: -32601", "--screenshot", "out/explore-by-name.png")
	})
	t.Run("schema", func(t *testing.T) {
		doc := filepath.Join(t.TempDir(), "api.json")
		r := run(t, "", "discover", urls["tcp"])
		expect(t, r, 0, "")
		if err := os.WriteFile(doc, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		demo.BrowserTest(t, browserDir, startExplore(t, "explore", "--schema", doc, blind.URL+"/"))
	})
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gone := "tcp://" + ln.Addr().String()
		ln.Close()
		demo.BrowserTest(t, browserDir, startExplore(t, "explore", gone), "--mode", "unreachable", "--banner", "cannot reach the target.*refused")
	})
}

// TestExploreSchemaAndListen checks --schema from an http URL (the page's
// config carries the document) and the usage errors of --schema and
// --listen (exit 2, saying why).
func TestExploreSchemaAndListen(t *testing.T) {
	r := run(t, "", "discover", urls["tcp"])
	expect(t, r, 0, "")
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/api.json" {
			http.NotFound(w, req)
			return
		}
		w.Write([]byte(r.stdout))
	}))
	defer docs.Close()
	u := startExplore(t, "explore", "--listen", "127.0.0.1:0", "--schema", docs.URL+"/api.json", urls["tcp"])
	resp, err := http.Get(u + "config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Document struct{ Methods []struct{ Name string } }
	}
	err = json.NewDecoder(resp.Body).Decode(&cfg)
	resp.Body.Close()
	if err != nil || len(cfg.Document.Methods) < 10 {
		t.Fatalf("config.json: %v, %d methods in the document", err, len(cfg.Document.Methods))
	}
	notDoc := filepath.Join(t.TempDir(), "notdoc.json")
	os.WriteFile(notDoc, []byte(`{"methods": 3}`), 0o600)
	for _, c := range []struct {
		args []string
		say  string
	}{
		{[]string{"--schema", notDoc}, "is not an OpenRPC document"},
		{[]string{"--schema", filepath.Join(t.TempDir(), "missing.json")}, "cannot read the OpenRPC document"},
		{[]string{"--schema", docs.URL + "/nope.json"}, "404"},
		{[]string{"--listen", "https://127.0.0.1:0/"}, "served over plain HTTP"},
		{[]string{"--listen", "ws://127.0.0.1:0/"}, "served over plain HTTP"},
	} {
		r := run(t, "", append(append([]string{"explore"}, c.args...), urls["tcp"])...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.say) {
			t.Errorf("explore %v: exit %d, stderr %q; want exit %d saying %q", c.args, r.code, r.stderr, exitUsage, c.say)
		}
	}
}
