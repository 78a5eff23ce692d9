package pubsub

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// ErrConnEnded is Live.Add's error when the connection has already ended.
var ErrConnEnded = errors.New("pubsub: connection ended")

// ErrLimit is Live.Add's error when the connection already holds its
// maximum of live subscriptions.
var ErrLimit = errors.New("pubsub: too many subscriptions on this connection")

// Live is the server's registry of live subscriptions, by connection (C)
// and id; each connection holds at most a cap of them. When a connection's
// context ends, its subscriptions are taken out and ended. The zero value
// is not usable: call NewLive.
type Live[C comparable, S any] struct {
	max int
	end func(S) // ends a subscription of a connection that ended

	mu    sync.Mutex
	conns map[C]map[string]S
}

// NewLive returns an empty registry holding at most max subscriptions per
// connection; end ends each subscription of a connection that ends, and is
// called without the registry's lock held.
func NewLive[C comparable, S any](max int, end func(S)) *Live[C, S] {
	return &Live[C, S]{max: max, end: end, conns: make(map[C]map[string]S)}
}

// Max returns the per-connection cap.
func (l *Live[C, S]) Max() int { return l.max }

// Add registers sub under id for conn, whose context is ctx. It fails with
// ErrConnEnded once ctx has ended, and with ErrLimit when conn is at the cap.
func (l *Live[C, S]) Add(ctx context.Context, conn C, id string, sub S) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx.Err() != nil {
		return ErrConnEnded
	}
	m := l.conns[conn]
	if len(m) >= l.max {
		return ErrLimit
	}
	if m == nil {
		m = make(map[string]S)
		l.conns[conn] = m
		// The connection's end ends its subscriptions.
		context.AfterFunc(ctx, func() { l.dropConn(conn) })
	}
	m[id] = sub
	return nil
}

// Get returns conn's subscription id, and whether there is one.
func (l *Live[C, S]) Get(conn C, id string) (S, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sub, ok := l.conns[conn][id]
	return sub, ok
}

// Remove takes conn's subscription id out; connEnded says the connection
// has ended, so that its entry goes with its last subscription.
func (l *Live[C, S]) Remove(conn C, id string, connEnded bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.conns[conn]
	delete(m, id)
	if len(m) == 0 && connEnded {
		delete(l.conns, conn)
	}
}

func (l *Live[C, S]) dropConn(conn C) {
	l.mu.Lock()
	m := l.conns[conn]
	delete(l.conns, conn)
	l.mu.Unlock()
	for _, sub := range m {
		l.end(sub)
	}
}

// Len returns the number of live subscriptions, over every connection.
func (l *Live[C, S]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.conns {
		n += len(m)
	}
	return n
}

// NewID returns a fresh subscription id: 16 random bytes in hex, 0x first.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return "0x" + hex.EncodeToString(b[:])
}

// Methods returns the three method names of a namespace (subscribe,
// unsubscribe, notification), each replaced by the one given when it is
// not empty: the same rule on the server and the client.
func Methods(namespace, subscribe, unsubscribe, notification string) (string, string, string) {
	return cmp.Or(subscribe, namespace+"_subscribe"),
		cmp.Or(unsubscribe, namespace+"_unsubscribe"),
		cmp.Or(notification, namespace+"_subscription")
}

// Prefix returns the start of every notification of subscription id:
// the message up to the id's closing quote (see Outbox.Init).
func Prefix(method, id string) []byte {
	p := wire.AppendString([]byte(`{"jsonrpc":"2.0","method":`), method)
	p = append(p, `,"params":{"subscription":"`...)
	return append(append(p, id...), '"')
}

// SplitKind takes the kind (a string, the first element) off a subscribe
// call's params array and returns the rest as the params of that kind: one
// object or array as it is, several arguments (or one scalar) as an array
// by position. When the first element is not a string, problem says why
// (the params at /0 are invalid).
func SplitKind(elems []json.RawMessage) (kind string, args []byte, problem string) {
	if len(elems) == 0 || elems[0][0] != '"' {
		return "", nil, "expected the kind of subscription (a string) as the first element of the params array"
	}
	if err := codec.Unmarshal(elems[0], &kind); err != nil {
		return "", nil, err.Error()
	}
	switch rest := elems[1:]; {
	case len(rest) == 0:
		return kind, nil, ""
	case len(rest) == 1 && (rest[0][0] == '{' || rest[0][0] == '['):
		return kind, rest[0], ""
	default:
		b := []byte{'['}
		for i, r := range rest {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, r...)
		}
		return kind, append(b, ']'), ""
	}
}
