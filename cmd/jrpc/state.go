package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	jnats "github.com/seedhq/jsonrpc/nats"
	"github.com/seedhq/jsonrpc/state"
)

// stateConnectTimeout bounds serve's first connection to the NATS server
// of --state, and the creation of its streams and buckets.
const stateConnectTimeout = 5 * time.Second

// stateRequestTimeout bounds a JetStream request of --state's stores
// whose context has no deadline.
const stateRequestTimeout = 2 * time.Second

// sharedState is serve's --state: the demo's state kept in NATS JetStream,
// shared by every instance given the same server.
type sharedState struct {
	nc       *natsgo.Conn
	ring     *jnats.KeyRing
	sessions *jnats.SessionStore
	events   *jnats.EventStore
	demo     demo.Shared
}

// stateEventLimits bound the events of resumable streams that --state
// keeps, all sessions together.
var stateEventLimits = state.Limits{MaxBytes: 64 << 20, MaxAge: 10 * time.Minute}

// openState connects to the NATS server of rawURL (nats://[user:pass@]host:port)
// and opens the JetStream stores on it. The connection reconnects for as
// long as serve runs; while it is down, what needs the state fails at once
// (nothing is buffered to be sent later).
func openState(ctx context.Context, rawURL string) (*sharedState, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "nats" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, usageErrorf("--state %q: want nats://HOST:PORT (a NATS server with JetStream)", rawURL)
	}
	opts := []natsgo.Option{
		natsgo.Name("jrpc serve --state"),
		natsgo.Timeout(stateConnectTimeout),
		natsgo.MaxReconnects(-1),
		natsgo.ReconnectWait(250 * time.Millisecond),
		natsgo.ReconnectBufSize(-1), // fail at once while disconnected
	}
	if global.natsCreds != "" {
		opts = append(opts, natsgo.UserCredentials(global.natsCreds))
	}
	server := (&url.URL{Scheme: "nats", User: u.User, Host: u.Host}).String()
	public := "nats://" + u.Host
	nc, err := natsgo.Connect(server, opts...)
	if err != nil {
		return nil, &exitError{code: exitTransport, err: fmt.Errorf("--state: cannot connect to %s: %w", public, err),
			hint: "start a NATS server with JetStream (nats-server -js -a 127.0.0.1) or name one that runs"}
	}
	st, err := openStores(ctx, nc)
	if err != nil {
		nc.Close()
		return nil, &exitError{code: exitTransport, err: fmt.Errorf("--state %s: %w", public, err),
			hint: "the NATS server must run with JetStream enabled (nats-server -js)"}
	}
	return st, nil
}

// openStores creates (or opens) the JetStream streams and buckets of the
// shared state on nc.
func openStores(ctx context.Context, nc *natsgo.Conn) (*sharedState, error) {
	ctx, cancel := context.WithTimeout(ctx, stateConnectTimeout)
	defer cancel()
	// A request sent just as the server went away waits for its answer
	// this long at most (the default is 5 s).
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(stateRequestTimeout))
	if err != nil {
		return nil, err
	}
	// On file, so that the stream outlives a restart of the NATS server
	// (a memory stream is gone after one, and every publish fails).
	file := jetstream.FileStorage
	broker, err := jnats.NewBroker(ctx, js, jnats.BrokerConfig{Storage: &file})
	if err != nil {
		return nil, err
	}
	ring, err := jnats.NewKeyRing(ctx, js, jnats.KeyRingConfig{Storage: jetstream.FileStorage})
	if err != nil {
		return nil, err
	}
	if err := seedRing(ctx, ring); err != nil {
		ring.Close()
		return nil, err
	}
	st := &sharedState{nc: nc, ring: ring, demo: demo.Shared{Broker: broker, KeyRing: ring}}
	if st.sessions, err = jnats.NewSessionStore(ctx, js, jnats.SessionStoreConfig{}); err == nil {
		st.events, err = jnats.NewEventStore(ctx, js, jnats.EventStoreConfig{Limits: stateEventLimits})
	}
	if err != nil {
		ring.Close()
		return nil, err
	}
	return st, nil
}

// seedRing puts a random key in ring when it holds none (the first
// instance to start). Instances starting together may each put one: the
// ring keeps them all (KeyRingConfig.Retain), and any verifies.
func seedRing(ctx context.Context, ring state.KeyRing) error {
	keys, err := ring.Keys(ctx)
	if err != nil || len(keys) > 0 {
		return err
	}
	b := make([]byte, 48)
	rand.Read(b)
	return ring.Rotate(ctx, state.Key{ID: hex.EncodeToString(b[:8]), Secret: b[16:]})
}

// close closes the connection to the NATS server, after the listeners
// have stopped.
func (s *sharedState) close() {
	if s != nil {
		s.ring.Close()
		s.nc.Close()
	}
}

// shared returns the demo's shared state: none (this process's memory)
// without --state.
func (s *sharedState) shared() demo.Shared {
	if s == nil {
		return demo.Shared{}
	}
	return s.demo
}

// streamableHTTP returns opts with the shared stores of Streamable HTTP.
func (s *sharedState) streamableHTTP(opts jsonrpc.StreamableHTTPOptions) jsonrpc.StreamableHTTPOptions {
	if s != nil {
		opts.SessionStore, opts.EventStore = s.sessions, s.events
	}
	return opts
}
