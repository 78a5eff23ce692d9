package netx

import (
	"crypto/tls"
	"errors"
	"time"
)

// ServerTLS returns a listener's TLS configuration: a clone of base with
// TLS 1.2 at least, offering protos (ALPN) when base names none. It fails
// when base is nil or has no certificate; scheme names the listener in the
// error.
func ServerTLS(base *tls.Config, scheme string, protos ...string) (*tls.Config, error) {
	if base == nil {
		return nil, errors.New("jsonrpc: a " + scheme + ":// listener needs a TLS configuration with a certificate (ListenTLS)")
	}
	cfg := base.Clone()
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return nil, errors.New("jsonrpc: the TLS configuration of " + scheme + ":// has no certificate (set Certificates or GetCertificate)")
	}
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = protos
	}
	return cfg, nil
}

// Handshake completes the server side of tc's TLS handshake within
// timeout; on failure it closes tc.
func Handshake(tc *tls.Conn, timeout time.Duration) error {
	tc.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		tc.Close()
		return err
	}
	tc.SetDeadline(time.Time{})
	return nil
}
