package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testCert writes a certificate (a CA when parent is nil) and its key as
// PEM files in dir, and returns the certificate, its key and the files.
func testCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, server bool) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: n, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.ExtKeyUsage = true, true, nil
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key, certFile, keyFile
}

// startServeN starts jrpc serve with args and returns the n URLs it listens on, by scheme.
func startServeN(t *testing.T, n int, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	u := map[string]string{}
	var log syncBuffer
	if err := readListening(stderr, n, u, &log); err != nil {
		t.Fatal(err, log.String())
	}
	return u
}

func TestServeTLSAndClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, caKey, caFile, _ := testCert(t, dir, "ca", nil, nil, false)
	_, _, serverCert, serverKey := testCert(t, dir, "server", ca, caKey, true)
	_, _, clientCert, clientKey := testCert(t, dir, "client", ca, caKey, false)
	urls := startServeN(t, 3, "--tls-cert", serverCert, "--tls-key", serverKey, "--client-ca", caFile,
		"-l", "https://127.0.0.1:0/", "-l", "wss://127.0.0.1:0/", "-l", "tls://127.0.0.1:0")
	for scheme, url := range urls {
		t.Run(scheme, func(t *testing.T) {
			r := run(t, "", "call", url, "sum", "[1,2]")
			if r.code != 3 || !strings.Contains(r.stderr, "unknown authority") || !strings.Contains(r.stderr, "--cacert") {
				t.Errorf("without --cacert: exit %d, %s", r.code, r.stderr)
			}
			for _, flag := range []string{"--timeout=10s", "-v", "--raw"} { // the library's client and the raw exchange
				for range 3 {
					r = run(t, "", "--cacert", caFile, "call", flag, url, "sum", "[1,2]")
					if r.code != 3 || !strings.Contains(r.stderr, "client certificate") || !strings.Contains(r.stderr, "--cert") {
						t.Errorf("without --cert (%s): exit %d, %s", flag, r.code, r.stderr)
					}
				}
			}
			expect(t, run(t, "", "--cacert", caFile, "--cert", clientCert, "--key", clientKey, "call", url, "sum", "[1,2]"), 0, "3\n")
			expect(t, run(t, "", "-k", "--cert", clientCert, "--key", clientKey, "call", url, "sum", "[1,2]"), 0, "3\n")
		})
	}
	// TLS URLs without a certificate: a usage hint names the flags.
	cmd := exec.Command(bin, "serve", "-l", "https://127.0.0.1:0/")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "--tls-cert") {
		t.Errorf("https without --tls-cert: %s", out)
	}
}

func TestServeJWTSecret(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "jwt.hex")
	urls := startServeN(t, 2, "--jwt-secret", secret, "-l", "http://127.0.0.1:0/", "-l", "ws://127.0.0.1:0/")
	if b, err := os.ReadFile(secret); err != nil || len(b) != 66 || !strings.HasPrefix(string(b), "0x") {
		t.Fatalf("the secret file was not created like geth's: %q %v", b, err)
	}
	for scheme, url := range urls {
		r := run(t, "", "call", url, "sum", "[1,2]")
		if r.code != 3 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "--jwt-secret") {
			t.Errorf("%s without a token: exit %d, %s", scheme, r.code, r.stderr)
		}
		expect(t, run(t, "", "--jwt-secret", secret, "call", url, "sum", "[1,2]"), 0, "3\n")
		// A batch is one request with one fresh token.
		r = run(t, `[{"jsonrpc":"2.0","method":"sum","params":[1],"id":1},{"jsonrpc":"2.0","method":"sum","params":[2],"id":2}]`, "--jwt-secret", secret, "batch", url, "-")
		if r.code != 0 {
			t.Errorf("%s batch: exit %d, %s", scheme, r.code, r.stderr)
		}
	}
	// A malformed secret stops serve at once, with the file untouched.
	os.WriteFile(secret, []byte("0x1234"), 0o600)
	out, err := exec.Command(bin, "serve", "--jwt-secret", secret, "-l", "http://127.0.0.1:0/").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "64 hex digits") {
		t.Errorf("malformed secret: %v %s", err, out)
	}
	if b, _ := os.ReadFile(secret); string(b) != "0x1234" {
		t.Errorf("the malformed file was rewritten: %q", b)
	}
}

func TestServeOriginAndRateLimit(t *testing.T) {
	urls := startServeN(t, 2, "--allow-origin", "app.example.com", "--rate-limit", "0.2", "-l", "http://127.0.0.1:0/", "-l", "tcp://127.0.0.1:0")
	// One call per 5 s, bursts of 1: HTTP 429, TCP -32005.
	for _, url := range []string{urls["http"], urls["tcp"]} {
		var outs []string
		for range 4 {
			r := run(t, "", "call", url, "sum", "[1]")
			outs = append(outs, strings.TrimSpace(r.stdout+r.stderr))
		}
		if !strings.Contains(strings.Join(outs, "\n"), "-32005") {
			t.Errorf("%s: no call was limited: %q", url, outs)
		}
	}
	r := run(t, "", "-H", "Origin: http://evil.test", "call", urls["http"], "sum", "[1]")
	if r.code == 0 || !strings.Contains(r.stderr, "403") || !strings.Contains(r.stderr, "--allow-origin") {
		t.Errorf("a foreign origin: exit %d, %s", r.code, r.stderr)
	}
}

func TestServeOAuthBearer(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwksFile := filepath.Join(dir, "jwks.json")
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	os.WriteFile(jwksFile, jwks, 0o600)
	const resource, issuer = "https://api.example.test/rpc", "https://auth.example.test"
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	token, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: issuer, Subject: "alice", Audience: jwt.Audience{resource}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()

	urls := startServeN(t, 1, "--auth-jwks", jwksFile, "--auth-issuer", issuer, "--auth-resource", resource, "-l", "http://127.0.0.1:0/rpc")
	url := urls["http"]
	r := run(t, "", "call", url, "sum", "[1,2]")
	if r.code != 3 || !strings.Contains(r.stderr, "401") || !strings.Contains(r.stderr, "--bearer") {
		t.Errorf("without a token: exit %d, %s", r.code, r.stderr)
	}
	expect(t, run(t, "", "--bearer", token, "call", url, "sum", "[1,2]"), 0, "3\n")
	expect(t, runEnv(t, []string{"JRPC_BEARER=" + token}, "", "call", url, "sum", "[1,2]"), 0, "3\n")
	// The metadata document names the resource and the issuer.
	resp, err := http.Get(strings.TrimSuffix(url, "/rpc") + "/.well-known/oauth-protected-resource/rpc")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `{"resource":"` + resource + `","authorization_servers":["` + issuer + `"],"bearer_methods_supported":["header"]}`; string(b) != want {
		t.Errorf("metadata %s, want %s", b, want)
	}
	// --auth-jwks without an issuer is a usage error.
	out, err := exec.Command(bin, "serve", "--auth-jwks", jwksFile, "-l", "http://127.0.0.1:0/").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--auth-issuer") {
		t.Errorf("without --auth-issuer: %v %s", err, out)
	}
}

// With TLS 1.3 a client whose certificate the server wants learns it on its
// first write or read: net/http's HTTP/2 client may report only that its
// connection closed, which still gets the client certificate's hint.
func TestClientCertFailureClosedEarly(t *testing.T) {
	u, _ := url.Parse("https://example.test/")
	tg := &target{url: u}
	for _, err := range []error{
		io.EOF,
		fmt.Errorf("Post %q: %w", u, errors.New("http2: client conn is closed")),
		fmt.Errorf("Post %q: %w", u, errors.New("http2: client conn could not be established")),
	} {
		if got := tg.clientCertFailure(err); got == nil || !strings.Contains(got.Error(), "client certificate") {
			t.Errorf("%v: %v", err, got)
		}
	}
	if got := tg.clientCertFailure(errors.New("connection refused")); got != nil {
		t.Errorf("a refused connection: %v", got)
	}
}
