package jsonrpc_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the test binary if any goroutine is still running once
// every test of the package (internal and external) has finished: every
// transport, connection, handler, reconnect loop and cancelled call must
// clean up after itself. It is the package's only TestMain.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
