package conformance_test

import (
	"context"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// stdioServerEnv makes the test binary a stdio server of the demo service
// (the target of the stdio tests).
const stdioServerEnv = "CONFORMANCE_STDIO_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) != "" {
		s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
		l, err := s.Listen("stdio:")
		if err != nil {
			os.Exit(2)
		}
		<-l.Done()
		s.Shutdown(context.Background())
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
