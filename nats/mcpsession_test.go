package nats_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/mcp/mcptest"
	"github.com/seedhq/jsonrpc/state"
)

// TestJetStreamMCPSessionState: two instances, each with its own NATS
// connection and SessionStore on one JetStream bucket: a session's log
// level and subscriptions set through one are honoured by the other, and
// a resource updated on one reaches the session through the other by a
// JetStream broker (mcptest.TestSharedSession).
func TestJetStreamMCPSessionState(t *testing.T) {
	ns := runJetStream(t)
	jsA, jsB := jsConn(t, ns), jsConn(t, ns)
	a := newSessionStore(t, jsA, "mcp_sessions")
	b := newSessionStore(t, jsB, "mcp_sessions")
	mcptest.TestSharedSession(t, a, b, newBroker(t, jsA, "mcp_updates"), newBroker(t, jsB, "mcp_updates"))
}

// BenchmarkSessionValues measures what a session's Values cost: set/* one
// Set (logging/setLevel, resources/subscribe), get/* the Get every request
// makes of a session without values and of one holding a level and ten
// subscriptions, in memory and in JetStream on an embedded nats-server.
//
//	go test -run '^$' -bench SessionValues -count 6 ./nats/ | benchstat -
func BenchmarkSessionValues(b *testing.B) {
	for _, s := range []struct {
		name  string
		store state.SessionStore
	}{
		{"memory", state.NewMemorySessionStore(nil)},
		{"jetstream", newSessionStore(b, jsConn(b, runJetStream(b)), "bench_values")},
	} {
		ctx := b.Context()
		bare := state.Session{ID: "bare-" + s.name, ProtocolVersion: "2025-11-25",
			ClientCapabilities: json.RawMessage(`{"elicitation":{}}`), Expires: time.Now().Add(time.Hour)}
		full := bare
		full.ID = "full-" + s.name
		full.Values = map[string]json.RawMessage{"mcp/level": json.RawMessage("3")}
		for i := range 10 {
			full.Values[fmt.Sprintf("mcp/sub/file:///project/src/module%d/file.go", i)] = json.RawMessage("true")
		}
		for _, x := range []state.Session{bare, full} {
			if err := s.store.Create(ctx, x); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("set/"+s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := s.store.Set(ctx, full.ID, "mcp/level", strconv.AppendInt(nil, int64(i%8), 10)); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, x := range []state.Session{bare, full} {
			b.Run("get/"+s.name+"/"+x.ID[:strings.IndexByte(x.ID, '-')], func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := s.store.Get(ctx, x.ID); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
