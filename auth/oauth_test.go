package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

const issuer = "https://issuer.test"

// oauthKeys are the signing keys of a test authorization server.
type oauthKeys struct {
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	ed   ed25519.PrivateKey
	file string // the JWKS of their public keys
}

func newOAuthKeys(t *testing.T) *oauthKeys {
	t.Helper()
	k := &oauthKeys{}
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if _, k.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &k.rsa.PublicKey, KeyID: "rsa", Algorithm: "RS256", Use: "sig"},
		{Key: &k.ec.PublicKey, KeyID: "ec", Algorithm: "ES256", Use: "sig"},
		{Key: k.ed.Public(), KeyID: "ed", Algorithm: "EdDSA", Use: "sig"},
	}}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	k.file = filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(k.file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// accessClaims are an access token's claims.
type accessClaims struct {
	jwt.Claims
	Scope string `json:"scope,omitempty"`
}

// oauthServer serves newServer behind a ResourceServer on a real HTTP
// server, at /rpc (HTTP) and /ws (WebSocket).
func oauthServer(t *testing.T, keys *oauthKeys) (*auth.ResourceServer, string) {
	t.Helper()
	jwks, err := auth.LoadJWKS(context.Background(), keys.file)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t)
	mux := http.NewServeMux()
	mux.Handle("/rpc", srv)
	mux.Handle("/ws", srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	rs := &auth.ResourceServer{
		Resource:        base + "/rpc",
		Issuer:          issuer,
		Keys:            jwks,
		ScopesSupported: []string{"calc:sum", "calc:all"},
		RequiredScopes:  []string{"calc:sum"},
	}
	ts.Config.Handler = rs.Handler(mux)
	ts.Start()
	t.Cleanup(ts.Close)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return rs, base
}

func TestOAuthResourceServer(t *testing.T) {
	keys := newOAuthKeys(t)
	rs, base := oauthServer(t, keys)
	meta := base + "/.well-known/oauth-protected-resource/rpc"
	if got := rs.MetadataURL(); got != meta {
		t.Fatalf("MetadataURL %s, want %s", got, meta)
	}
	good := func(d time.Duration) accessClaims {
		return accessClaims{Claims: jwt.Claims{Issuer: issuer, Subject: "alice", Audience: jwt.Audience{rs.Resource}, IssuedAt: iat(0), Expiry: iat(d)}, Scope: "calc:sum"}
	}
	with := func(f func(*accessClaims)) accessClaims { c := good(time.Minute); f(&c); return c }
	otherRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	rsaPub, _ := x509.MarshalPKIXPublicKey(&keys.rsa.PublicKey)
	cases := []struct {
		name   string
		token  string
		status int
		code   string
	}{
		{"RS256", sign(t, jose.RS256, keys.rsa, "rsa", good(time.Minute)), 200, ""},
		{"ES256", sign(t, jose.ES256, keys.ec, "ec", good(time.Minute)), 200, ""},
		{"EdDSA", sign(t, jose.EdDSA, keys.ed, "ed", good(time.Minute)), 200, ""},
		{"no kid", sign(t, jose.ES256, keys.ec, "", good(time.Minute)), 200, ""},
		{"expired within the leeway", sign(t, jose.ES256, keys.ec, "ec", good(-10*time.Second)), 200, ""},
		{"expired", sign(t, jose.ES256, keys.ec, "ec", good(-2*time.Minute)), 401, "invalid_token"},
		{"no exp", sign(t, jose.ES256, keys.ec, "ec", with(func(c *accessClaims) { c.Expiry = nil })), 401, "invalid_token"},
		{"wrong issuer", sign(t, jose.ES256, keys.ec, "ec", with(func(c *accessClaims) { c.Issuer = "https://evil.test" })), 401, "invalid_token"},
		{"wrong audience", sign(t, jose.ES256, keys.ec, "ec", with(func(c *accessClaims) { c.Audience = jwt.Audience{"https://other.test"} })), 401, "invalid_token"},
		{"not valid yet", sign(t, jose.ES256, keys.ec, "ec", with(func(c *accessClaims) { c.NotBefore = iat(5 * time.Minute) })), 401, "invalid_token"},
		{"unknown kid", sign(t, jose.ES256, keys.ec, "nope", good(time.Minute)), 401, "invalid_token"},
		{"a key not in the JWKS", sign(t, jose.RS256, otherRSA, "rsa", good(time.Minute)), 401, "invalid_token"},
		{"HS256 with the public key as secret", sign(t, jose.HS256, rsaPub, "rsa", good(time.Minute)), 401, "invalid_token"},
		{"alg none", unsigned(`{"iss":"` + issuer + `","aud":"` + rs.Resource + `","sub":"alice","scope":"calc:sum","exp":9999999999}`), 401, "invalid_token"},
		{"missing scope", sign(t, jose.ES256, keys.ec, "ec", with(func(c *accessClaims) { c.Scope = "calc:other" })), 403, "insufficient_scope"},
		{"no token", "", 401, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			authz := ""
			if c.token != "" {
				authz = "Bearer " + c.token
			}
			status, challenge, body := callHTTP(t, base+"/rpc", authz)
			if status != c.status {
				t.Fatalf("HTTP: status %d, want %d (%s)", status, c.status, body)
			}
			checkChallenge(t, status, challenge, c.code, meta)
			if status == 200 && body != `{"jsonrpc":"2.0","id":1,"result":"oauth:alice"}` {
				t.Errorf("HTTP: %s", body)
			}
			if status == 403 && !strings.Contains(challenge, `scope="calc:sum"`) {
				t.Errorf("403 challenge %q does not name the scope", challenge)
			}
			wsStatus, challenge, _ := dialWS(t, "ws"+strings.TrimPrefix(base, "http")+"/ws", authz)
			if want := map[bool]int{true: 101, false: c.status}[c.status == 200]; wsStatus != want {
				t.Fatalf("WebSocket: status %d, want %d", wsStatus, want)
			}
			checkChallenge(t, wsStatus, challenge, c.code, meta)
		})
	}
	// The challenge without credentials, exactly (RFC 9728 §5.1).
	if _, challenge, _ := callHTTP(t, base+"/rpc", ""); challenge != `Bearer resource_metadata="`+meta+`"` {
		t.Errorf("challenge %q", challenge)
	}
	// A token in the query string is refused.
	tok := sign(t, jose.ES256, keys.ec, "ec", good(time.Minute))
	if status, challenge, _ := callHTTP(t, base+"/rpc?access_token="+tok, ""); status != 400 || !strings.Contains(challenge, `error="invalid_request"`) {
		t.Errorf("token in the query: %d %q", status, challenge)
	}
}

func TestOAuthMetadataDocument(t *testing.T) {
	rs, base := oauthServer(t, newOAuthKeys(t))
	for _, path := range []string{"/.well-known/oauth-protected-resource/rpc", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"resource":"` + rs.Resource + `","authorization_servers":["https://issuer.test"],"scopes_supported":["calc:sum","calc:all"],"bearer_methods_supported":["header"]}`
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || string(b) != want {
			t.Errorf("%s: %d %s\n%s\nwant %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
		}
	}
}

func TestJWKSRejectsPrivateKeys(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k, KeyID: "x"}}})
	if _, err := auth.ParseJWKS(b); err == nil {
		t.Fatal("a JWKS with a private key was accepted")
	}
	if _, err := auth.ParseJWKS([]byte(`{"keys":[]}`)); err == nil {
		t.Fatal("an empty JWKS was accepted")
	}
}

func TestJWKSFromURL(t *testing.T) {
	keys := newOAuthKeys(t)
	data, _ := os.ReadFile(keys.file)
	fetches := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	}))
	defer ts.Close()
	jwks, err := auth.LoadJWKS(context.Background(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	rs := &auth.ResourceServer{Resource: "https://api.test/rpc", Issuer: issuer, Keys: jwks}
	tok := sign(t, jose.EdDSA, keys.ed, "ed", accessClaims{Claims: jwt.Claims{Issuer: issuer, Subject: "bob", Audience: jwt.Audience{rs.Resource}, Expiry: iat(time.Minute)}})
	req := httptest.NewRequest(http.MethodPost, "/rpc", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if p, err := rs.Authenticate(req); err != nil || p.Subject != "bob" {
		t.Fatalf("%+v %v", p, err)
	}
	// An unknown key id within the minute does not make it fetch again.
	req.Header.Set("Authorization", "Bearer "+sign(t, jose.EdDSA, keys.ed, "other", accessClaims{Claims: jwt.Claims{Issuer: issuer, Audience: jwt.Audience{rs.Resource}, Expiry: iat(time.Minute)}}))
	if _, err := rs.Authenticate(req); err == nil {
		t.Fatal("an unknown kid was accepted")
	}
	if fetches != 1 {
		t.Fatalf("%d fetches", fetches)
	}
}
