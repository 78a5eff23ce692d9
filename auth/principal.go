package auth

import (
	"context"
	"crypto/x509"
	"slices"

	"github.com/seedhq/jsonrpc"
)

// Principal is an authenticated caller.
type Principal struct {
	// Subject names the caller: the token's "sub", or the client
	// certificate's common name (or first DNS name, e-mail or URI).
	Subject string
	// Scopes are the OAuth scopes granted to the caller ("scope" or "scp").
	Scopes []string
	// Claims are the token's claims as decoded JSON (for a certificate:
	// "dns", "email", "uri", "issuer", "serial"). Do not modify them.
	Claims map[string]any
	// Method says how the caller was authenticated: "jwt" (shared
	// secret), "oauth", "mtls", or what a custom Authenticator says.
	Method string
}

// HasScope reports whether the principal was granted scope.
func (p Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, &p)
}

// FromContext returns the caller of the request whose handler got ctx: the
// principal Handler authenticated, or else the identity of the verified
// client certificate of a mutual-TLS connection (any transport). It
// reports false for an anonymous caller.
func FromContext(ctx context.Context) (Principal, bool) {
	if p, ok := ctx.Value(principalKey{}).(*Principal); ok {
		return *p, true
	}
	if peer, ok := jsonrpc.PeerFromContext(ctx); ok && peer.TLS != nil && len(peer.TLS.VerifiedChains) > 0 {
		return CertificatePrincipal(peer.TLS.VerifiedChains[0][0]), true
	}
	return Principal{}, false
}

// CertificatePrincipal is the identity of a verified client certificate.
func CertificatePrincipal(cert *x509.Certificate) Principal {
	claims := map[string]any{
		"issuer": cert.Issuer.String(),
		"serial": cert.SerialNumber.String(),
	}
	var uris []string
	for _, u := range cert.URIs {
		uris = append(uris, u.String())
	}
	for k, v := range map[string][]string{"dns": cert.DNSNames, "email": cert.EmailAddresses, "uri": uris} {
		if len(v) > 0 {
			claims[k] = v
		}
	}
	subject := cert.Subject.CommonName
	for _, names := range [][]string{cert.DNSNames, cert.EmailAddresses, uris} {
		if subject == "" && len(names) > 0 {
			subject = names[0]
		}
	}
	return Principal{Subject: subject, Claims: claims, Method: "mtls"}
}
