package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"
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
