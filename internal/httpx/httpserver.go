package httpx

import (
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"
)

// Routes is the root handler of an HTTP listener: the JSON-RPC path, a
// health check, other handlers, and a bound on the requests (or WebSocket
// sockets) served at once.
type Routes struct {
	Path       string         // the JSON-RPC path, served by Handler
	Handler    http.Handler   //
	HealthPath string         // served by Health (before Extra)
	Health     http.Handler   //
	Extra      *http.ServeMux // other paths (nil: 404 Not Found)
	// Limit bounds the requests served at once by Handler and Extra; one
	// over it gets 503 Service Unavailable with Retry-After: 1.
	Limit int64
	// Draining, while it reports true, asks every client to close its
	// connection after the answer (so that a proxy opens its next one
	// elsewhere).
	Draining func() bool

	inFlight atomic.Int64
}

// ServeHTTP routes r by its path.
func (rt *Routes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rt.Draining() {
		w.Header().Set("Connection", "close")
	}
	serve := rt.Handler
	if r.URL.Path != rt.Path {
		if r.URL.Path == rt.HealthPath {
			rt.Health.ServeHTTP(w, r)
			return
		}
		if rt.Extra == nil {
			http.NotFound(w, r)
			return
		}
		serve = rt.Extra
	}
	defer rt.inFlight.Add(-1)
	if rt.inFlight.Add(1) > rt.Limit {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "server busy: too many connections", http.StatusServiceUnavailable)
		return
	}
	serve.ServeHTTP(w, r)
}

// NewHTTPServer returns the http.Server that serves h on l with the
// timeouts and limits below (over TLS when tlsCfg is set; HTTP/2 only if it
// offers "h2"), ready to run until Shutdown, which stops it gracefully
// (HTTPDrain, which takes hs.ConnState). errorLog is where net/http reports
// its own failures.
func NewHTTPServer(l net.Listener, h http.Handler, tlsCfg *tls.Config, errorLog *log.Logger) *HTTPDrain {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,  // slowloris: the headers must arrive quickly
		ReadTimeout:       60 * time.Second,  // the whole request, body included
		IdleTimeout:       120 * time.Second, // keep-alive connections between requests
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          errorLog,
		TLSConfig:         tlsCfg,
	}
	h2 := tlsCfg != nil && slices.Contains(tlsCfg.NextProtos, "h2")
	if tlsCfg != nil && !h2 {
		hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
	}
	d := &HTTPDrain{hs: hs, l: newDrainListener(l), conns: connTracker{conns: map[net.Conn]time.Time{}}, served: make(chan struct{}), h2: h2}
	hs.ConnState = d.conns.track
	return d
}
