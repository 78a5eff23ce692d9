package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

func TestHonoured(t *testing.T) {
	want := ListenFilter{ToolsListChanged: true, PromptsListChanged: true, ResourceSubscriptions: []string{"file:///a"}}
	if got := Honoured(nil, want); !got.ToolsListChanged || !got.PromptsListChanged || got.ResourceSubscriptions != nil {
		t.Errorf("default support: %+v", got)
	}
	if got := Honoured([]string{"promptsListChanged", "resourceSubscriptions"}, want); got.ToolsListChanged || !got.PromptsListChanged || len(got.ResourceSubscriptions) != 1 {
		t.Errorf("listed support: %+v", got)
	}
}

type notes struct {
	mu  sync.Mutex
	got []string
}

func (n *notes) Notify(_ context.Context, method string, params any) error {
	b, _ := json.Marshal(params)
	n.mu.Lock()
	n.got = append(n.got, method+" "+string(b))
	n.mu.Unlock()
	return nil
}

func (n *notes) wait(t *testing.T, count int) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n.mu.Lock()
		got := slices.Clone(n.got)
		n.mu.Unlock()
		if len(got) >= count {
			return got
		}
	}
	t.Fatalf("fewer than %d notifications", count)
	return nil
}

func TestFeed(t *testing.T) {
	var f Feed
	n := &notes{}
	done := make(chan error, 1)
	go func() {
		done <- f.Listen(context.Background(), nil, n.Notify, json.RawMessage(`7`), ListenFilter{ToolsListChanged: true}, nil)
	}()
	n.wait(t, 1)                         // acknowledged: subscribed
	f.Publish(nil, "promptsListChanged") // not asked for
	f.Publish(nil, "toolsListChanged")
	got := n.wait(t, 2)
	if got[0] != `notifications/subscriptions/acknowledged {"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}` ||
		got[1] != `notifications/tools/list_changed {"_meta":{"io.modelcontextprotocol/subscriptionId":7}}` {
		t.Fatalf("notifications %q", got)
	}
	f.Close()
	if err := <-done; err != nil {
		t.Fatalf("Listen after Close: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := new(Feed).Listen(ctx, nil, n.Notify, json.RawMessage(`8`), ListenFilter{}, nil); err != context.Canceled {
		t.Fatalf("Listen of a cancelled request: %v", err)
	}
}

// grabBroker is a memory broker that hands the test each subscription
// it makes.
type grabBroker struct {
	*state.MemoryBroker
	subs chan state.Subscription
}

func (b *grabBroker) Subscribe(ctx context.Context, topic string) (state.Subscription, error) {
	s, err := b.MemoryBroker.Subscribe(ctx, topic)
	if err == nil {
		b.subs <- s
	}
	return s, err
}

// Two feeds sharing a broker (two instances): a change published on one
// reaches the listeners of the other through one broker subscription per
// feed with listeners; when it fails, the listeners end with ErrRelay.
func TestFeedBroker(t *testing.T) {
	b := &grabBroker{MemoryBroker: state.NewMemoryBroker(100), subs: make(chan state.Subscription, 10)}
	var f1, f2 Feed
	n1, n2 := &notes{}, &notes{}
	done := make(chan error, 2)
	go func() {
		done <- f1.Listen(t.Context(), b, n1.Notify, json.RawMessage(`1`), ListenFilter{ToolsListChanged: true}, nil)
	}()
	go func() {
		done <- f1.Listen(t.Context(), b, n2.Notify, json.RawMessage(`2`), ListenFilter{ResourceSubscriptions: []string{"u"}}, nil)
	}()
	n1.wait(t, 1)
	n2.wait(t, 1)
	if len(b.subs) != 1 {
		t.Fatalf("%d broker subscriptions for one feed's listeners", len(b.subs))
	}
	if err := f2.Publish(b, "toolsListChanged"); err != nil {
		t.Fatal(err)
	}
	if err := f2.PublishResource(b, "u"); err != nil {
		t.Fatal(err)
	}
	if got := n1.wait(t, 2); got[1] != `notifications/tools/list_changed {"_meta":{"io.modelcontextprotocol/subscriptionId":1}}` {
		t.Fatalf("listener 1: %q", got)
	}
	if got := n2.wait(t, 2); got[1] != `notifications/resources/updated {"_meta":{"io.modelcontextprotocol/subscriptionId":2},"uri":"u"}` {
		t.Fatalf("listener 2: %q", got)
	}
	(<-b.subs).Close() // the broker subscription fails (ErrClosed, not asked for by the feed)
	for range 2 {
		if err := <-done; !errors.Is(err, ErrRelay) || !errors.Is(err, state.ErrClosed) {
			t.Fatalf("Listen after its relay failed: %v", err)
		}
	}
	if err := f2.Publish(b, "nope"); err == nil {
		t.Fatal("Publish of no list change: no error")
	}
}
