package conformance_test

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/conformance"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// In a Go test, one line checks a server: each failed MUST check is a test
// error, each failed SHOULD or MAY check is logged.
func ExampleRun() {
	srv := httptest.NewServer(&jsonrpc.Server{Handler: demo.Shared{}.NewMux()})
	defer srv.Close()

	t := &testing.T{} // in a real test: the test's own *testing.T
	rep := conformance.Run(t, &conformance.HTTPTarget{URL: srv.URL})

	fmt.Println("every MUST check passed:", rep.OK(), "failed:", t.Failed())
	// Output: every MUST check passed: true failed: false
}
