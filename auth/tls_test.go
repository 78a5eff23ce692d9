package auth_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

// pki is a test PKI: a CA with a server and a client certificate, and
// another CA with a client certificate of its own.
type pki struct {
	ca, otherCA               *testCA
	serverCert, serverKey     string
	clientCert, clientKey     string
	strangerCert, strangerKey string
}

func newPKI(t *testing.T) *pki {
	p := &pki{ca: newCA(t, "test-ca"), otherCA: newCA(t, "other-ca")}
	p.serverCert, p.serverKey = p.ca.issue(t, "server", true, time.Now().Add(time.Hour))
	p.clientCert, p.clientKey = p.ca.issue(t, "client-1", false, time.Now().Add(time.Hour))
	p.strangerCert, p.strangerKey = p.otherCA.issue(t, "stranger", false, time.Now().Add(time.Hour))
	return p
}

func clientTLS(t *testing.T, ca, cert, key string) *tls.Config {
	t.Helper()
	cfg, err := auth.ClientTLS(ca, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func whoami(ctx context.Context, url string, cfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithTLSConfig(cfg))
	if err != nil {
		return "", err
	}
	defer c.Close()
	var who string
	err = c.Call(ctx, "whoami", nil, &who)
	return who, err
}

func TestTLSListenersAndMutualTLS(t *testing.T) {
	p := newPKI(t)
	srv := newServer(t)
	cfg, err := auth.ServerTLS(p.serverCert, p.serverKey, p.ca.file)
	if err != nil {
		t.Fatal(err)
	}
	urls := listenAll(t, srv, jsonrpc.ListenTLS(cfg), "https://127.0.0.1:0/rpc", "wss://127.0.0.1:0/ws", "tls://127.0.0.1:0")
	ctx := context.Background()
	for _, url := range urls {
		t.Run(strings.SplitN(url, ":", 2)[0], func(t *testing.T) {
			// The server's CA is unknown: the handshake fails and says why.
			_, err := whoami(ctx, url, clientTLS(t, "", p.clientCert, p.clientKey))
			var unknown x509.UnknownAuthorityError
			if !errors.As(err, &unknown) {
				t.Errorf("without the CA: %v, want an unknown-authority error", err)
			}
			// No client certificate, or one from another CA: refused.
			if who, err := whoami(ctx, url, clientTLS(t, p.ca.file, "", "")); err == nil {
				t.Errorf("without a client certificate: served as %q", who)
			} else {
				t.Logf("without a client certificate: %v", err)
			}
			if who, err := whoami(ctx, url, clientTLS(t, p.ca.file, p.strangerCert, p.strangerKey)); err == nil {
				t.Errorf("with a certificate of another CA: served as %q", who)
			} else {
				t.Logf("with a certificate of another CA: %v", err)
			}
			// The right one: the handler sees the certificate's identity.
			who, err := whoami(ctx, url, clientTLS(t, p.ca.file, p.clientCert, p.clientKey))
			if err != nil || who != "mtls:client-1" {
				t.Errorf("with the client certificate: %q, %v", who, err)
			}
		})
	}
}

func TestTLSListenRequiresConfig(t *testing.T) {
	srv := newServer(t)
	for _, url := range []string{"https://127.0.0.1:0/", "wss://127.0.0.1:0/", "tls://127.0.0.1:0"} {
		if _, err := srv.Listen(url); err == nil || !strings.Contains(err.Error(), "ListenTLS") {
			t.Errorf("%s without a TLS configuration: %v", url, err)
		}
	}
	// An old minimum version is raised to TLS 1.2.
	p := newPKI(t)
	cfg, _ := auth.ServerTLS(p.serverCert, p.serverKey, "")
	cfg.MinVersion = tls.VersionTLS10
	urls := listenAll(t, srv, jsonrpc.ListenTLS(cfg), "tls://127.0.0.1:0")
	old := clientTLS(t, p.ca.file, "", "")
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if _, err := tls.Dial("tcp", strings.TrimPrefix(urls[0], "tls://"), old); err == nil {
		t.Fatal("a TLS 1.1 handshake succeeded")
	}
}

func TestCertificateReload(t *testing.T) {
	auth.SetCertReloadCheck(0)
	defer auth.SetCertReloadCheck(2 * time.Second)
	p := newPKI(t)
	cfg, err := auth.ServerTLS(p.serverCert, p.serverKey, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t)
	urls := listenAll(t, srv, jsonrpc.ListenTLS(cfg), "tls://127.0.0.1:0")
	addr := strings.TrimPrefix(urls[0], "tls://")
	served := func() string {
		t.Helper()
		c, err := tls.Dial("tcp", addr, clientTLS(t, p.ca.file, "", ""))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	before := served()
	// Renew: a new certificate written over the old files.
	cert, key := p.ca.issue(t, "server", true, time.Now().Add(2*time.Hour))
	for from, to := range map[string]string{cert: p.serverCert, key: p.serverKey} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if after := served(); after == before {
		t.Fatalf("still serving certificate %s after the renewal", before)
	}
	// A broken renewal keeps the certificate being served.
	now := served()
	os.WriteFile(p.serverCert, []byte("not a certificate"), 0o600)
	if got := served(); got != now {
		t.Fatalf("serving %s after a broken renewal, want %s", got, now)
	}
}

// Server.Serve on a listener of one's own takes the listener options with
// the meaning Listen gives them: ListenTLS makes it a tls:// listener (mutual
// TLS included), and a configuration without a certificate is refused.
func TestServeTakesListenTLS(t *testing.T) {
	p := newPKI(t)
	srv := newServer(t)
	cfg, err := auth.ServerTLS(p.serverCert, p.serverKey, p.ca.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(nil, jsonrpc.ListenTLS(&tls.Config{})); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Fatalf("Serve with a TLS configuration without a certificate: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l, jsonrpc.ListenTLS(cfg), jsonrpc.ListenFraming(jsonrpc.FramingHeader)) }()
	url := "tls://" + l.Addr().String()
	ctx := context.Background()
	if who, err := whoami(ctx, url, clientTLS(t, p.ca.file, "", "")); err == nil {
		t.Errorf("without a client certificate: served as %q", who)
	}
	c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithTLSConfig(clientTLS(t, p.ca.file, p.clientCert, p.clientKey)), jsonrpc.WithFraming(jsonrpc.FramingHeader))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var who string
	if err := c.Call(ctx, "whoami", nil, &who); err != nil || who != "mtls:client-1" {
		t.Errorf("with the client certificate: %q, %v", who, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-served; !errors.Is(err, jsonrpc.ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v", err)
	}
}
