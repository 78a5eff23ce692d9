package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/seedhq/jsonrpc"
	jsonrpcotel "github.com/seedhq/jsonrpc/otel"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Telemetry follows the OpenTelemetry environment variables:
//
//	OTEL_TRACES_EXPORTER         otlp, console (on stderr) or none; unset: otlp when an
//	                             OTLP endpoint is set, none otherwise
//	OTEL_EXPORTER_OTLP_ENDPOINT  and the other OTEL_EXPORTER_OTLP_* variables (http/protobuf)
//	OTEL_SERVICE_NAME            service.name (default jrpc), OTEL_RESOURCE_ATTRIBUTES
//	OTEL_TRACES_SAMPLER          and OTEL_TRACES_SAMPLER_ARG, as the SDK reads them
//
// and serve's --metrics URL serves Prometheus text.
const telemetryHelp = `Telemetry (OpenTelemetry environment variables):
  OTEL_TRACES_EXPORTER=otlp|console|none   console prints spans on stderr; otlp is the
                                           default when OTEL_EXPORTER_OTLP_ENDPOINT is set
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS
  OTEL_SERVICE_NAME (default jrpc), OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG]`

// tracesExporters returns the exporters OTEL_TRACES_EXPORTER lists
// (comma-separated, as the specification allows), or none.
func tracesExporters(ctx context.Context) ([]sdktrace.SpanExporter, error) {
	names := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	if names == "" && (os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		names = "otlp"
	}
	var exps []sdktrace.SpanExporter
	for _, name := range strings.Split(names, ",") {
		var exp sdktrace.SpanExporter
		var err error
		switch name = strings.TrimSpace(name); name {
		case "", "none":
			continue
		case "console":
			exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
		case "otlp":
			if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
				return nil, usageErrorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: jrpc exports OTLP over http/protobuf only", p)
			}
			exp, err = otlptracehttp.New(ctx)
		default:
			return nil, usageErrorf("OTEL_TRACES_EXPORTER=%s: want otlp, console or none", name)
		}
		if err != nil {
			return nil, fmt.Errorf("trace exporter %s: %w", name, err)
		}
		exps = append(exps, exp)
	}
	return exps, nil
}

// telemetry is the tracer and meter providers of one jrpc run.
type telemetry struct {
	tp       *sdktrace.TracerProvider // nil: tracing off
	mp       *sdkmetric.MeterProvider // nil: no metrics
	metrics  *http.Server
	shutdown []func(context.Context) error
}

// newTelemetry sets up tracing from the environment and, when metricsURL
// is set, a Prometheus endpoint there.
func newTelemetry(ctx context.Context, metricsURL string) (*telemetry, error) {
	tel := &telemetry{}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res := resource.Default() // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES included
	if os.Getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		if merged, err := resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", "jrpc"))); err == nil {
			res = merged
		}
	}
	exps, err := tracesExporters(ctx)
	if err != nil {
		return nil, err
	}
	if len(exps) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, exp := range exps {
			opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
		}
		tel.tp = sdktrace.NewTracerProvider(opts...)
		tel.shutdown = append(tel.shutdown, tel.tp.Shutdown)
	}
	if metricsURL != "" {
		if err := tel.serveMetrics(metricsURL, res); err != nil {
			tel.close()
			return nil, err
		}
	}
	return tel, nil
}

// serveMetrics serves Prometheus text on metricsURL (http://host:port/path).
func (tel *telemetry) serveMetrics(metricsURL string, res *resource.Resource) error {
	u, err := url.Parse(metricsURL)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return &exitError{code: exitUsage, err: fmt.Errorf("--metrics %q: want an http:// URL", metricsURL), hint: "--metrics http://127.0.0.1:9464/metrics"}
	}
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return err
	}
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res))
	tel.shutdown = append(tel.shutdown, tel.mp.Shutdown)
	nl, err := net.Listen("tcp", u.Host)
	if err != nil {
		return &exitError{code: exitTransport, err: fmt.Errorf("cannot listen on %s for --metrics: %v", u.Host, err), hint: "pick another address, or port 0 for a free one"}
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	mux := http.NewServeMux()
	mux.Handle(path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	tel.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go tel.metrics.Serve(nl)
	tel.shutdown = append(tel.shutdown, tel.metrics.Shutdown)
	fmt.Fprintf(os.Stderr, "metrics on http://%s%s\n", nl.Addr(), path)
	return nil
}

// options are the otel options for what tel provides.
func (tel *telemetry) options() []jsonrpcotel.Option {
	var opts []jsonrpcotel.Option
	if tel.tp != nil {
		opts = append(opts, jsonrpcotel.WithTracerProvider(tel.tp))
	} else {
		opts = append(opts, jsonrpcotel.WithTracerProvider(noop.NewTracerProvider()))
	}
	if tel.mp != nil {
		opts = append(opts, jsonrpcotel.WithMeterProvider(tel.mp))
	}
	return opts
}

// instrument adds the otel middleware to srv when tracing or metrics are on.
func (tel *telemetry) instrument(srv *jsonrpc.Server) {
	if tel.tp == nil && tel.mp == nil {
		return
	}
	jsonrpcotel.Instrument(srv, tel.options()...)
}

// close flushes the exporters (within 5 s).
func (tel *telemetry) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	for i := len(tel.shutdown) - 1; i >= 0; i-- {
		errs = append(errs, tel.shutdown[i](ctx))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "jrpc: telemetry: %v\n", err)
	}
}

// traceCall starts the CLIENT span of a jrpc call when tracing is on, and
// puts its context in t's headers (HTTP, the WebSocket handshake); with
// verbose it prints the trace id on stderr. done ends the span with the
// call's outcome and flushes the exporter.
func traceCall(ctx context.Context, t *target, method string, verbose bool) (context.Context, func(error)) {
	tel, err := newTelemetry(ctx, "")
	if err != nil || tel.tp == nil {
		if err != nil {
			fmt.Fprintf(os.Stderr, "jrpc: tracing off: %v\n", err)
		}
		return ctx, func(error) {}
	}
	opts := tel.options()
	if t.url != nil {
		opts = append(opts, jsonrpcotel.WithServerAddress(t.url.String()))
	}
	ctx, end := jsonrpcotel.StartCall(ctx, method, opts...)
	if t.headers == nil {
		t.headers = http.Header{}
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(t.headers))
	if verbose {
		fmt.Fprintf(os.Stderr, "trace id %s\n", trace.SpanContextFromContext(ctx).TraceID())
	}
	return ctx, func(err error) {
		end(err)
		tel.close()
	}
}
