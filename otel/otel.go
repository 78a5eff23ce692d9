package otel

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const (
	// ScopeName is the instrumentation scope of the spans and metrics.
	ScopeName = "github.com/seedhq/jsonrpc/otel"
	// SchemaURL is the semantic conventions version followed.
	SchemaURL = "https://opentelemetry.io/schemas/1.44.0"
	// Other is the rpc.method (and error.type) of what is not recognized.
	Other  = "_OTHER"
	system = "jsonrpc"
)

// Attribute keys (semconv v1.44.0).
const (
	keySystem         = attribute.Key("rpc.system.name")
	keyMethod         = attribute.Key("rpc.method")
	keyMethodOriginal = attribute.Key("rpc.method_original")
	keyVersion        = attribute.Key("jsonrpc.protocol.version")
	keyRequestID      = attribute.Key("jsonrpc.request.id")
	keyStatusCode     = attribute.Key("rpc.response.status_code")
	keyErrorType      = attribute.Key("error.type")
	keyPeerAddress    = attribute.Key("network.peer.address")
	keyPeerPort       = attribute.Key("network.peer.port")
	keyServerAddress  = attribute.Key("server.address")
	keyServerPort     = attribute.Key("server.port")

	// The conventions before v1.39 (OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup).
	keyOldSystem       = attribute.Key("rpc.system")
	keyOldVersion      = attribute.Key("rpc.jsonrpc.version")
	keyOldRequestID    = attribute.Key("rpc.jsonrpc.request_id")
	keyOldErrorCode    = attribute.Key("rpc.jsonrpc.error_code")
	keyOldErrorMessage = attribute.Key("rpc.jsonrpc.error_message")
)

// DurationBuckets are the histogram bucket boundaries (seconds) the
// conventions advise for rpc.server.call.duration and rpc.client.call.duration.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// oldDurationBuckets are the same boundaries in milliseconds.
var oldDurationBuckets = []float64{5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

// Option configures Middleware, Instrument and NewClient.
type Option func(*config)

type config struct {
	tp         trace.TracerProvider
	mp         metric.MeterProvider
	prop       propagation.TextMapPropagator
	known      func(method string) bool
	paramsMeta bool
	serverAddr string
	serverPort int
	dup        bool
}

// WithTracerProvider sets the source of tracers (default: the global one).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider sets the source of meters (default: the global one).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagators sets how trace context is read and written (default:
// the global propagator, see otel.SetTextMapPropagator).
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.prop = p }
}

// WithMethods sets which method names are recorded as they are; others
// are recorded as "_OTHER". On a server, Instrument recognizes the methods
// of the Server's Mux; Middleware alone recognizes none unless told. A
// client recognizes every name unless told.
func WithMethods(known func(method string) bool) Option {
	return func(c *config) { c.known = known }
}

// WithParamsMeta makes the client put its span's context in each
// request's params._meta (traceparent, tracestate), so that it crosses
// every transport, not only HTTP. Params must then be a JSON object (or
// none); positional params are sent unchanged.
func WithParamsMeta() Option { return func(c *config) { c.paramsMeta = true } }

// WithServerAddress sets the client side's server.address and server.port
// from "host:port", a host alone, or the URL the client dialled
// ("https://api.example.com/rpc": port 443; "unix:///run/x.sock": the path).
func WithServerAddress(addr string) Option {
	return func(c *config) {
		c.serverAddr, c.serverPort = serverAddress(addr)
	}
}

func serverAddress(addr string) (string, int) {
	u, err := url.Parse(addr)
	if err != nil || !strings.Contains(addr, "://") {
		return splitHostPort(addr)
	}
	if u.Scheme == "unix" {
		return u.Path, 0
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		switch u.Scheme {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		}
	}
	p, _ := strconv.Atoi(port)
	return host, p
}

func newConfig(opts []Option) *config {
	c := &config{dup: stabilityDup(os.Getenv("OTEL_SEMCONV_STABILITY_OPT_IN"))}
	for _, o := range opts {
		o(c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	return c
}

// stabilityDup reports whether OTEL_SEMCONV_STABILITY_OPT_IN asks for both
// the current and the earlier RPC conventions.
func stabilityDup(v string) bool {
	for _, s := range strings.Split(v, ",") {
		if strings.TrimSpace(s) == "rpc/dup" {
			return true
		}
	}
	return false
}

// instruments are what one side (server or client) records with.
type instruments struct {
	*config
	tracer      trace.Tracer
	duration    metric.Float64Histogram
	oldDuration metric.Float64Histogram // with dup only

	// The record options of each series, built once (the series are
	// bounded: methods are recognized or _OTHER, codes are the handlers').
	mu     sync.RWMutex
	series map[seriesKey]*seriesOptions
}

type seriesKey struct{ method, errorType string }

type seriesOptions struct{ current, old []metric.RecordOption }

// maxCachedSeries bounds the series whose options are kept.
const maxCachedSeries = 4096

func newInstruments(c *config, side string) *instruments {
	in := &instruments{config: c}
	in.tracer = c.tp.Tracer(ScopeName, trace.WithSchemaURL(SchemaURL))
	meter := c.mp.Meter(ScopeName, metric.WithSchemaURL(SchemaURL))
	what := "incoming"
	if side == "client" {
		what = "outgoing"
	}
	var err error
	in.duration, err = meter.Float64Histogram("rpc."+side+".call.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Measures the duration of an "+what+" Remote Procedure Call (RPC)."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		otel.Handle(err)
	}
	if c.dup {
		in.oldDuration, err = meter.Float64Histogram("rpc."+side+".duration",
			metric.WithUnit("ms"),
			metric.WithDescription("Measures the duration of "+strings.TrimSuffix(what, "going")+"bound RPC."),
			metric.WithExplicitBucketBoundaries(oldDurationBuckets...))
		if err != nil {
			otel.Handle(err)
		}
	}
	return in
}

// method returns the rpc.method to record for name.
func (in *instruments) method(name string, serverDefault bool) (string, bool) {
	if in.known == nil {
		if serverDefault {
			return Other, false
		}
		return name, true
	}
	if in.known(name) {
		return name, true
	}
	return Other, false
}

// startAttrs are the attributes known when a span starts.
func (in *instruments) startAttrs(method, original string, recognized bool, extra ...attribute.KeyValue) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8+len(extra))
	attrs = append(attrs, keySystem.String(system), keyMethod.String(method))
	if !recognized {
		attrs = append(attrs, keyMethodOriginal.String(original))
	}
	attrs = append(attrs, keyVersion.String("2.0"))
	if in.dup {
		attrs = append(attrs, keyOldSystem.String(system), keyOldVersion.String("2.0"))
	}
	return append(attrs, extra...)
}

// errorAttrs returns error.type (and rpc.response.status_code when the
// peer answered with an error object) for err, and the status message.
func errorAttrs(err error, server bool) (errorType string, code int64, msg string) {
	var e *jsonrpc.Error
	switch {
	case server:
		code = jsonrpc.CodeOf(err)
		if errors.As(err, &e) && e != nil {
			msg = e.Message
		} else {
			msg = err.Error()
		}
		return strconv.FormatInt(code, 10), code, msg
	case errors.As(err, &e) && e != nil:
		return strconv.FormatInt(e.Code, 10), e.Code, e.Message
	}
	msg = err.Error()
	var he *jsonrpc.HTTPError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", 0, msg
	case errors.Is(err, context.Canceled):
		return "canceled", 0, msg
	case errors.Is(err, jsonrpc.ErrClosed):
		return "closed", 0, msg
	case errors.As(err, &he):
		return "http_" + strconv.Itoa(he.StatusCode), 0, msg
	}
	return Other, 0, msg
}

// finish ends span with err's outcome and records the call's duration.
func (in *instruments) finish(ctx context.Context, span trace.Span, seconds float64, method string, err error, server bool, metricExtra []attribute.KeyValue) {
	var errorType, msg string
	var code int64
	if err != nil {
		errorType, code, msg = errorAttrs(err, server)
		if span.IsRecording() {
			if code != 0 {
				span.SetAttributes(keyStatusCode.String(strconv.FormatInt(code, 10)))
			}
			span.SetAttributes(keyErrorType.String(errorType))
			if in.dup && code != 0 {
				span.SetAttributes(keyOldErrorCode.Int64(code), keyOldErrorMessage.String(msg))
			}
			span.SetStatus(otelcodes.Error, msg)
		}
	}
	span.End()
	opts := in.seriesOptions(method, errorType, code, metricExtra)
	in.duration.Record(ctx, seconds, opts.current...)
	if in.oldDuration != nil {
		in.oldDuration.Record(ctx, seconds*1000, opts.old...)
	}
}

// seriesOptions returns the record options of one series.
func (in *instruments) seriesOptions(method, errorType string, code int64, extra []attribute.KeyValue) *seriesOptions {
	key := seriesKey{method, errorType}
	in.mu.RLock()
	o := in.series[key]
	in.mu.RUnlock()
	if o != nil {
		return o
	}
	attrs := []attribute.KeyValue{keySystem.String(system), keyMethod.String(method)}
	old := []attribute.KeyValue{keyOldSystem.String(system), keyMethod.String(method)}
	if errorType != "" {
		if code != 0 {
			attrs = append(attrs, keyStatusCode.String(strconv.FormatInt(code, 10)))
			old = append(old, keyOldErrorCode.Int64(code))
		}
		attrs = append(attrs, keyErrorType.String(errorType))
	}
	o = &seriesOptions{
		current: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(attrs, extra...)...))},
		old:     []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(old, extra...)...))},
	}
	in.mu.Lock()
	if in.series == nil {
		in.series = make(map[seriesKey]*seriesOptions)
	}
	if len(in.series) < maxCachedSeries {
		in.series[key] = o
	}
	in.mu.Unlock()
	return o
}

// requestID is the jsonrpc.request.id of id: a string id's text, a
// number's digits; "" (not recorded) for a notification or a null id.
func requestID(id jsonrpc.ID) string {
	raw := id.String()
	if raw == "" || id.IsNull() {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if err := unmarshal([]byte(raw), &s); err == nil {
			return s
		}
	}
	return raw
}

// splitHostPort splits "host:port" (or a host alone, or a unix path).
func splitHostPort(hostport string) (string, int) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, 0
	}
	p, _ := strconv.Atoi(port)
	return host, p
}
