package mcp_test

import (
	"testing"

	"github.com/seedhq/jsonrpc/mcp/mcptest"
	"github.com/seedhq/jsonrpc/state"
)

// TestSessionStateAcrossInstances: two instances sharing a memory session
// store, and a memory broker or none (mcptest.TestSharedSession).
func TestSessionStateAcrossInstances(t *testing.T) {
	s := state.NewMemorySessionStore(nil)
	mcptest.TestSharedSession(t, s, s, nil, nil)
	b := state.NewMemoryBroker(64)
	mcptest.TestSharedSession(t, s, s, b, b)
}
