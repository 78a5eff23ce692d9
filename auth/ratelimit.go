package auth

import (
	"context"
	"math"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/seedhq/jsonrpc"
)

// DefaultMaxClients bounds the clients a RateLimiter tracks at once.
const DefaultMaxClients = 10000

// RateLimiter is a token bucket per client: Rate requests per second on
// average, bursts of up to Burst. Install it with srv.Admit =
// limiter.Admit: each message then costs one token per request in it (a
// batch of 10 costs 10); a message that the bucket cannot pay now is
// refused whole (HTTP 429 with Retry-After; on streams, each request gets
// jsonrpc.CodeLimitExceeded and the connection goes on), and costs nothing.
//
// A client is the authenticated principal (its Method and Subject), else
// the remote host (without its port); callers with neither (stdio, unix
// sockets) share one bucket. Buckets of clients idle long enough to be full
// again are dropped when MaxClients are tracked; past that, new clients
// share one bucket.
type RateLimiter struct {
	Rate       rate.Limit
	Burst      int
	MaxClients int // default DefaultMaxClients

	mu       sync.Mutex
	buckets  map[string]*rate.Limiter
	overflow *rate.Limiter // shared by the clients past MaxClients
}

// NewRateLimiter returns a limiter of perSecond requests per second per
// client with bursts of burst (at least 1; a burst below 1 is perSecond
// rounded up).
func NewRateLimiter(perSecond float64, burst int) *RateLimiter {
	if burst < 1 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &RateLimiter{Rate: rate.Limit(perSecond), Burst: burst}
}

// Admit takes n tokens from the bucket of ctx's client, or returns a
// *jsonrpc.LimitError saying when n tokens will be there.
func (l *RateLimiter) Admit(ctx context.Context, n int) error {
	now := time.Now()
	lim := l.bucket(clientKey(ctx), now)
	if n > lim.Burst() {
		// More than a burst at once can never pass: say when a full
		// bucket would have refilled by n.
		return &jsonrpc.LimitError{RetryAfter: time.Duration(float64(n) / float64(l.Rate) * float64(time.Second))}
	}
	r := lim.ReserveN(now, n)
	if !r.OK() {
		return &jsonrpc.LimitError{}
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &jsonrpc.LimitError{RetryAfter: d}
	}
	return nil
}

func (l *RateLimiter) bucket(key string, now time.Time) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets[key]; ok {
		return b
	}
	if l.buckets == nil {
		l.buckets = make(map[string]*rate.Limiter)
	}
	limit := l.MaxClients
	if limit <= 0 {
		limit = DefaultMaxClients
	}
	if len(l.buckets) >= limit {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(l.buckets, k) // full again: forgetting it changes nothing
			}
		}
	}
	if len(l.buckets) >= limit {
		// Every tracked client is active: the others share one bucket,
		// so that memory stays bounded and new addresses gain nothing.
		if l.overflow == nil {
			l.overflow = rate.NewLimiter(l.Rate, l.Burst)
		}
		return l.overflow
	}
	b := rate.NewLimiter(l.Rate, l.Burst)
	l.buckets[key] = b
	return b
}

// clientKey names the client of a request for rate limiting.
func clientKey(ctx context.Context) string {
	if p, ok := FromContext(ctx); ok {
		return p.Method + ":" + p.Subject
	}
	peer, _ := jsonrpc.PeerFromContext(ctx)
	if host, _, err := net.SplitHostPort(peer.RemoteAddr); err == nil {
		return "addr:" + host
	}
	return "addr:" + peer.RemoteAddr
}
