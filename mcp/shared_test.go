package mcp_test

import (
	"testing"

	"github.com/seedhq/jsonrpc/mcp/mcptest"
	"github.com/seedhq/jsonrpc/state"
)

// TestSessionStateAcrossInstances: two instances sharing a memory session
// store (mcptest.TestSharedSession).
func TestSessionStateAcrossInstances(t *testing.T) {
	s := state.NewMemorySessionStore(nil)
	mcptest.TestSharedSession(t, s, s)
}
