package nats

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seedhq/jsonrpc/state"
)

// Default names of the broker's stream.
const (
	DefaultBrokerStream  = "JSONRPC_BROKER"
	DefaultBrokerSubject = "jsonrpc.broker"
)

// BrokerConfig configures a JetStream Broker.
type BrokerConfig struct {
	// Stream is the JetStream stream that orders the events (default
	// DefaultBrokerStream), created or updated; Subject prefixes its
	// subjects (default DefaultBrokerSubject).
	Stream  string
	Subject string
	// MaxAge is how long the stream keeps an event (default 1 minute): a
	// subscriber further behind than that misses the events that aged out.
	MaxAge time.Duration
	// Storage is JetStream's storage (default memory: the events are
	// transient), Replicas its copies (default 1).
	Storage  *jetstream.StorageType
	Replicas int
}

// ErrDisconnected ends a broker subscription whose connection to NATS was
// lost: the events published meanwhile may never reach it, so it ends
// rather than resume with a gap (subscribe again once NATS is back).
var ErrDisconnected = errors.New("jsonrpc/nats: broker subscription ended: the connection to NATS was lost")

// Broker is a state.Broker on a JetStream stream: the stream gives the
// events of a topic one order, and each subscription reads it through an
// ordered consumer from the point it subscribed, so that subscribers on
// every instance receive each event once, in that order. Publish is one
// acknowledged publish; Subscribe reads the stream's state and creates a
// consumer (two round trips); each event then reaches a subscriber in one
// push from the server.
//
// When the connection to NATS is lost, every subscription ends: its Next
// returns ErrDisconnected. Publish then fails by its context's deadline
// (JetStream's default timeout when it has none).
// Once NATS is back, Publish and Subscribe work again; a stream lost with
// its server (memory storage) is created again.
type Broker struct {
	js      jetstream.JetStream
	cfg     jetstream.StreamConfig
	subject string

	mu     sync.Mutex
	stream jetstream.Stream
}

// NewBroker creates (or updates) the stream of cfg and returns the broker
// on it.
func NewBroker(ctx context.Context, js jetstream.JetStream, cfg BrokerConfig) (*Broker, error) {
	cfg.Stream = cmp.Or(cfg.Stream, DefaultBrokerStream)
	cfg.Subject = cmp.Or(cfg.Subject, DefaultBrokerSubject)
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = time.Minute
	}
	storage := jetstream.MemoryStorage
	if cfg.Storage != nil {
		storage = *cfg.Storage
	}
	b := &Broker{js: js, subject: cfg.Subject, cfg: jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: []string{cfg.Subject + ".>"}, Storage: storage,
		Replicas: max(1, cfg.Replicas), MaxAge: cfg.MaxAge, Discard: jetstream.DiscardOld,
	}}
	if _, err := b.createStream(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// createStream creates (or updates) the broker's stream.
func (b *Broker) createStream(ctx context.Context) (jetstream.Stream, error) {
	s, err := b.js.CreateOrUpdateStream(ctx, b.cfg)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker stream %s: %w", b.cfg.Name, err)
	}
	b.mu.Lock()
	b.stream = s
	b.mu.Unlock()
	return s, nil
}

func (b *Broker) subjectOf(topic string) string {
	return b.subject + ".t" + base64.RawURLEncoding.EncodeToString([]byte(topic))
}

// Publish implements state.Broker.
func (b *Broker) Publish(ctx context.Context, topic string, data []byte) error {
	_, err := b.js.Publish(ctx, b.subjectOf(topic), data)
	if errors.Is(err, jetstream.ErrNoStreamResponse) { // the stream went with its server
		if _, err = b.createStream(ctx); err == nil {
			_, err = b.js.Publish(ctx, b.subjectOf(topic), data)
		}
	}
	if err != nil {
		return fmt.Errorf("jsonrpc/nats: broker publish: %w", err)
	}
	return nil
}

// Subscribe implements state.Broker.
func (b *Broker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	b.mu.Lock()
	stream := b.stream
	b.mu.Unlock()
	info, err := stream.Info(ctx)
	if errors.Is(err, jetstream.ErrStreamNotFound) { // the stream went with its server
		if stream, err = b.createStream(ctx); err == nil {
			info, err = stream.Info(ctx)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker subscribe: %w", err)
	}
	c, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.subjectOf(topic)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    info.State.LastSeq + 1,
	})
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker subscribe: %w", err)
	}
	it, err := c.Messages()
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker subscribe: %w", err)
	}
	nc := b.js.Conn()
	s := &subscription{it: it, nc: nc, status: nc.StatusChanged(natsgo.RECONNECTING, natsgo.DISCONNECTED, natsgo.CLOSED)}
	go s.watch()
	if !nc.IsConnected() { // lost before the watch began
		s.end(ErrDisconnected)
	}
	return s, nil
}

type subscription struct {
	it     jetstream.MessagesContext
	nc     *natsgo.Conn
	status chan natsgo.Status // the connection's losses, until Close

	mu  sync.Mutex
	err error // why it ended: ErrDisconnected, or state.ErrClosed
}

// watch ends s when the connection is lost.
func (s *subscription) watch() {
	if _, ok := <-s.status; ok {
		s.end(ErrDisconnected)
	}
}

func (s *subscription) end(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.it.Stop()
}

// Next implements state.Subscription.
func (s *subscription) Next(ctx context.Context) ([]byte, error) {
	m, err := s.it.Next(jetstream.NextContext(ctx))
	switch {
	case err == nil:
		return m.Data(), nil
	case errors.Is(err, jetstream.ErrMsgIteratorClosed):
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, cmp.Or(s.err, state.ErrClosed)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("jsonrpc/nats: broker subscription: %w", err)
}

// Close implements state.Subscription.
func (s *subscription) Close() error {
	s.end(state.ErrClosed)
	s.nc.RemoveStatusListener(s.status)
	return nil
}
