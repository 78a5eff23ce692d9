package chaos_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain: no goroutine outlives the tests (proxies, their connections
// and the clients through them all end).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
