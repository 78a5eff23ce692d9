package auth_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

// exchange sends one message and returns the reply.
type exchange func(t *testing.T, msg string) string

// policyTransports returns, for each transport, an exchange made as a
// caller allowed sum but not subtract: an OAuth token with scope calc:sum
// over HTTP and WebSocket, the client certificate client-1 over tls://.
func policyTransports(t *testing.T, srv *jsonrpc.Server, keys *oauthKeys, limiter *auth.RateLimiter) map[string]exchange {
	t.Helper()
	p := newPKI(t)
	jwks, err := auth.LoadJWKS(context.Background(), keys.file)
	if err != nil {
		t.Fatal(err)
	}
	rs := &auth.ResourceServer{Resource: "https://api.test/rpc", Issuer: issuer, Keys: jwks}
	if limiter != nil {
		srv.Admit = limiter.Admit
	}
	urls := listenAll(t, srv, jsonrpc.ListenHTTPMiddleware(rs.Middleware()), "http://127.0.0.1:0/rpc", "ws://127.0.0.1:0/ws")
	cfg, err := auth.ServerTLS(p.serverCert, p.serverKey, p.ca.file)
	if err != nil {
		t.Fatal(err)
	}
	tlsURL := listenAll(t, srv, jsonrpc.ListenTLS(cfg), "tls://127.0.0.1:0")[0]
	token := sign(t, jose.ES256, keys.ec, "ec", accessClaims{Claims: jwt.Claims{Issuer: issuer, Subject: "alice", Audience: jwt.Audience{rs.Resource}, Expiry: iat(time.Hour)}, Scope: "calc:sum"})

	ex := map[string]exchange{}
	ex["http"] = func(t *testing.T, msg string) string {
		req, _ := http.NewRequest(http.MethodPost, urls[0], strings.NewReader(msg))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		bufio.NewReader(resp.Body).WriteTo(&b)
		if resp.StatusCode != 200 {
			return resp.Status + " Retry-After:" + resp.Header.Get("Retry-After")
		}
		return b.String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	wc, _, err := websocket.Dial(ctx, urls[1], &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wc.CloseNow() })
	ex["ws"] = func(t *testing.T, msg string) string {
		if err := wc.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, data, err := wc.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	tc, err := tls.Dial("tcp", strings.TrimPrefix(tlsURL, "tls://"), clientTLS(t, p.ca.file, p.clientCert, p.clientKey))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tc.Close() })
	br := bufio.NewReader(tc)
	ex["tls"] = func(t *testing.T, msg string) string {
		tc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := tc.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
	return ex
}

func TestPolicyEveryTransport(t *testing.T) {
	srv := newServer(t)
	srv.MaxConcurrency = 1 // batch replies in order
	const denied = `{"code":-32003,"message":"forbidden: subtract needs scope calc:all"}`
	for name, ex := range policyTransports(t, srv, newOAuthKeys(t), nil) {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct{ req, want string }{
				{`{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1}`, `{"jsonrpc":"2.0","id":1,"result":3}`},
				{`{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":2}`, `{"jsonrpc":"2.0","id":2,"error":` + denied + `}`},
				{`[{"jsonrpc":"2.0","method":"subtract","params":[5,2],"id":3},{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":4}]`,
					`[{"jsonrpc":"2.0","id":3,"error":` + denied + `},{"jsonrpc":"2.0","id":4,"result":3}]`},
			} {
				if got := ex(t, c.req); got != c.want {
					t.Errorf("%s\n got %s\nwant %s", c.req, got, c.want)
				}
			}
			// Discovery lists what the caller may call, and only that.
			var reply struct {
				Result struct {
					Methods []struct{ Name string }
				}
			}
			if err := json.Unmarshal([]byte(ex(t, `{"jsonrpc":"2.0","method":"rpc.discover","id":9}`)), &reply); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range reply.Result.Methods {
				names = append(names, m.Name)
			}
			if got := strings.Join(names, " "); got != "rpc.discover sum whoami" {
				t.Errorf("rpc.discover lists %q", got)
			}
		})
	}
}

func TestPolicyAnonymousAndPatterns(t *testing.T) {
	pol := auth.NewPolicy(map[string]auth.Rule{"eth_*": auth.Authenticated(), "eth_send*": auth.Scope("write"), "ping": auth.Anyone()})
	anon := context.Background()
	alice := auth.NewContext(anon, auth.Principal{Subject: "alice", Scopes: []string{"read"}})
	for _, c := range []struct {
		ctx    context.Context
		method string
		ok     bool
	}{
		{anon, "ping", true}, {anon, "eth_call", false}, {alice, "eth_call", true},
		{alice, "eth_sendTransaction", false}, {alice, "other", false}, {anon, "other", false},
	} {
		if err := pol.Authorize(c.ctx, c.method); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.method, err)
		}
	}
	def := auth.Anyone()
	pol.Default = &def
	if err := pol.Authorize(anon, "other"); err != nil {
		t.Errorf("with a default: %v", err)
	}
	var zero auth.Policy
	if err := zero.Authorize(alice, "ping"); err == nil {
		t.Error("the zero Policy allowed a call")
	}
}

func TestRateLimitBurstAndRecovery(t *testing.T) {
	srv := newServer(t)
	srv.MaxConcurrency = 1
	// A token every 500 ms: the burst and the call over it must fall
	// within one token's time even on a loaded machine (at 50 ms, four
	// calls with JWT checks once took longer, and the fourth was served).
	limiter := auth.NewRateLimiter(2, 3)
	const limited = `{"code":-32005,"message":"limit exceeded"}`
	for name, ex := range policyTransports(t, srv, newOAuthKeys(t), limiter) {
		t.Run(name, func(t *testing.T) {
			// A batch over the burst is refused whole, and costs nothing.
			batch := `[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"sum","params":[2]},{"jsonrpc":"2.0","method":"sum","params":[3],"id":3},{"jsonrpc":"2.0","method":"sum","params":[4],"id":4}]`
			want := `[{"jsonrpc":"2.0","id":1,"error":` + limited + `},{"jsonrpc":"2.0","id":3,"error":` + limited + `},{"jsonrpc":"2.0","id":4,"error":` + limited + `}]`
			if name == "http" {
				want = "429 Too Many Requests Retry-After:2" // 4 tokens at 2 a second
			}
			if got := ex(t, batch); got != want {
				t.Fatalf("batch of 4:\n got %s\nwant %s", got, want)
			}
			// The burst passes, the next call is refused...
			for i := range 3 {
				if got := ex(t, `{"jsonrpc":"2.0","method":"sum","params":[1],"id":1}`); got != `{"jsonrpc":"2.0","id":1,"result":1}` {
					t.Fatalf("call %d of the burst: %s", i, got)
				}
			}
			want = `{"jsonrpc":"2.0","id":2,"error":` + limited + `}`
			if name == "http" {
				want = "429 Too Many Requests Retry-After:1"
			}
			if got := ex(t, `{"jsonrpc":"2.0","method":"sum","params":[1],"id":2}`); got != want {
				t.Fatalf("over the burst:\n got %s\nwant %s", got, want)
			}
			// ...and the bucket refills: on the same connection, the
			// client is served again.
			time.Sleep(600 * time.Millisecond)
			if got := ex(t, `{"jsonrpc":"2.0","method":"sum","params":[2],"id":3}`); got != `{"jsonrpc":"2.0","id":3,"result":2}` {
				t.Fatalf("after the refill: %s", got)
			}
			time.Sleep(1600 * time.Millisecond) // full again for the next transport's client
		})
	}
}

func TestRateLimitKeys(t *testing.T) {
	l := auth.NewRateLimiter(1, 1)
	l.MaxClients = 2
	alice := auth.NewContext(context.Background(), auth.Principal{Method: "oauth", Subject: "alice"})
	bob := auth.NewContext(context.Background(), auth.Principal{Method: "oauth", Subject: "bob"})
	if l.Admit(alice, 1) != nil || l.Admit(bob, 1) != nil {
		t.Fatal("first calls refused")
	}
	if l.Admit(alice, 1) == nil {
		t.Fatal("alice's second call admitted")
	}
	// Past MaxClients, new clients share one bucket.
	carol := auth.NewContext(context.Background(), auth.Principal{Subject: "carol"})
	dave := auth.NewContext(context.Background(), auth.Principal{Subject: "dave"})
	if l.Admit(carol, 1) != nil {
		t.Fatal("carol refused")
	}
	if l.Admit(dave, 1) == nil {
		t.Fatal("dave did not share the overflow bucket")
	}
	var le *jsonrpc.LimitError
	if err := l.Admit(alice, 5); err == nil || !errorsAs(err, &le) || le.RetryAfter != 5*time.Second {
		t.Fatalf("a batch over the burst: %v", err)
	}
}
