package otel_test

import (
	"context"
	"testing"

	"github.com/seedhq/jsonrpc"
	jsonrpcotel "github.com/seedhq/jsonrpc/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type echoParams struct {
	A int    `json:"a"`
	B string `json:"b"`
}

// BenchmarkOverhead measures what the server middleware costs per call,
// one call at a time over TCP and over HTTP: off (no middleware), with
// no-op providers, and with the real SDK (every span sampled, batched to an
// exporter that drops them; the duration histogram aggregated). Run the
// variants in one run and compare:
//
//	go test -run '^$' -bench Overhead -count 6 ./otel | benchstat -col /otel -
func BenchmarkOverhead(b *testing.B) {
	for _, scheme := range []string{"tcp", "http"} {
		for _, variant := range []string{"off", "noop", "sdk"} {
			b.Run("transport="+scheme+"/otel="+variant, func(b *testing.B) {
				srv := benchServer(b, variant)
				l, err := srv.Listen(scheme + "://127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { srv.Shutdown(context.Background()) })
				c, err := jsonrpc.Dial(context.Background(), l.URL)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close() })
				ctx := context.Background()
				p := echoParams{A: 1, B: "hello"}
				var out echoParams
				b.ReportAllocs()
				for b.Loop() {
					if err := c.Call(ctx, "echo", p, &out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchServer is the echo server with the otel middleware off, on no-op
// providers, or on the SDK (sampler 1.0, spans batched to a discarding
// exporter, the histogram aggregated by a manual reader).
func benchServer(b *testing.B, variant string) *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "echo", func(_ context.Context, p echoParams) (echoParams, error) { return p, nil })
	srv := &jsonrpc.Server{Handler: mux}
	switch variant {
	case "noop":
		jsonrpcotel.Instrument(srv, jsonrpcotel.WithTracerProvider(tracenoop.NewTracerProvider()),
			jsonrpcotel.WithMeterProvider(metricnoop.NewMeterProvider()), jsonrpcotel.WithPropagators(propagation.TraceContext{}))
	case "sdk":
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() { tp.Shutdown(context.Background()); mp.Shutdown(context.Background()) })
		jsonrpcotel.Instrument(srv, jsonrpcotel.WithTracerProvider(tp), jsonrpcotel.WithMeterProvider(mp),
			jsonrpcotel.WithPropagators(propagation.TraceContext{}))
	}
	return srv
}

// BenchmarkOverheadInProcess is the server side alone (Server.Process, no
// socket, no client): the middleware's own cost, steadier than the round
// trips on a busy machine.
func BenchmarkOverheadInProcess(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","params":{"a":1,"b":"hello"},"id":1}`)
	for _, variant := range []string{"off", "noop", "sdk"} {
		b.Run("otel="+variant, func(b *testing.B) {
			srv := benchServer(b, variant)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if reply := srv.Process(ctx, msg); len(reply) == 0 {
					b.Fatal("no reply")
				}
			}
		})
	}
}
