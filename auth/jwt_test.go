package auth_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// sign returns a JWT with the claims, signed with alg and key.
func sign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsigned returns a token with alg "none".
func unsigned(claims string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(claims)) + "."
}

func iat(d time.Duration) *jwt.NumericDate { return jwt.NewNumericDate(time.Now().Add(d)) }

// callHTTP posts a whoami call with the Authorization header (none if
// empty) and returns the status, the WWW-Authenticate header and the body.
func callHTTP(t *testing.T, url, authz string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","method":"whoami","id":1}`))
	req.Header.Set("Content-Type", "application/json")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), strings.TrimSpace(string(b))
}

// dialWS opens a WebSocket with the Authorization header and calls whoami.
func dialWS(t *testing.T, url, authz string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := http.Header{}
	if authz != "" {
		h.Set("Authorization", authz)
	}
	wc, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp == nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), ""
	}
	defer wc.CloseNow()
	wc.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"whoami","id":1}`))
	_, data, err := wc.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wc.Close(websocket.StatusNormalClosure, "")
	return http.StatusSwitchingProtocols, "", string(data)
}

func TestSharedSecretJWT(t *testing.T) {
	srv := newServer(t)
	urls := listenAll(t, srv, jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(testSecret))),
		"http://127.0.0.1:0/rpc", "ws://127.0.0.1:0/ws")
	valid := sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(0)})
	cases := []struct {
		name, authz string
		status      int
		errCode     string
	}{
		{"valid", "Bearer " + valid, 200, ""},
		{"scheme case-insensitive, extra spaces", "bearer   " + valid, 200, ""},
		{"iat 50 s ago", "Bearer " + sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(-50 * time.Second)}), 200, ""},
		{"expired", "Bearer " + sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(0), Expiry: iat(-time.Second)}), 401, "invalid_token"},
		{"stale iat", "Bearer " + sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(-61 * time.Second)}), 401, "invalid_token"},
		{"future iat", "Bearer " + sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(2 * time.Minute)}), 401, "invalid_token"},
		{"missing iat", "Bearer " + sign(t, jose.HS256, testSecret, "", jwt.Claims{Subject: "x"}), 401, "invalid_token"},
		{"alg none", "Bearer " + unsigned(`{"iat":`+jsonNow()+`}`), 401, "invalid_token"},
		{"HS512", "Bearer " + sign(t, jose.HS512, append(testSecret, testSecret...), "", jwt.Claims{IssuedAt: iat(0)}), 401, "invalid_token"},
		{"wrong secret", "Bearer " + sign(t, jose.HS256, []byte("ffffffffffffffffffffffffffffffff"), "", jwt.Claims{IssuedAt: iat(0)}), 401, "invalid_token"},
		{"no token", "", 401, ""},
		{"another scheme", "Basic dXNlcjpwYXNz", 401, ""},
		{"empty bearer", "Bearer ", 400, "invalid_request"},
		{"garbage", "Bearer not a token", 400, "invalid_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, challenge, body := callHTTP(t, urls[0], c.authz)
			if status != c.status {
				t.Fatalf("HTTP: status %d, want %d (%s)", status, c.status, body)
			}
			checkChallenge(t, status, challenge, c.errCode, "")
			if status == 200 && body != `{"jsonrpc":"2.0","id":1,"result":"jwt:jwt-secret"}` {
				t.Errorf("HTTP: %s", body)
			}
			wsStatus, challenge, body := dialWS(t, urls[1], c.authz)
			if want := map[bool]int{true: 101, false: c.status}[c.status == 200]; wsStatus != want {
				t.Fatalf("WebSocket: status %d, want %d", wsStatus, want)
			}
			checkChallenge(t, wsStatus, challenge, c.errCode, "")
			if wsStatus == 101 && body != `{"jsonrpc":"2.0","id":1,"result":"jwt:jwt-secret"}` {
				t.Errorf("WebSocket: %s", body)
			}
		})
	}
	// A token in the query string is refused, even a valid one.
	status, challenge, _ := callHTTP(t, urls[0]+"?access_token="+valid, "")
	if status != 400 || !strings.Contains(challenge, `error="invalid_request"`) {
		t.Errorf("token in the query: %d %q", status, challenge)
	}
}

// checkChallenge checks the WWW-Authenticate header of a refusal: every
// 401 has one, naming the error code when there is one.
func checkChallenge(t *testing.T, status int, challenge, code, metadata string) {
	t.Helper()
	if status < 400 {
		return
	}
	if status == 401 && !strings.HasPrefix(challenge, "Bearer") {
		t.Errorf("a 401 without a Bearer challenge: %q", challenge)
	}
	if code != "" && !strings.Contains(challenge, `error="`+code+`"`) {
		t.Errorf("challenge %q lacks error=%q", challenge, code)
	}
	if code == "" && strings.Contains(challenge, "error=") {
		t.Errorf("challenge %q names an error for a request without credentials", challenge)
	}
	if metadata != "" && !strings.Contains(challenge, `resource_metadata="`+metadata+`"`) {
		t.Errorf("challenge %q lacks resource_metadata %q", challenge, metadata)
	}
}

func jsonNow() string { return strconv.FormatInt(time.Now().Unix(), 10) }

func TestSharedSecretDriftBounds(t *testing.T) {
	now := time.Now().Truncate(time.Second) // iat has whole seconds
	tok := sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: jwt.NewNumericDate(now)})
	for d, ok := range map[time.Duration]bool{0: true, 60 * time.Second: true, -60 * time.Second: true, 62 * time.Second: false, -62 * time.Second: false} {
		_, err := auth.VerifyShared(tok, testSecret, now.Add(d))
		if (err == nil) != ok {
			t.Errorf("checked %v after iat: %v", d, err)
		}
	}
}

func TestObtainSecret(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jwt.hex")
	secret, created, err := auth.ObtainSecret(path)
	if err != nil || !created || len(secret) != 32 {
		t.Fatalf("create: %x %v %v", secret, created, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "0x"+hex.EncodeToString(secret) {
		t.Fatalf("file holds %q", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	again, created, err := auth.ObtainSecret(path)
	if err != nil || created || string(again) != string(secret) {
		t.Fatalf("load: %x %v %v", again, created, err)
	}
	// geth's own format without 0x, with a newline, loads too.
	os.WriteFile(path, []byte(hex.EncodeToString(secret)+"\n"), 0o600)
	if again, _, err := auth.ObtainSecret(path); err != nil || string(again) != string(secret) {
		t.Fatalf("plain hex: %v", err)
	}
	// A malformed file is an error and is left alone.
	for _, bad := range []string{"0x1234", "zz" + strings.Repeat("0", 62), ""} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, _, err := auth.ObtainSecret(path); err == nil {
			t.Errorf("%q: no error", bad)
		}
		if data, _ := os.ReadFile(path); string(data) != bad {
			t.Errorf("%q was rewritten to %q", bad, data)
		}
	}
	if _, _, err := auth.ObtainSecret(filepath.Join(dir, "missing", "jwt.hex")); err == nil || errors.Is(err, os.ErrExist) {
		t.Errorf("in a missing directory: %v", err)
	}
}

func TestBearerTransportMintsPerRequest(t *testing.T) {
	srv := newServer(t)
	urls := listenAll(t, srv, jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(testSecret))),
		"http://127.0.0.1:0/rpc", "ws://127.0.0.1:0/ws")
	minted := 0
	hc := &http.Client{Transport: auth.BearerTransport(nil, func() (string, error) {
		minted++
		return auth.NewSharedSecretToken(testSecret)
	})}
	ctx := context.Background()
	for _, url := range urls {
		c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			var who string
			if err := c.Call(ctx, "whoami", nil, &who); err != nil || who != "jwt:jwt-secret" {
				t.Fatalf("%s: %q %v", url, who, err)
			}
		}
		c.Close()
	}
	// Two HTTP calls, one WebSocket handshake.
	if minted != 3 {
		t.Fatalf("minted %d tokens, want 3", minted)
	}
}

func TestRefusalsLogNoToken(t *testing.T) {
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	srv := newServer(t)
	srv.Logger = logger
	urls := listenAll(t, srv, jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(testSecret), auth.WithLogger(logger))), "http://127.0.0.1:0/rpc")
	bad := sign(t, jose.HS256, []byte("ffffffffffffffffffffffffffffffff"), "", jwt.Claims{IssuedAt: iat(0)})
	stale := sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(-time.Hour)})
	for _, tok := range []string{bad, stale} {
		if status, _, _ := callHTTP(t, urls[0], "Bearer "+tok); status != 401 {
			t.Fatalf("status %d", status)
		}
	}
	// A denied call is logged with its method, not the caller's token.
	good := sign(t, jose.HS256, testSecret, "", jwt.Claims{IssuedAt: iat(0)})
	req, _ := http.NewRequest(http.MethodPost, urls[0], strings.NewReader(`{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+good)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out := logs.String()
	if !strings.Contains(out, "request refused") || !strings.Contains(out, "call denied") || !strings.Contains(out, "method=subtract") {
		t.Fatalf("logs lack the refusals:\n%s", out)
	}
	for _, tok := range []string{bad, stale, good} {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		if strings.Contains(out, sig) || strings.Contains(out, tok[:20]) {
			t.Fatalf("a token is in the logs:\n%s", out)
		}
	}
}
