// Package auth is the security layer of a jsonrpc server: TLS and mutual
// TLS configurations from files, authentication of HTTP and WebSocket
// callers (a geth-style shared-secret JWT, an OAuth 2.1 resource server, or
// any Authenticator), per-method authorization and rate limits.
//
// The pieces meet in the context of each request:
//
//   - Handler authenticates an HTTP request (for WebSocket: its handshake,
//     once per connection) and stores the caller's Principal in the
//     request's context; every handler then reads it with FromContext.
//     A request that fails gets 401 with a WWW-Authenticate challenge (400
//     for a malformed one, 403 for insufficient scope) and never reaches
//     the server. Over TLS stream connections (tls://), and over HTTPS with
//     a client certificate, FromContext returns the verified certificate's
//     identity.
//   - Policy.Authorize, set as jsonrpc.Server.Authorize, decides per method
//     and per request on every transport (each element of a batch on its
//     own): a denied call gets jsonrpc.CodeForbidden and its handler does
//     not run; rpc.discover lists only the methods the caller may call.
//   - RateLimiter.Admit, set as jsonrpc.Server.Admit, is a token bucket per
//     principal (or per remote host for anonymous callers) that counts each
//     request of a batch: over it, HTTP answers 429 with Retry-After, and
//     streams answer jsonrpc.CodeLimitExceeded and keep the connection.
//
// Tokens are verified with github.com/go-jose/go-jose/v4 against an
// explicit list of algorithms; no token is ever logged.
package auth
