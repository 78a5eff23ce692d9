package jsonrpc

import (
	"net/http"

	"github.com/seedhq/jsonrpc/internal/httpx"
)

// Running behind a load balancer or a reverse proxy (nginx, a cloud load
// balancer): health checks, draining and the client's address.
//
// SSE: every text/event-stream response (Streamable HTTP, streamable.go)
// sets "X-Accel-Buffering: no" and "Cache-Control: no-cache", so that nginx
// passes each event on as it comes instead of buffering the response
// (deploy/nginx turns buffering off for its SSE location as well).

// DefaultHealthPath is where the HTTP servers started by Listen answer
// health checks unless Server.HealthPath says otherwise.
const DefaultHealthPath = "/healthz"

// HealthHandler answers load-balancer health checks: 200 "ok" while the
// server serves, 503 "draining" (with Connection: close) once Shutdown has
// begun. Listen's HTTP servers serve it at Server.HealthPath; mount it
// yourself on other muxes.
func (s *Server) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("draining\n"))
			return
		}
		w.Write([]byte("ok\n"))
	})
}

// healthPath is the path of Listen's health checks ("" when turned off).
func (s *Server) healthPath() string {
	switch s.HealthPath {
	case "":
		return DefaultHealthPath
	case "-":
		return ""
	}
	return s.HealthPath
}

// remoteAddr is the address of the client of r: r.RemoteAddr, or, when
// that is a trusted proxy (Server.TrustedProxies), the client as
// X-Forwarded-For names it (see httpx.ClientAddr).
func (s *Server) remoteAddr(r *http.Request) string {
	if len(s.TrustedProxies) == 0 {
		return r.RemoteAddr
	}
	return httpx.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), s.TrustedProxies)
}

// httpPeer is the Peer of an HTTP request, built here for every HTTP
// flavour (plain HTTP, WebSocket, Streamable HTTP) so that each sees the
// same client: its address is the forwarded client's when the request
// came through one of TrustedProxies.
func (s *Server) httpPeer(r *http.Request, transport string) Peer {
	return Peer{Transport: transport, RemoteAddr: s.remoteAddr(r), TLS: r.TLS, Header: r.Header}
}
