package jsonrpc

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
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
// that is a trusted proxy (Server.TrustedProxies), the rightmost address
// of X-Forwarded-For that is not one (the client as the first trusted
// proxy saw it; entries left of it could be forged by the client).
func (s *Server) remoteAddr(r *http.Request) string {
	if len(s.TrustedProxies) == 0 {
		return r.RemoteAddr
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip, err := netip.ParseAddr(host); err != nil || !s.trusted(ip) {
		return r.RemoteAddr
	}
	hops := r.Header.Values("X-Forwarded-For")
	client := ""
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			ip, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return orAddr(client, r.RemoteAddr) // a garbled entry: trust nothing left of it
			}
			client = ip.Unmap().String()
			if !s.trusted(ip) {
				return client
			}
		}
	}
	return orAddr(client, r.RemoteAddr)
}

func orAddr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) trusted(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range s.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// httpPeer is the Peer of an HTTP request, built here for every HTTP
// flavour (plain HTTP, WebSocket, Streamable HTTP) so that each sees the
// same client: its address is the forwarded client's when the request
// came through one of TrustedProxies.
func (s *Server) httpPeer(r *http.Request, transport string) Peer {
	return Peer{Transport: transport, RemoteAddr: s.remoteAddr(r), TLS: r.TLS, Header: r.Header}
}
