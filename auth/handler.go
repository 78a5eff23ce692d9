package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
)

// Authenticator identifies the caller of an HTTP request (for WebSocket,
// of the handshake). It returns ErrNoCredentials when the request carries
// none it understands, an *Error to choose the status and challenge, or any
// other error, which is taken as an invalid token (401). Use it for API
// keys, a proxy's headers, or anything the package does not provide.
type Authenticator func(r *http.Request) (Principal, error)

// ErrNoCredentials is returned by an Authenticator for a request that
// carries no credentials: 401 with a challenge that names no error (RFC
// 6750 §3.1), unless the Handler lets anonymous callers through.
var ErrNoCredentials = errors.New("auth: no credentials")

// Error is an authentication failure with its HTTP status and its OAuth
// error code (RFC 6750 §3.1): "invalid_request" (400), "invalid_token"
// (401), "insufficient_scope" (403).
type Error struct {
	Status      int
	Code        string
	Description string // sent to the client; never holds the token
	Scope       string // for insufficient_scope: the scopes needed
	Err         error  // the cause (logged, not sent)
}

func (e *Error) Error() string {
	msg := "auth: " + e.Code + ": " + e.Description
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func invalidToken(desc string, err error) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: desc, Err: err}
}

var errQueryToken = invalidRequest("access tokens in the query string are refused: send them in the Authorization header")

func invalidRequest(desc string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Description: desc}
}

// Option configures Handler.
type Option func(*handlerConfig)

type handlerConfig struct {
	realm     string
	metadata  string
	scopes    []string
	anonymous bool
	logger    *slog.Logger
}

// WithRealm sets the realm of the challenges.
func WithRealm(realm string) Option { return func(c *handlerConfig) { c.realm = realm } }

// WithResourceMetadata adds resource_metadata="url" to every challenge
// (RFC 9728 §5.1), so that an OAuth client finds the authorization server.
func WithResourceMetadata(url string) Option { return func(c *handlerConfig) { c.metadata = url } }

// RequireScopes refuses, with 403 insufficient_scope, a principal that
// lacks any of the scopes (per-method rules belong in a Policy).
func RequireScopes(scopes ...string) Option {
	return func(c *handlerConfig) { c.scopes = append(c.scopes, scopes...) }
}

// AllowAnonymous lets requests without credentials through, with no
// principal in their context (a Policy then decides what they may call).
// Wrong credentials are still refused.
func AllowAnonymous() Option { return func(c *handlerConfig) { c.anonymous = true } }

// WithLogger sets where refusals are logged (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *handlerConfig) { c.logger = l } }

// Handler returns h behind authentication: each request is authenticated
// with authn, and the Principal goes into the request's context
// (FromContext). A refused request never reaches h: it gets 401 with a
// WWW-Authenticate: Bearer challenge (every 401 has one), 400 for a
// malformed request (a token in the query string among them, which OAuth
// 2.1 forbids), or 403 insufficient_scope. CORS preflights (OPTIONS with an
// Origin), which carry no credentials, pass to h, which answers them.
// Refusals are logged with the reason, never the token.
func Handler(h http.Handler, authn Authenticator, opts ...Option) http.Handler {
	cfg := &handlerConfig{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions && r.Header.Get("Origin") != "" {
			h.ServeHTTP(w, r)
			return
		}
		var p Principal
		var err error
		if r.URL.Query().Has("access_token") {
			err = errQueryToken
		} else {
			p, err = authn(r)
		}
		if err == nil && len(cfg.scopes) > 0 {
			for _, s := range cfg.scopes {
				if !p.HasScope(s) {
					err = &Error{Status: http.StatusForbidden, Code: "insufficient_scope", Description: "the token lacks scope " + s, Scope: strings.Join(cfg.scopes, " ")}
					break
				}
			}
		}
		switch {
		case err == nil:
			h.ServeHTTP(w, r.WithContext(NewContext(r.Context(), p)))
			return
		case errors.Is(err, ErrNoCredentials) && cfg.anonymous:
			h.ServeHTTP(w, r)
			return
		}
		refuse(w, r, err, cfg)
	})
}

// refuse answers a request that failed authentication.
func refuse(w http.ResponseWriter, r *http.Request, err error, cfg *handlerConfig) {
	var ae *Error
	if !errors.As(err, &ae) {
		if errors.Is(err, ErrNoCredentials) {
			ae = &Error{Status: http.StatusUnauthorized}
		} else {
			ae = invalidToken("the access token is invalid", err)
		}
	}
	cfg.logger.Info("auth: request refused", "remote", r.RemoteAddr, "path", r.URL.Path, "status", ae.Status, "reason", err.Error())
	w.Header().Set("WWW-Authenticate", challenge(cfg.realm, cfg.metadata, ae))
	w.Header().Set("Cache-Control", "no-store")
	msg := "unauthorized: credentials required"
	if ae.Code != "" {
		msg = ae.Code + ": " + ae.Description
	}
	http.Error(w, msg, ae.Status)
}

// challenge renders a Bearer challenge (RFC 6750 §3; RFC 9728 §5.1).
func challenge(realm, metadata string, e *Error) string {
	var b strings.Builder
	b.WriteString("Bearer")
	param := func(name, value string) {
		if value == "" {
			return
		}
		if b.Len() > len("Bearer") {
			b.WriteByte(',')
		}
		b.WriteString(" " + name + "=" + quote(value))
	}
	param("realm", realm)
	param("resource_metadata", metadata)
	param("error", e.Code)
	param("error_description", e.Description)
	param("scope", e.Scope)
	return b.String()
}

// quote renders an RFC 9110 quoted-string; characters a quoted-string
// cannot hold (controls) are dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t' || (c >= 0x20 && c != 0x7f):
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxTokenLen bounds the tokens looked at (real ones are far smaller).
const maxTokenLen = 16 << 10

// BearerToken returns the bearer token of a request's Authorization header
// (RFC 6750 §2.1: the scheme case-insensitive, then the token). It returns
// ErrNoCredentials when there is no Authorization header or it uses another
// scheme, and an *Error (invalid_request) for more than one header, a
// missing or malformed token. (Handler refuses tokens in the query string.)
func BearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return "", ErrNoCredentials
	case 1:
	default:
		return "", invalidRequest("more than one Authorization header")
	}
	return parseBearer(values[0])
}

// parseBearer parses an Authorization header value.
func parseBearer(v string) (string, error) {
	v = strings.Trim(v, " \t")
	scheme, rest, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", ErrNoCredentials // another scheme: no bearer credentials
	}
	tok := strings.TrimLeft(rest, " ")
	if tok == "" {
		return "", invalidRequest("the Authorization header has no token")
	}
	if len(tok) > maxTokenLen {
		return "", invalidToken("the access token is too long", nil)
	}
	// b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
	end := len(tok)
	for end > 0 && tok[end-1] == '=' {
		end--
	}
	if end == 0 {
		return "", invalidRequest("the bearer token is malformed")
	}
	for i := 0; i < end; i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			return "", invalidRequest("the bearer token is malformed")
		}
	}
	return tok, nil
}

// Middleware is Handler as a middleware, for jsonrpc.ListenHTTPMiddleware
// and routers.
func Middleware(authn Authenticator, opts ...Option) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler { return Handler(h, authn, opts...) }
}
