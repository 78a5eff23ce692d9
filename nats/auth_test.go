package nats_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/seedhq/jsonrpc"
)

// roundTrip serves echo at listenURL and calls it at dialURL.
func roundTrip(t *testing.T, listenURL, dialURL string, opts ...jsonrpc.DialOption) error {
	t.Helper()
	srv := &jsonrpc.Server{Handler: echoMux()}
	if _, err := srv.Listen(listenURL); err != nil {
		return err
	}
	defer srv.Shutdown(context.Background())
	ctx := ctxTimeout(t, 20*time.Second)
	c, err := jsonrpc.Dial(ctx, dialURL, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	var got []string
	if err := c.Call(ctx, "echo", []string{"hi"}, &got); err != nil {
		return err
	}
	if got[0] != "hi" {
		t.Fatalf("echo %v", got)
	}
	return nil
}

func TestTokenAuth(t *testing.T) {
	ns := runNATS(t, func(o *natsserver.Options) { o.Authorization = "t0ken" })
	host := strings.TrimPrefix(ns.ClientURL(), "nats://")
	url := "nats://t0ken@" + host + "/svc.token"
	if err := roundTrip(t, url, url); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, url, "nats://"+host+"/svc.token"); err == nil {
		t.Fatal("a client without the token connected")
	}
}

func TestNkeyAuth(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	os.WriteFile(seedFile, seed, 0o600)
	ns := runNATS(t, func(o *natsserver.Options) { o.Nkeys = []*natsserver.NkeyUser{{Nkey: pub}} })
	url := natsURL(ns, "svc.nkey") + "?nkey=" + seedFile
	if err := roundTrip(t, url, url); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, url, natsURL(ns, "svc.nkey")); err == nil {
		t.Fatal("a client without the nkey connected")
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	caFile, serverCert := selfSigned(t, dir)
	ns := runNATS(t, func(o *natsserver.Options) {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}
		o.TLS = true
	})
	_, port, _ := net.SplitHostPort(ns.Addr().String())
	url := "nats://127.0.0.1:" + port + "/svc.tls" // ClientURL says tls://, a scheme of the core
	// The CA from the URL, or a tls.Config from WithTLSConfig.
	if err := roundTrip(t, url+"?tls_ca="+caFile, url+"?tls_ca="+caFile); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pemBytes, _ := os.ReadFile(caFile)
	pool.AppendCertsFromPEM(pemBytes)
	if err := roundTrip(t, url+"?tls_ca="+caFile, url, jsonrpc.WithTLSConfig(&tls.Config{RootCAs: pool})); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, url+"?tls_ca="+caFile, url); err == nil {
		t.Fatal("a client that does not trust the CA connected")
	}
}

// selfSigned writes a CA certificate to dir and returns its path and a
// server certificate for 127.0.0.1 that it signed.
func selfSigned(t *testing.T, dir string) (string, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
