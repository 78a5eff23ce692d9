package otel_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/seedhq/jsonrpc"
	jsonrpcotel "github.com/seedhq/jsonrpc/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A traced server and client: the server's span is the client's child.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	opts := []jsonrpcotel.Option{jsonrpcotel.WithTracerProvider(tp), jsonrpcotel.WithPropagators(propagation.TraceContext{})}

	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p subParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	jsonrpcotel.Instrument(srv, opts...)
	l, err := srv.Listen("http://127.0.0.1:0/")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer srv.Shutdown(context.Background())

	conn, err := jsonrpc.Dial(context.Background(), l.URL)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	c := jsonrpcotel.NewClient(conn, append(opts, jsonrpcotel.WithServerAddress(l.URL))...)
	defer c.Close()
	var diff float64
	c.Call(context.Background(), "subtract", []int{42, 23}, &diff)
	c.Call(context.Background(), "divide", []int{1, 0}, nil)

	for _, s := range spans.Ended() {
		parent := "root"
		if s.Parent().IsRemote() {
			parent = "child of the client's span"
		}
		fmt.Printf("%s %s (%s): %v\n", s.SpanKind(), s.Name(), parent, s.Status().Code)
	}
	// Output:
	// server subtract (child of the client's span): Unset
	// client subtract (root): Unset
	// server jsonrpc (child of the client's span): Error
	// client divide (root): Error
}
