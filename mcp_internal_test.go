package jsonrpc

import (
	"testing"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/streamable"
)

// TestMCPConstantsMatch: the public codes, revisions and _meta keys are
// those internal/mcp applies its rules with, and the depth bound is
// internal/streamable's.
func TestMCPConstantsMatch(t *testing.T) {
	for _, c := range []struct{ public, internal any }{
		{CodeHeaderMismatch, mcp.CodeHeaderMismatch},
		{CodeMissingClientCapability, mcp.CodeMissingClientCapability},
		{CodeUnsupportedProtocolVersion, mcp.CodeUnsupportedProtocolVersion},
		{CodeInvalidParams, mcp.CodeInvalidParams},
		{CodeMethodNotFound, mcp.CodeMethodNotFound},
		{MCPVersion2026, mcp.Version2026},
		{MCPVersion2025, mcp.Version2025},
		{MetaProtocolVersion, mcp.MetaProtocolVersion},
		{MetaClientInfo, mcp.MetaClientInfo},
		{MetaClientCapabilities, mcp.MetaClientCapabilities},
		{MetaLogLevel, mcp.MetaLogLevel},
		{MetaSubscriptionID, mcp.MetaSubscriptionID},
		{DefaultMaxDepth, streamable.MaxDepth},
	} {
		if c.public != c.internal {
			t.Errorf("public %v, internal/mcp %v", c.public, c.internal)
		}
	}
}
