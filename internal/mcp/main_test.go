package mcp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when any leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
