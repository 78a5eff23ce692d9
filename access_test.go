package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// guardedServer is the demo server with the access hooks the tests use:
// subtract is denied, and a message of more than one request is over the
// rate limit. ran counts the subtract handler's runs (it must stay 0).
func guardedServer(ran *atomic.Int64) *jsonrpc.Server {
	mux := demo.Shared{}.NewMux()
	mux.Use(func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method == "subtract" && ran != nil {
				ran.Add(1)
			}
			return next.ServeRPC(ctx, req)
		})
	})
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	srv.Handler = mux
	setGuards(srv)
	return srv
}

// setGuards installs the hooks of guardedServer (also used by the stdio helper).
func setGuards(srv *jsonrpc.Server) {
	srv.Authorize = func(ctx context.Context, method string) error {
		if _, ok := jsonrpc.PeerFromContext(ctx); !ok {
			return errors.New("no peer in the context")
		}
		if method == "subtract" {
			return errors.New("needs scope calc:write")
		}
		return nil
	}
	srv.Admit = func(ctx context.Context, n int) error {
		if n > 3 {
			return &jsonrpc.LimitError{RetryAfter: 1500 * time.Millisecond}
		}
		return nil
	}
}

// lineExchange writes one line and reads one reply line on a stream.
type lineExchange func(t *testing.T, req string) string

func streamExchange(nc net.Conn) lineExchange {
	br := bufio.NewReader(nc)
	return func(t *testing.T, req string) string { return callLine(t, nc, br, req) }
}

func wsExchange(wc *websocket.Conn) lineExchange {
	return func(t *testing.T, req string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := wc.Write(ctx, websocket.MessageText, []byte(req)); err != nil {
			t.Fatal(err)
		}
		_, data, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
}

// guardedTransports serves a guarded server on every transport and returns
// an exchange on each.
func guardedTransports(t *testing.T, ran *atomic.Int64) map[string]lineExchange {
	srv := guardedServer(ran)
	srv.MaxConcurrency = 1 // batch replies in order
	ex := map[string]lineExchange{}
	// Registered first, so that it runs after the clients have closed.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})

	l, err := srv.Listen("http://127.0.0.1:0/rpc")
	if err != nil {
		t.Fatal(err)
	}
	url := l.URL
	ex["http"] = func(t *testing.T, req string) string {
		t.Helper()
		resp, body := post(t, url, "application/json", req)
		if resp.StatusCode != http.StatusOK {
			return resp.Status + " Retry-After:" + resp.Header.Get("Retry-After") + " " + body
		}
		return body
	}
	wl, err := srv.Listen("ws://127.0.0.1:0/ws")
	if err != nil {
		t.Fatal(err)
	}
	ex["ws"] = wsExchange(rawWS(t, wl.URL))
	tl, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(tl.URL, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	ex["tcp"] = streamExchange(nc)
	sock := filepath.Join(t.TempDir(), "g.sock")
	if _, err := srv.Listen("unix://" + sock); err != nil {
		t.Fatal(err)
	}
	uc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { uc.Close() })
	ex["unix"] = streamExchange(uc)
	_, pc := startHelper(t, "guarded", io.Discard)
	ex["stdio"] = streamExchange(pc)
	return ex
}

func TestAuthorizeEveryTransport(t *testing.T) {
	var ran atomic.Int64
	const denied = `{"code":-32003,"message":"forbidden: needs scope calc:write"}`
	cases := []struct{ name, req, want string }{
		{"allowed", `{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1}`, `{"jsonrpc":"2.0","id":1,"result":3}`},
		{"denied", `{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":2}`, `{"jsonrpc":"2.0","id":2,"error":` + denied + `}`},
		{"batch judged per element",
			`[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":3},{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":4},{"jsonrpc":"2.0","method":"subtract","params":[5,2]}]`,
			`[{"jsonrpc":"2.0","id":3,"result":3},{"jsonrpc":"2.0","id":4,"error":` + denied + `}]`},
		{"the connection goes on", `{"jsonrpc":"2.0","method":"sum","params":[2,2],"id":5}`, `{"jsonrpc":"2.0","id":5,"result":4}`},
	}
	for name, ex := range guardedTransports(t, &ran) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				if got := ex(t, c.req); got != c.want {
					t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
				}
			}
		})
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the denied handler ran %d times", n)
	}
}

func TestAdmitEveryTransport(t *testing.T) {
	const over = `[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"sum","params":[2]},{"jsonrpc":"2.0","method":"sum","params":[3],"id":3},{"jsonrpc":"2.0","method":"sum","params":[4],"id":4}]`
	const limited = `{"code":-32005,"message":"limit exceeded"}`
	for name, ex := range guardedTransports(t, nil) {
		t.Run(name, func(t *testing.T) {
			want := `[{"jsonrpc":"2.0","id":1,"error":` + limited + `},{"jsonrpc":"2.0","id":3,"error":` + limited + `},{"jsonrpc":"2.0","id":4,"error":` + limited + `}]`
			if name == "http" {
				want = `429 Too Many Requests Retry-After:2 {"jsonrpc":"2.0","id":null,"error":` + limited + `}`
			}
			if got := ex(t, over); got != want {
				t.Errorf("over the limit:\n got %s\nwant %s", got, want)
			}
			// The connection goes on, and a message within the limit is served.
			const ok = `[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"sum","params":[2],"id":2}]`
			if got := ex(t, ok); got != `[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":2,"result":2}]` {
				t.Errorf("within the limit: got %s", got)
			}
		})
	}
}

func TestHTTPCrossOriginRefused(t *testing.T) {
	var ran atomic.Int64
	srv := guardedServer(&ran)
	srv.AllowedOrigins = []string{"app.example.com", "https://*.trusted.test"}
	url := listenHTTP(t, srv, "/rpc")
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/rpc"), "http://")
	const body = `{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":1}`
	send := func(method, origin string, hdr ...string) (*http.Response, string) {
		req := mustRequest(t, method, url, body)
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return do(t, req)
	}
	for _, c := range []struct {
		origin string
		status int
		cors   bool
	}{
		{"", 200, false},                      // curl, servers
		{"http://" + host, 200, false},        // same origin
		{"http://evil.test", 403, false},      // DNS rebinding / CSRF
		{"null", 403, false},                  // sandboxed page
		{"http://app.example.com", 200, true}, // allowed host pattern
		{"https://a.trusted.test", 200, true}, // allowed scheme://host pattern
		{"http://a.trusted.test", 403, false}, // wrong scheme
		{"http://app.example.com.evil", 403, false},
	} {
		resp, got := send(http.MethodPost, c.origin)
		if resp.StatusCode != c.status {
			t.Errorf("Origin %q: status %d, want %d (%s)", c.origin, resp.StatusCode, c.status, got)
		}
		if acao := resp.Header.Get("Access-Control-Allow-Origin"); (acao != "") != c.cors || (c.cors && acao != c.origin) {
			t.Errorf("Origin %q: Access-Control-Allow-Origin %q", c.origin, acao)
		}
	}
	// The refused requests never reached a handler: only the four
	// accepted ones did.
	if n := ran.Load(); n != 0 {
		t.Errorf("subtract ran %d times; the policy denies it", n)
	}

	// A preflight from an allowed origin is answered; from another, refused.
	resp, _ := send(http.MethodOptions, "http://app.example.com", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type,authorization")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := send(http.MethodOptions, "http://evil.test", "Access-Control-Request-Method", "POST"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("preflight from a refused origin: %d", resp.StatusCode)
	}
	// Without Origin, OPTIONS is still not a JSON-RPC method.
	if resp, _ := send(http.MethodOptions, ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("OPTIONS without Origin: %d", resp.StatusCode)
	}
}

func TestAllowedOriginsSharedWithWebSocket(t *testing.T) {
	srv := newDemoServer()
	srv.AllowedOrigins = []string{"app.example.com"}
	url := listenWS(t, srv)
	dial := func(origin string) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		wc, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err == nil {
			wc.CloseNow()
		}
		return resp, err
	}
	if _, err := dial("http://app.example.com"); err != nil {
		t.Fatalf("allowed origin: %v", err)
	}
	if resp, err := dial("http://evil.test"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("refused origin: %v %v", resp, err)
	}
}

func TestAllowedHosts(t *testing.T) {
	srv := newDemoServer()
	srv.AllowedHosts = []string{"localhost", "127.0.0.1"}
	url := listenHTTP(t, srv, "/rpc")
	const body = `{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}`
	for host, want := range map[string]int{"": 200, "localhost:1234": 200, "LOCALHOST": 200, "attacker.test": 403, "attacker.test:80": 403} {
		req := mustRequest(t, http.MethodPost, url, body)
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		if resp, got := do(t, req); resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d (%s)", host, resp.StatusCode, want, got)
		}
	}
	wurl := listenWS(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, wurl, &websocket.DialOptions{Host: "attacker.test"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("WebSocket with a foreign Host: %v %v", resp, err)
	}
}

// TestCrossOriginHeadersOnce: an allowed cross-origin POST gets its CORS
// headers once, from ServeHTTP and from the Streamable HTTP handler serving
// a plain JSON-RPC client through ServeHTTP (the origin is checked twice
// there; it used to answer "Vary: Origin" twice).
func TestCrossOriginHeadersOnce(t *testing.T) {
	srv := newDemoServer()
	srv.AllowedOrigins = []string{"app.example.com"}
	for name, h := range map[string]http.Handler{
		"ServeHTTP":  srv,
		"Streamable": srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}),
	} {
		ts := httptest.NewServer(h)
		req := mustRequest(t, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":1}`)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Origin", "http://app.example.com")
		resp, body := do(t, req)
		ts.Close()
		if resp.StatusCode != http.StatusOK || body != `{"jsonrpc":"2.0","id":1,"result":3}` {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
		if v, o := resp.Header.Values("Vary"), resp.Header.Values("Access-Control-Allow-Origin"); !slices.Equal(v, []string{"Origin"}) || !slices.Equal(o, []string{"http://app.example.com"}) {
			t.Errorf("%s: Vary %q, Access-Control-Allow-Origin %q; want each once", name, v, o)
		}
	}
}
