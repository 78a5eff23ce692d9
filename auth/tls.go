package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certReloadCheck is how often a served certificate's files are checked
// for a change (on the handshakes that follow).
var certReloadCheck = 2 * time.Second

// ServerTLS returns a TLS configuration for jsonrpc.ListenTLS (or an
// http.Server) serving the certificate in certFile and keyFile (PEM; the
// certificate file may hold the chain). The files are read again when they
// change (checked at most every two seconds, on a handshake), so a renewed
// certificate is served without a restart; a renewal that does not load is
// logged and the previous certificate kept. With clientCAFile, clients must
// present a certificate signed by one of its CAs (mutual TLS); its identity
// is then FromContext's principal. TLS 1.2 is the minimum version.
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}
	if clientCAFile != "" {
		pool, err := loadPool(clientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// ClientTLS returns a TLS configuration for jsonrpc.WithTLSConfig: with
// caFile, only the CAs in it are trusted (instead of the system's); with
// certFile and keyFile, the client presents that certificate (mutual TLS).
// Empty names are skipped. TLS 1.2 is the minimum version, and the server
// may not renegotiate.
func ClientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Renegotiation: tls.RenegotiateNever}
	if caFile != "" {
		pool, err := loadPool(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		if certFile == "" || keyFile == "" {
			return nil, errors.New("auth: a client certificate needs both its certificate and its key file")
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("auth: loading the client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("auth: reading the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("auth: %s holds no PEM certificate", file)
	}
	return pool, nil
}

// certReloader serves a certificate from files, reloading it when they change.
type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the files' sizes and times when loaded
	checked time.Time
}

func (r *certReloader) fileStamp() (string, error) {
	var stamp string
	for _, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), ";")
	}
	return stamp, nil
}

func (r *certReloader) load() error {
	stamp, err := r.fileStamp()
	if err != nil {
		return fmt.Errorf("auth: the TLS certificate: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("auth: loading the TLS certificate: %w", err)
	}
	r.cert, r.stamp, r.checked = &cert, stamp, time.Now()
	return nil
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) >= certReloadCheck {
		r.checked = time.Now()
		if stamp, err := r.fileStamp(); err == nil && stamp != r.stamp {
			old := r.cert
			if err := r.load(); err != nil {
				r.cert = old
				r.stamp = stamp // do not retry a broken pair on every handshake
				slog.Warn("auth: the renewed TLS certificate does not load; serving the previous one", "cert", r.certFile, "error", err)
			} else {
				slog.Info("auth: TLS certificate reloaded", "cert", r.certFile)
			}
		}
	}
	return r.cert, nil
}
