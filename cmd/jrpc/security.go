package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/auth"
)

// The security flags: TLS and credentials for client commands, TLS
// listeners, authentication, allowed origins and rate limits for serve.

// clientSecurity holds the client commands' TLS and credential flags.
var clientSecurity struct {
	cacert, cert, key string
	insecure          bool
	jwtSecret         string
	bearer            string
}

func init() {
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&clientSecurity.cacert, "cacert", "", "trust only the CA certificates in `FILE` (PEM) for https://, wss:// and tls://")
	pf.BoolVarP(&clientSecurity.insecure, "insecure", "k", false, "do not verify the server's TLS certificate (testing only)")
	pf.StringVar(&clientSecurity.cert, "cert", "", "present the client certificate in `FILE` (PEM; with --key) for mutual TLS")
	pf.StringVar(&clientSecurity.key, "key", "", "the private key `FILE` (PEM) of --cert")
	pf.StringVar(&clientSecurity.jwtSecret, "jwt-secret", "", "authenticate with a fresh HS256 JWT per request signed with the hex secret in `FILE` (geth's jwt.hex)")
	pf.StringVar(&clientSecurity.bearer, "bearer", "", "send Authorization: Bearer `TOKEN` (default $JRPC_BEARER)")
}

// applySecurity adds the TLS and credential flags to t.
func (t *target) applySecurity() error {
	cs := clientSecurity
	if cs.cacert != "" || cs.cert != "" || cs.key != "" || cs.insecure {
		cfg, err := auth.ClientTLS(cs.cacert, cs.cert, cs.key)
		if err != nil {
			return &exitError{code: exitUsage, err: err, hint: "--cacert FILE and --cert FILE --key FILE take PEM files"}
		}
		if t.tls != nil { // an @endpoint's settings, which the flags override
			if cs.cacert == "" {
				cfg.RootCAs = t.tls.RootCAs
			}
			if cs.cert == "" {
				cfg.Certificates = t.tls.Certificates
			}
		}
		cfg.InsecureSkipVerify = cs.insecure
		t.tls = cfg
	}
	bearer := cs.bearer
	if bearer == "" {
		bearer = os.Getenv("JRPC_BEARER")
	}
	if cs.jwtSecret != "" && bearer != "" {
		return usageErrorf("--jwt-secret and --bearer (or $JRPC_BEARER) both set the Authorization header: use one")
	}
	if cs.jwtSecret != "" {
		secret, err := auth.LoadSecret(cs.jwtSecret)
		if err != nil {
			return &exitError{code: exitUsage, err: err, hint: "the file must hold the server's secret: 64 hex digits (geth's jwt.hex)"}
		}
		t.jwtSecret = secret
	}
	if bearer != "" {
		t.headers.Set("Authorization", "Bearer "+bearer)
	}
	return nil
}

// withCredentials wraps an HTTP transport so that each request carries a
// fresh token (--jwt-secret).
func (t *target) withCredentials(base http.RoundTripper) http.RoundTripper {
	if t.jwtSecret == nil {
		return base
	}
	return auth.BearerTransport(base, func() (string, error) { return auth.NewSharedSecretToken(t.jwtSecret) })
}

// handshakeHeaders returns the headers of a WebSocket handshake: t's, with
// a token minted now for --jwt-secret.
func (t *target) handshakeHeaders() (http.Header, error) {
	if t.jwtSecret == nil {
		return t.headers, nil
	}
	tok, err := auth.NewSharedSecretToken(t.jwtSecret)
	if err != nil {
		return nil, err
	}
	h := t.headers.Clone()
	h.Set("Authorization", "Bearer "+tok)
	return h, nil
}

// tlsFailure explains a TLS failure, or an Origin or Host refusal, and
// names the flag that fixes it; it returns nil for other errors.
func (t *target) tlsFailure(err error) error {
	if t.url == nil {
		return nil
	}
	var httpErr *jsonrpc.HTTPError
	if errors.As(err, &httpErr) && httpErr.StatusCode == http.StatusForbidden && strings.Contains(httpErr.Body, "Server.AllowedHosts") {
		return transportError(fmt.Errorf("HTTP 403 Forbidden from %s: %s", t, strings.TrimSpace(strings.TrimPrefix(httpErr.Body, "jsonrpc: "))),
			"the server refuses this request's Origin or Host: start it with --allow-origin PATTERN or --allow-host PATTERN")
	}
	if cerr := t.serverCertFailure(err); cerr != nil {
		return cerr
	}
	if cerr := t.clientCertFailure(err); cerr != nil {
		return cerr
	}
	if msg := err.Error(); strings.Contains(msg, "server gave HTTP response to HTTPS client") || strings.Contains(msg, "first record does not look like a TLS handshake") {
		plain := *t.url
		plain.Scheme = map[string]string{"https": "http", "wss": "ws", "tls": "tcp"}[plain.Scheme]
		return transportError(fmt.Errorf("cannot connect to %s: the server does not speak TLS on this port", t), "use "+plain.String())
	}
	return nil
}

// serverCertFailure explains a server certificate this side does not
// trust, or returns nil.
func (t *target) serverCertFailure(err error) error {
	var unknownCA x509.UnknownAuthorityError
	var badHost x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownCA):
		issuer := "an unknown issuer"
		if unknownCA.Cert != nil {
			issuer = unknownCA.Cert.Issuer.String()
		}
		return transportError(fmt.Errorf("cannot connect to %s: unknown authority: its certificate is signed by %s, which is not trusted", t, issuer),
			"trust the server's CA with --cacert FILE (or ca = FILE in an @endpoint); -k skips the check (testing only)")
	case errors.As(err, &badHost):
		return transportError(fmt.Errorf("cannot connect to %s: name mismatch: its certificate is not for %s (%v)", t, badHost.Host, badHost),
			"use the host name the certificate names in the URL; -k skips the check (testing only)")
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return transportError(fmt.Errorf("cannot connect to %s: expired: %v", t, invalid),
			"renew the server's certificate (and check this machine's clock); -k skips the check (testing only)")
	}
	return nil
}

// clientCertFailure explains a server that wants (another) client
// certificate, or returns nil.
func (t *target) clientCertFailure(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "tls: certificate required"):
		return transportError(fmt.Errorf("cannot connect to %s: client certificate required: the server wants mutual TLS", t),
			"present a certificate signed by a CA the server trusts: --cert FILE --key FILE")
	case t.overTLS() && (t.tls == nil || len(t.tls.Certificates) == 0) && closedEarly(err):
		// With TLS 1.3 a refused client learns it on its first write or
		// read, often as a closed connection rather than the alert.
		return transportError(fmt.Errorf("cannot talk to %s: the server closed the TLS connection (%v); it may require a client certificate", t, err),
			"present a certificate signed by a CA the server trusts: --cert FILE --key FILE")
	case strings.Contains(msg, "tls: bad certificate"), strings.Contains(msg, "tls: unknown certificate authority"), strings.Contains(msg, "tls: certificate expired"):
		return transportError(fmt.Errorf("cannot connect to %s: the server refused the client certificate (%v)", t, err),
			"use --cert FILE --key FILE signed by a CA in the server's --client-ca, and not expired")
	}
	return nil
}

// closedEarly tells whether err is a connection the peer closed (or reset).
func closedEarly(err error) bool {
	for _, e := range []error{syscall.EPIPE, syscall.ECONNRESET, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, jsonrpc.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	msg := err.Error() // net/http's HTTP/2 client: closed before or as the request went
	return strings.Contains(msg, "http2: client conn could not be established") || strings.Contains(msg, "http2: client conn is closed")
}

// overTLS reports whether the target is reached over TLS.
func (t *target) overTLS() bool {
	return t.url != nil && (t.url.Scheme == "https" || t.url.Scheme == "wss" || t.url.Scheme == "tls")
}

// serveSecurity holds serve's TLS, authentication, origin and rate flags.
type serveSecurity struct {
	tlsCert, tlsKey, clientCA string
	jwtSecret                 string
	jwks, issuer, audience    string
	resource                  string
	allowOrigins              []string
	allowHosts                []string
	rateLimit                 float64
}

func (s *serveSecurity) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.tlsCert, "tls-cert", "", "serve https://, wss:// and tls:// with the certificate in `FILE` (PEM, reloaded when it changes)")
	f.StringVar(&s.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert")
	f.StringVar(&s.clientCA, "client-ca", "", "require client certificates signed by a CA in `FILE` (mutual TLS)")
	f.StringVar(&s.jwtSecret, "jwt-secret", "", "require HS256 JWTs signed with the hex secret in `FILE` on http and ws (geth's engine API; created if missing)")
	f.StringVar(&s.jwks, "auth-jwks", "", "require OAuth access tokens verified with the JWKS in `FILE|URL` on http and ws")
	f.StringVar(&s.issuer, "auth-issuer", "", "the required token issuer `ISS` (with --auth-jwks)")
	f.StringVar(&s.audience, "auth-audience", "", "the required token audience `AUD` (with --auth-jwks; default --auth-resource)")
	f.StringVar(&s.resource, "auth-resource", "", "this server's resource `URL` in the OAuth metadata (default: the first http(s) listener)")
	f.StringArrayVar(&s.allowOrigins, "allow-origin", nil, "let browser pages from `PATTERN` call (host pattern such as app.example.com or *.example.com, or https://host); repeatable")
	f.StringArrayVar(&s.allowHosts, "allow-host", nil, "accept http and ws requests only for Host `PATTERN` (e.g. localhost, 127.0.0.1: stops DNS rebinding; --mcp on loopback listeners defaults to localhost, 127.0.0.1, [::1]; * allows any); repeatable")
	f.Float64Var(&s.rateLimit, "rate-limit", 0, "allow `N` requests per second per client (principal or remote host; each batch element counts), bursts of 2N")
}

// apply configures srv from the flags and returns the listen options they
// need. listen is the list of URLs to serve.
func (s *serveSecurity) apply(ctx context.Context, srv *jsonrpc.Server, listen []string) ([]jsonrpc.ListenOption, error) {
	if s.rateLimit < 0 {
		return nil, usageErrorf("--rate-limit must be positive")
	}
	tlsOpt, err := s.tls()
	if err != nil {
		return nil, err
	}
	authOpt, err := s.authentication(ctx, srv.Logger, listen)
	if err != nil {
		return nil, err
	}
	var opts []jsonrpc.ListenOption
	for _, o := range []jsonrpc.ListenOption{tlsOpt, authOpt} {
		if o != nil {
			opts = append(opts, o)
		}
	}
	srv.AllowedOrigins = append(srv.AllowedOrigins, s.allowOrigins...)
	srv.AllowedHosts = append(srv.AllowedHosts, s.allowHosts...)
	if s.rateLimit > 0 {
		srv.Admit = auth.NewRateLimiter(s.rateLimit, int(2*s.rateLimit+0.5)).Admit
	}
	return opts, nil
}

// tls returns the listen option of --tls-cert, --tls-key and --client-ca
// (nil without them).
func (s *serveSecurity) tls() (jsonrpc.ListenOption, error) {
	if (s.tlsCert == "") != (s.tlsKey == "") {
		return nil, usageErrorf("--tls-cert and --tls-key go together")
	}
	if s.tlsCert == "" {
		if s.clientCA != "" {
			return nil, usageErrorf("--client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	cfg, err := auth.ServerTLS(s.tlsCert, s.tlsKey, s.clientCA)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err, hint: "--tls-cert and --tls-key take PEM files (and --client-ca a PEM CA bundle)"}
	}
	return jsonrpc.ListenTLS(cfg), nil
}

// authentication returns the HTTP middleware of --jwt-secret or
// --auth-jwks (nil without them).
func (s *serveSecurity) authentication(ctx context.Context, logger *slog.Logger, listen []string) (jsonrpc.ListenOption, error) {
	switch {
	case s.jwtSecret != "" && s.jwks != "":
		return nil, usageErrorf("--jwt-secret and --auth-jwks are two ways to authenticate: use one")
	case s.jwtSecret != "":
		secret, created, err := auth.ObtainSecret(s.jwtSecret)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err, hint: "fix or remove the file (a missing one is created with a fresh secret)"}
		}
		if created {
			fmt.Fprintf(os.Stderr, "created a JWT secret in %s\n", s.jwtSecret)
		}
		return jsonrpc.ListenHTTPMiddleware(auth.Middleware(auth.SharedSecret(secret), auth.WithLogger(logger))), nil
	case s.jwks != "":
		return s.resourceServer(ctx, logger, listen)
	case s.resource != "" || s.issuer != "" || s.audience != "":
		return nil, usageErrorf("--auth-issuer, --auth-audience and --auth-resource go with --auth-jwks")
	}
	return nil, nil
}

// resourceServer returns the OAuth resource server's middleware of
// --auth-jwks, --auth-issuer, --auth-audience and --auth-resource.
func (s *serveSecurity) resourceServer(ctx context.Context, logger *slog.Logger, listen []string) (jsonrpc.ListenOption, error) {
	if s.issuer == "" {
		return nil, usageErrorf("--auth-jwks needs --auth-issuer")
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	keys, err := auth.LoadJWKS(lctx, s.jwks)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err, hint: "--auth-jwks takes a JWKS file or an http(s) URL serving one"}
	}
	resource := s.resource
	if resource == "" {
		resource = firstHTTP(listen)
	}
	if resource == "" || strings.Contains(resource, ":0/") || strings.HasSuffix(resource, ":0") {
		return nil, usageErrorf("--auth-jwks needs --auth-resource URL (the URL clients use; it cannot be guessed from %q)", resource)
	}
	rs := &auth.ResourceServer{Resource: resource, Issuer: s.issuer, Audience: s.audience, Keys: keys}
	return jsonrpc.ListenHTTPMiddleware(rs.Middleware(auth.WithLogger(logger))), nil
}

// firstHTTP returns the first http(s) URL of listen, or "".
func firstHTTP(listen []string) string {
	for _, u := range listen {
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return u
		}
	}
	return ""
}

// tlsListenHint is the hint for a TLS URL that cannot be served.
func tlsListenHint(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "wss://") || strings.HasPrefix(u, "tls://") {
		return "serve TLS with --tls-cert FILE --tls-key FILE"
	}
	return ""
}

// refusalStatus reports whether an HTTP status refuses a caller (rather
// than telling that the port speaks plain HTTP).
func refusalStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}
