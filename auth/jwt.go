package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The shared-secret JWT of Ethereum's engine API, as go-ethereum serves and
// sends it: a 256-bit secret in a hex file; each request carries a fresh
// HS256 token whose "iat" is within SharedSecretDrift of the server's clock.

// SharedSecretDrift is how far a token's "iat" may be from now (either way).
const SharedSecretDrift = 60 * time.Second

// SecretLen is the length of a shared secret in bytes (256 bits).
const SecretLen = 32

// LoadSecret reads a shared secret from a file of 64 hex digits (an
// optional 0x prefix and surrounding white space allowed), like geth's
// jwt.hex. Anything else is an error naming what is wrong.
func LoadSecret(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: reading the JWT secret: %w", err)
	}
	text := strings.TrimSpace(string(data))
	text = strings.TrimPrefix(strings.TrimPrefix(text, "0x"), "0X")
	secret, err := hex.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("auth: the JWT secret in %s is not hex: %w", path, err)
	}
	if len(secret) != SecretLen {
		return nil, fmt.Errorf("auth: the JWT secret in %s is %d bytes; it must be %d (64 hex digits)", path, len(secret), SecretLen)
	}
	return secret, nil
}

// ObtainSecret loads the shared secret at path; when no file is there, it
// creates one with a random secret (0x-prefixed hex, mode 0600), as geth
// does with jwt.hex. An existing file is never overwritten, and a
// malformed one is an error.
func ObtainSecret(path string) (secret []byte, created bool, err error) {
	secret, err = LoadSecret(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return secret, false, err
	}
	secret = make([]byte, SecretLen)
	rand.Read(secret)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("auth: creating the JWT secret: %w", err)
	}
	_, err = f.WriteString("0x" + hex.EncodeToString(secret))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, false, fmt.Errorf("auth: writing the JWT secret: %w", err)
	}
	return secret, true, nil
}

// sharedClaims are the claims a shared-secret token may carry.
type sharedClaims struct {
	jwt.Claims
}

// SharedSecret authenticates requests carrying a bearer JWT signed with
// secret, as go-ethereum's engine API does: HS256 only (alg "none" and
// every other algorithm are refused), "iat" required and within
// SharedSecretDrift of now, "exp" and "nbf" checked when present. The
// principal's Method is "jwt"; its Subject is the token's "sub", or
// "jwt-secret".
func SharedSecret(secret []byte) Authenticator {
	key := append([]byte(nil), secret...)
	return func(r *http.Request) (Principal, error) {
		tok, err := BearerToken(r)
		if err != nil {
			return Principal{}, err
		}
		return verifyShared(tok, key, time.Now())
	}
}

func verifyShared(tok string, key []byte, now time.Time) (Principal, error) {
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return Principal{}, invalidToken("the token is not an HS256 JWT", err)
	}
	var c sharedClaims
	var all map[string]any
	if err := parsed.Claims(key, &c, &all); err != nil {
		return Principal{}, invalidToken("the token's signature does not verify", err)
	}
	switch {
	case c.IssuedAt == nil:
		return Principal{}, invalidToken("the token has no iat claim", nil)
	case now.Sub(c.IssuedAt.Time()) > SharedSecretDrift:
		return Principal{}, invalidToken("the token is stale (iat more than 60 s ago)", nil)
	case c.IssuedAt.Time().Sub(now) > SharedSecretDrift:
		return Principal{}, invalidToken("the token is from the future (iat more than 60 s ahead)", nil)
	case c.Expiry != nil && !now.Before(c.Expiry.Time()):
		return Principal{}, invalidToken("the token has expired", nil)
	case c.NotBefore != nil && now.Add(SharedSecretDrift).Before(c.NotBefore.Time()):
		return Principal{}, invalidToken("the token is not valid yet", nil)
	}
	sub := c.Subject
	if sub == "" {
		sub = "jwt-secret"
	}
	return Principal{Subject: sub, Claims: all, Method: "jwt"}, nil
}

// NewSharedSecretToken returns a fresh token for a server that checks
// secret with SharedSecret: HS256, with "iat" now. Mint one per request, as
// geth's clients do.
func NewSharedSecretToken(secret []byte) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	return jwt.Signed(signer).Claims(jwt.Claims{IssuedAt: jwt.NewNumericDate(time.Now())}).Serialize()
}

// BearerTransport returns an http.RoundTripper that sends each request
// through base (nil: http.DefaultTransport) with "Authorization: Bearer"
// and a token from token, called once per request (a WebSocket client
// calls it for its handshake). Pass it to jsonrpc.WithHTTPClient.
func BearerTransport(base http.RoundTripper, token func() (string, error)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		tok, err := token()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+tok)
		return base.RoundTrip(r)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
