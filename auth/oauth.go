package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The OAuth 2.1 resource server, as the MCP authorization specification
// asks of a server: bearer JWT access tokens verified against the
// authorization server's JWKS, and the RFC 9728 metadata that tells
// clients where to get them.

// MetadataPath is where RFC 9728 puts the protected-resource metadata.
const MetadataPath = "/.well-known/oauth-protected-resource"

// DefaultLeeway is the clock skew allowed on exp, nbf and iat.
const DefaultLeeway = 30 * time.Second

// oauthAlgorithms are the signature algorithms accepted on access tokens.
var oauthAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

// ResourceServer verifies OAuth access tokens (JWTs signed with RS256,
// ES256 or EdDSA by a key of Keys) and serves the metadata document. Set
// Resource, Issuer and Keys; the rest has defaults.
type ResourceServer struct {
	// Resource is this server's resource identifier, the URL clients use
	// (e.g. https://api.example.com/rpc). It is the metadata's "resource".
	Resource string
	// AuthorizationServers are the issuers clients get tokens from
	// (default: Issuer).
	AuthorizationServers []string
	// Issuer is the required "iss" of tokens.
	Issuer string
	// Audience is the required "aud" (one of them); default Resource.
	Audience string
	// Keys verify the signatures (LoadJWKS).
	Keys *JWKS
	// Leeway is the clock skew allowed (default DefaultLeeway).
	Leeway time.Duration
	// ScopesSupported is listed in the metadata; RequiredScopes must all
	// be granted to a token (otherwise 403 insufficient_scope).
	ScopesSupported []string
	RequiredScopes  []string
}

// Authenticate verifies the request's bearer token: signature by a key of
// the JWKS (RS256, ES256, EdDSA only), "iss" equal to Issuer, "aud"
// containing Audience, "exp" required and in the future, "nbf" and "iat"
// not in the future (each with Leeway). Scopes come from "scope" (space
// separated) or "scp" (an array).
func (rs *ResourceServer) Authenticate(r *http.Request) (Principal, error) {
	tok, err := BearerToken(r)
	if err != nil {
		return Principal{}, err
	}
	return rs.verify(r.Context(), tok, time.Now())
}

func (rs *ResourceServer) verify(ctx context.Context, tok string, now time.Time) (Principal, error) {
	c, all, err := rs.verifySignature(ctx, tok)
	if err != nil {
		return Principal{}, err
	}
	if err := rs.validate(&c, now); err != nil {
		return Principal{}, err
	}
	return principalOf(&c, all), nil
}

// verifySignature parses the JWT tok and checks its signature with the
// keys of its key id; it returns its registered claims and all of them.
func (rs *ResourceServer) verifySignature(ctx context.Context, tok string) (jwt.Claims, map[string]any, error) {
	var c jwt.Claims
	var all map[string]any
	parsed, err := jwt.ParseSigned(tok, oauthAlgorithms)
	if err != nil {
		return c, nil, invalidToken("the access token is not a JWT signed with RS256, ES256 or EdDSA", err)
	}
	if len(parsed.Headers) != 1 {
		return c, nil, invalidToken("the access token has more than one signature", nil)
	}
	keys, err := rs.Keys.lookup(ctx, parsed.Headers[0].KeyID)
	if err != nil {
		return c, nil, invalidToken("no key to verify the access token", err)
	}
	verr := errors.New("no key")
	for _, k := range keys {
		if verr = parsed.Claims(k.Key, &c, &all); verr == nil {
			return c, all, nil
		}
	}
	return c, nil, invalidToken("the access token's signature does not verify", verr)
}

// validate checks the claims c at now: an expiry, the issuer and the
// audience, within the leeway.
func (rs *ResourceServer) validate(c *jwt.Claims, now time.Time) error {
	leeway := rs.Leeway
	if leeway == 0 {
		leeway = DefaultLeeway
	}
	aud := rs.Audience
	if aud == "" {
		aud = rs.Resource
	}
	if c.Expiry == nil {
		return invalidToken("the access token has no exp claim", nil)
	}
	err := c.ValidateWithLeeway(jwt.Expected{Issuer: rs.Issuer, AnyAudience: jwt.Audience{aud}, Time: now}, leeway)
	if err == nil {
		return nil
	}
	desc := "the access token is not valid here"
	switch {
	case errors.Is(err, jwt.ErrExpired):
		desc = "the access token has expired"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		desc = "the access token is from another issuer"
	case errors.Is(err, jwt.ErrInvalidAudience):
		desc = "the access token is for another audience"
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		desc = "the access token is not valid yet"
	}
	return invalidToken(desc, err)
}

// principalOf is the caller a verified token names: its subject (or
// client_id) and its scopes (scope, or scp as a list).
func principalOf(c *jwt.Claims, all map[string]any) Principal {
	p := Principal{Subject: c.Subject, Claims: all, Method: "oauth"}
	if p.Subject == "" {
		p.Subject, _ = all["client_id"].(string)
	}
	if s, ok := all["scope"].(string); ok {
		p.Scopes = strings.Fields(s)
	}
	if scp, ok := all["scp"].([]any); ok && p.Scopes == nil {
		for _, v := range scp {
			if s, ok := v.(string); ok {
				p.Scopes = append(p.Scopes, s)
			}
		}
	}
	return p
}

// MetadataURL is the URL of the metadata document (RFC 9728 §3.1): the
// well-known path inserted between Resource's host and its path.
func (rs *ResourceServer) MetadataURL() string {
	u, err := url.Parse(rs.Resource)
	if err != nil || u.Host == "" {
		return MetadataPath
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + MetadataPath + path
}

// metadataPath is the path part of MetadataURL.
func (rs *ResourceServer) metadataPath() string {
	u, err := url.Parse(rs.MetadataURL())
	if err != nil {
		return MetadataPath
	}
	return u.Path
}

// Metadata is the protected-resource metadata document (RFC 9728 §2).
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata returns the document served at MetadataURL.
func (rs *ResourceServer) Metadata() Metadata {
	as := rs.AuthorizationServers
	if len(as) == 0 && rs.Issuer != "" {
		as = []string{rs.Issuer}
	}
	return Metadata{
		Resource:               rs.Resource,
		AuthorizationServers:   as,
		ScopesSupported:        rs.ScopesSupported,
		BearerMethodsSupported: []string{"header"},
	}
}

// ServeMetadata serves the metadata document (GET or HEAD; CORS open, as
// browsers' clients read it cross-origin).
func (rs *ResourceServer) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Methods", "GET")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	b, _ := json.Marshal(rs.Metadata())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=3600")
	w.Write(b)
}

// Handler returns h behind the resource server: the metadata document at
// its well-known path, every other request authenticated (Handler with
// this server's challenges, which carry resource_metadata).
func (rs *ResourceServer) Handler(h http.Handler, opts ...Option) http.Handler {
	opts = append([]Option{WithResourceMetadata(rs.MetadataURL()), RequireScopes(rs.RequiredScopes...)}, opts...)
	protected := Handler(h, rs.Authenticate, opts...)
	meta := rs.metadataPath()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == meta || r.URL.Path == MetadataPath {
			rs.ServeMetadata(w, r)
			return
		}
		protected.ServeHTTP(w, r)
	})
}

// JWKS is a JSON Web Key Set, from a file or fetched from a URL; a URL is
// fetched again (at most once a minute) when a token names a key it lacks,
// so that the authorization server can rotate keys.
type JWKS struct {
	url    string
	client *http.Client

	mu      sync.Mutex
	set     jose.JSONWebKeySet
	fetched time.Time
}

// jwksRefetch bounds how often a URL is fetched again for an unknown key.
const jwksRefetch = time.Minute

// maxJWKS bounds a JWKS document.
const maxJWKS = 1 << 20

// LoadJWKS reads a JWKS from a file, or fetches it from an http(s) URL.
func LoadJWKS(ctx context.Context, fileOrURL string) (*JWKS, error) {
	if strings.HasPrefix(fileOrURL, "https://") || strings.HasPrefix(fileOrURL, "http://") {
		k := &JWKS{url: fileOrURL, client: &http.Client{Timeout: 10 * time.Second}}
		if err := k.fetch(ctx); err != nil {
			return nil, err
		}
		return k, nil
	}
	data, err := os.ReadFile(fileOrURL)
	if err != nil {
		return nil, fmt.Errorf("auth: reading the JWKS: %w", err)
	}
	return ParseJWKS(data)
}

// ParseJWKS decodes a JWKS document. It must hold at least one public key.
func ParseJWKS(data []byte) (*JWKS, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("auth: invalid JWKS: %w", err)
	}
	n := 0
	for _, k := range set.Keys {
		if !k.IsPublic() {
			return nil, fmt.Errorf("auth: the JWKS holds a private key (kid %q): publish only public keys", k.KeyID)
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("auth: the JWKS has no keys")
	}
	return &JWKS{set: set}, nil
}

func (k *JWKS) fetch(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return fmt.Errorf("auth: JWKS URL: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("auth: fetching the JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: fetching the JWKS from %s: HTTP %d", k.url, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS))
	if err != nil {
		return fmt.Errorf("auth: fetching the JWKS: %w", err)
	}
	parsed, err := ParseJWKS(data)
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.set, k.fetched = parsed.set, time.Now()
	k.mu.Unlock()
	return nil
}

// lookup returns the keys that may have signed a token with key id kid
// (every key when kid is empty).
func (k *JWKS) lookup(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if k == nil {
		return nil, errors.New("auth: the resource server has no JWKS")
	}
	k.mu.Lock()
	keys := k.find(kid)
	stale := k.url != "" && time.Since(k.fetched) > jwksRefetch
	k.mu.Unlock()
	if len(keys) == 0 && stale {
		k.mu.Lock()
		k.fetched = time.Now() // one refetch per period, even if it fails
		k.mu.Unlock()
		if err := k.fetch(ctx); err != nil {
			return nil, err
		}
		k.mu.Lock()
		keys = k.find(kid)
		k.mu.Unlock()
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("auth: no key with id %q in the JWKS", kid)
	}
	return keys, nil
}

func (k *JWKS) find(kid string) []jose.JSONWebKey {
	if kid == "" {
		return k.set.Keys
	}
	return k.set.Key(kid)
}

// Middleware is rs.Handler as a middleware, for jsonrpc.ListenHTTPMiddleware.
func (rs *ResourceServer) Middleware(opts ...Option) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler { return rs.Handler(h, opts...) }
}
