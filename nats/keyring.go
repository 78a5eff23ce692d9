package nats

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/seedhq/jsonrpc/state"
)

// KeyRingConfig configures a JetStream KeyRing.
type KeyRingConfig struct {
	// Bucket is the key-value bucket that holds the ring (default
	// DefaultKeyBucket), created if missing; Key is the ring's key in it
	// (default "ring"), so that one bucket can hold several rings.
	Bucket string
	Key    string
	// Retain is how many keys the ring keeps (default 3).
	Retain int
	// Refresh is how often the ring also reads the bucket (default 500ms),
	// besides its watch: after a NATS server restart a watch resumes only
	// once its consumer misses heartbeats (about 10s), so this bounds how
	// late a rotation is seen.
	Refresh time.Duration
	// Storage is JetStream's storage (default file), Replicas its copies
	// (default 1).
	Storage  jetstream.StorageType
	Replicas int
}

// KeyRing is a state.KeyRing in a JetStream key-value bucket, shared by
// every instance that opens the same bucket and key. Keys reads a copy
// kept current by a watch on the bucket, so it costs no round trip and a
// rotation on one instance is seen by the others as soon as the watch
// delivers it (milliseconds on a healthy cluster), or at the latest at its
// next read of the bucket (KeyRingConfig.Refresh). Rotate and Remove are
// a compare-and-set on the bucket (a read and a write), retried when
// another instance changed the ring in between.
//
// As jsonrpc.InputRounds.KeyRing it lets a multi round-trip request
// started on one instance finish on any other: a key rotated in on one
// instance signs there at once and verifies on every other within the
// watch's delivery (milliseconds), at worst one Refresh (500ms) and a
// read of the bucket after it, so within a second by default.
//
// While the NATS server is unreachable, Keys keeps answering with the last
// keys it saw, and Rotate and Remove fail. The secrets are stored in the
// bucket as they are: protect it with NATS permissions.
type KeyRing struct {
	kv     jetstream.KeyValue
	key    string
	retain int
	stop   context.CancelFunc // stops the watch and the polls
	done   chan struct{}      // closed when the watch has stopped
	polled chan struct{}      // closed when the polls have stopped

	mu   sync.Mutex
	keys []state.Key
	rev  uint64
}

// NewKeyRing opens (creating if missing) the bucket of cfg and returns
// the ring in it once it has read the ring's current keys; Close stops it.
func NewKeyRing(ctx context.Context, js jetstream.JetStream, cfg KeyRingConfig) (*KeyRing, error) {
	cfg.Bucket = cmp.Or(cfg.Bucket, DefaultKeyBucket)
	if cfg.Key == "" {
		cfg.Key = "ring"
	}
	if cfg.Retain <= 0 {
		cfg.Retain = 3
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 500 * time.Millisecond
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: cfg.Bucket, History: 1, Storage: cfg.Storage, Replicas: max(1, cfg.Replicas),
	})
	if err != nil {
		return nil, fmt.Errorf("jsonrpc/nats: key ring bucket %s: %w", cfg.Bucket, err)
	}
	// The watch outlives ctx (which bounds only the opening): Close stops it.
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.Watch(wctx, cfg.Key)
	if err != nil {
		stop()
		return nil, fmt.Errorf("jsonrpc/nats: key ring watch: %w", err)
	}
	r := &KeyRing{kv: kv, key: cfg.Key, retain: cfg.Retain, stop: stop, done: make(chan struct{}), polled: make(chan struct{})}
	ready := make(chan struct{})
	go r.watch(w, ready)
	go r.poll(wctx, cfg.Refresh)
	select {
	case <-ready:
		return r, nil
	case <-ctx.Done():
		r.Close()
		return nil, fmt.Errorf("jsonrpc/nats: key ring: reading the keys: %w", ctx.Err())
	}
}

// watch applies the ring's updates until the watcher stops; ready closes
// once the current value is applied.
func (r *KeyRing) watch(w jetstream.KeyWatcher, ready chan struct{}) {
	defer close(r.done)
	for e := range w.Updates() {
		if e == nil {
			if ready != nil {
				close(ready)
				ready = nil
			}
			continue
		}
		keys, err := decodeRing(e)
		if err != nil {
			continue // not a ring this package wrote: keep the last good one
		}
		r.apply(keys, e.Revision())
	}
}

// poll reads the ring every refresh until ctx ends.
func (r *KeyRing) poll(ctx context.Context, refresh time.Duration) {
	defer close(r.polled)
	t := time.NewTicker(refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gctx, cancel := context.WithTimeout(ctx, refresh)
		e, err := r.kv.Get(gctx, r.key)
		cancel()
		if err != nil {
			continue // unreachable, or no ring yet: the watch or the next poll will tell
		}
		if keys, err := decodeRing(e); err == nil {
			r.apply(keys, e.Revision())
		}
	}
}

// apply installs keys at revision rev unless a later revision is installed.
func (r *KeyRing) apply(keys []state.Key, rev uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rev > r.rev {
		r.keys, r.rev = keys, rev
	}
}

type wireKey struct {
	ID     string `json:"id"`
	Secret []byte `json:"secret"`
}

func decodeRing(e jetstream.KeyValueEntry) ([]state.Key, error) {
	if e.Operation() != jetstream.KeyValuePut {
		return nil, nil
	}
	var wire []wireKey
	if err := json.Unmarshal(e.Value(), &wire); err != nil {
		return nil, err
	}
	keys := make([]state.Key, len(wire))
	for i, w := range wire {
		keys[i] = state.Key{ID: w.ID, Secret: w.Secret}
	}
	return keys, nil
}

// Close stops the watch; the ring then keeps its last keys.
func (r *KeyRing) Close() error {
	r.stop()
	<-r.done
	<-r.polled
	return nil
}

// Keys implements state.KeyRing.
func (r *KeyRing) Keys(ctx context.Context) ([]state.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys), nil
}

// Rotate implements state.KeyRing.
func (r *KeyRing) Rotate(ctx context.Context, k state.Key) error {
	if err := state.CheckKey(k); err != nil {
		return err
	}
	return r.update(ctx, func(keys []state.Key) ([]state.Key, error) { return state.RotateKeys(keys, k, r.retain) })
}

// Remove implements state.KeyRing.
func (r *KeyRing) Remove(ctx context.Context, id string) error {
	return r.update(ctx, func(keys []state.Key) ([]state.Key, error) { return state.RemoveKey(keys, id) })
}

// update sets the ring to change(the ring), compare-and-set on its revision.
func (r *KeyRing) update(ctx context.Context, change func([]state.Key) ([]state.Key, error)) error {
	for range casAttempts {
		var keys []state.Key
		var rev uint64
		e, err := r.kv.Get(ctx, r.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("jsonrpc/nats: key ring read: %w", err)
		default:
			rev = e.Revision()
			if keys, err = decodeRing(e); err != nil {
				return fmt.Errorf("jsonrpc/nats: key ring %s holds no ring: %w", r.key, err)
			}
		}
		next, err := change(keys)
		if err != nil {
			return err
		}
		wire := make([]wireKey, len(next))
		for i, k := range next {
			wire[i] = wireKey{ID: k.ID, Secret: k.Secret}
		}
		body, err := json.Marshal(wire)
		if err != nil {
			return err
		}
		if rev == 0 {
			rev, err = r.kv.Create(ctx, r.key, body)
		} else {
			rev, err = r.kv.Update(ctx, r.key, body, rev)
		}
		if err == nil {
			r.apply(next, rev)
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !wrongLast(err) {
			return fmt.Errorf("jsonrpc/nats: key ring write: %w", err)
		}
	}
	return fmt.Errorf("jsonrpc/nats: key ring: %d conflicting updates", casAttempts)
}
