package nats

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

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

// Broker is a state.Broker on a JetStream stream: the stream gives the
// events of a topic one order, and each subscription reads it through an
// ordered consumer from the point it subscribed, so that subscribers on
// every instance receive each event once, in that order, and resume after
// a reconnection where they were. Publish is one acknowledged publish;
// Subscribe reads the stream's state and creates a consumer (two round
// trips); each event then reaches a subscriber in one push from the
// server.
type Broker struct {
	js      jetstream.JetStream
	stream  jetstream.Stream
	subject string
}

// NewBroker creates (or updates) the stream of cfg and returns the broker
// on it.
func NewBroker(ctx context.Context, js jetstream.JetStream, cfg BrokerConfig) (*Broker, error) {
	if cfg.Stream == "" {
		cfg.Stream = DefaultBrokerStream
	}
	if cfg.Subject == "" {
		cfg.Subject = DefaultBrokerSubject
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = time.Minute
	}
	storage := jetstream.MemoryStorage
	if cfg.Storage != nil {
		storage = *cfg.Storage
	}
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: []string{cfg.Subject + ".>"}, Storage: storage,
		Replicas: max(1, cfg.Replicas), MaxAge: cfg.MaxAge, Discard: jetstream.DiscardOld,
	})
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker stream %s: %w", cfg.Stream, err)
	}
	return &Broker{js: js, stream: s, subject: cfg.Subject}, nil
}

func (b *Broker) subjectOf(topic string) string {
	return b.subject + ".t" + base64.RawURLEncoding.EncodeToString([]byte(topic))
}

// Publish implements state.Broker.
func (b *Broker) Publish(ctx context.Context, topic string, data []byte) error {
	if _, err := b.js.Publish(ctx, b.subjectOf(topic), data); err != nil {
		return fmt.Errorf("jsonrpc/nats: broker publish: %w", err)
	}
	return nil
}

// Subscribe implements state.Broker.
func (b *Broker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	info, err := b.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: broker subscribe: %w", err)
	}
	c, err := b.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
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
	return &subscription{it: it}, nil
}

type subscription struct {
	it jetstream.MessagesContext
}

// Next implements state.Subscription.
func (s *subscription) Next(ctx context.Context) ([]byte, error) {
	m, err := s.it.Next(jetstream.NextContext(ctx))
	switch {
	case err == nil:
		return m.Data(), nil
	case errors.Is(err, jetstream.ErrMsgIteratorClosed):
		return nil, state.ErrClosed
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("jsonrpc/nats: broker subscription: %w", err)
}

// Close implements state.Subscription.
func (s *subscription) Close() error {
	s.it.Stop()
	return nil
}
