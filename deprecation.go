package jsonrpc

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"weak"
)

// Deprecated methods (MethodDoc.Deprecated) keep working. The Mux wraps
// each one at registration, so that methods that are not deprecated pay
// nothing: a call is counted (Mux.DeprecatedCalls), logged at warning level
// once per connection (for HTTP, per client address and port, that is per
// keep-alive connection), and answered over HTTP with the Deprecation
// header (RFC 9745: "@" and the Unix time of MethodDoc.DeprecatedSince) and,
// when MethodDoc.Sunset is set, the Sunset header (RFC 8594).

// maxSeenPeers bounds the connections a deprecated method remembers having
// logged; past it it forgets them all and starts afresh (a connection may
// then be logged again), so its memory stays bounded.
const maxSeenPeers = 4096

type deprecation struct {
	calls  atomic.Uint64
	header string // Deprecation header value
	sunset string // Sunset header value, or ""

	mu   sync.Mutex
	seen map[any]struct{} // the connections logged: weak.Pointer[Conn] or "http host:port"
}

func newDeprecation(doc MethodDoc, registered time.Time) *deprecation {
	since := doc.DeprecatedSince
	if since.IsZero() {
		since = registered
	}
	d := &deprecation{header: "@" + strconv.FormatInt(since.Unix(), 10)}
	if !doc.Sunset.IsZero() {
		d.sunset = doc.Sunset.UTC().Format(http.TimeFormat)
	}
	return d
}

// wrap returns h, noting each call as a use of deprecated method info.
func (d *deprecation) wrap(info MethodInfo, h Handler) Handler {
	return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		d.calls.Add(1)
		if SetResponseHeader(ctx, "Deprecation", d.header) && d.sunset != "" {
			SetResponseHeader(ctx, "Sunset", d.sunset)
		}
		if d.first(ctx) {
			p, _ := PeerFromContext(ctx)
			attrs := []any{"method", info.Name, "transport", p.Transport, "remote", p.RemoteAddr}
			if info.Doc.Replacement != "" {
				attrs = append(attrs, "replacement", info.Doc.Replacement)
			}
			if !info.Doc.Sunset.IsZero() {
				attrs = append(attrs, "sunset", info.Doc.Sunset.UTC().Format(time.RFC3339))
			}
			serverOf(ctx).logger().Warn("jsonrpc: deprecated method called", attrs...)
		}
		return h.ServeRPC(ctx, req)
	})
}

// first reports whether this is the first use on ctx's connection.
func (d *deprecation) first(ctx context.Context) bool {
	var key any = "" // called outside a server (Mux.ServeRPC): one log
	if c := connFromContext(ctx); c != nil {
		key = weak.Make(c)
	} else if p, ok := PeerFromContext(ctx); ok {
		key = p.Transport + " " + p.RemoteAddr
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; ok {
		return false
	}
	if len(d.seen) == 0 || len(d.seen) >= maxSeenPeers {
		d.seen = make(map[any]struct{})
	}
	d.seen[key] = struct{}{}
	return true
}

// DeprecatedCalls returns how many times each deprecated method of m has
// been called (every deprecated method is listed, with 0 when unused).
func (m *Mux) DeprecatedCalls() map[string]uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]uint64{}
	for name, e := range m.methods {
		if e.deprecation != nil {
			out[name] = e.deprecation.calls.Load()
		}
	}
	return out
}

// SetResponseHeader sets header key of the HTTP response that carries the
// reply to ctx's request and reports whether it could: false outside a
// request served over HTTP (no other transport has headers per reply). In
// a batch, the headers set by each request go on the one response. It may
// be called from concurrent handlers; a header set after the reply is
// written is lost.
func SetResponseHeader(ctx context.Context, key, value string) bool {
	pi, ok := ctx.Value(peerKey{}).(*peerInfo)
	if !ok || pi.peer.Transport != "http" {
		return false
	}
	pi.mu.Lock()
	defer pi.mu.Unlock()
	if pi.reply == nil {
		pi.reply = http.Header{}
	}
	pi.reply.Set(key, value)
	return true
}

// ReplyHeader adds the headers handlers set to h (streamable.Replier).
func (pi *peerInfo) ReplyHeader(h http.Header) {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	maps.Copy(h, pi.reply)
}

// serverOf returns the Server serving ctx's request (nil outside one).
func serverOf(ctx context.Context) *Server {
	if c := connFromContext(ctx); c != nil {
		return c.srv
	}
	if pi, ok := ctx.Value(peerKey{}).(*peerInfo); ok {
		return pi.srv
	}
	return nil
}
