package otel

import (
	"context"
	"net/http"
	"time"

	"github.com/seedhq/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// NewClient returns c with a CLIENT span per call and notification (and
// per element of a batch) and rpc.client.call.duration recorded. The
// span's context goes to the server in the HTTP headers of each POST (see
// jsonrpc.ContextWithHeader), and in params._meta with WithParamsMeta. A
// batch's headers carry its first element's context.
func NewClient(c jsonrpc.Client, opts ...Option) jsonrpc.Client {
	return jsonrpc.Intercept(c, Interceptor(opts...))
}

// Interceptor is NewClient as a jsonrpc.Interceptor, for
// jsonrpc.WithInterceptors: every client Dial makes is then traced,
// including the calls of reconnecting and failover clients (one span per
// attempt).
func Interceptor(opts ...Option) jsonrpc.Interceptor {
	in := newInstruments(newConfig(opts), "client")
	return func(next jsonrpc.Invoker) jsonrpc.Invoker { return &client{next: next, in: in} }
}

var clientKind = trace.WithSpanKind(trace.SpanKindClient)

type client struct {
	next jsonrpc.Invoker
	in   *instruments
}

// start starts the span of one outgoing request.
func (c *client) start(ctx context.Context, name string) (context.Context, trace.Span, string) {
	method, recognized := c.in.method(name, false)
	spanName := method
	if !recognized {
		spanName = system
	}
	ctx, span := c.in.tracer.Start(ctx, spanName, clientKind,
		trace.WithAttributes(c.in.startAttrs(method, name, recognized, c.serverAttrs()...)...))
	return ctx, span, method
}

func (c *client) serverAttrs() []attribute.KeyValue {
	if c.in.serverAddr == "" {
		return nil
	}
	if c.in.serverPort == 0 {
		return []attribute.KeyValue{keyServerAddress.String(c.in.serverAddr)}
	}
	return []attribute.KeyValue{keyServerAddress.String(c.in.serverAddr), keyServerPort.Int(c.in.serverPort)}
}

// headers returns ctx with the trace context of ctx's span for the HTTP
// client to send.
func (c *client) headers(ctx context.Context) context.Context {
	h := http.Header{}
	c.in.prop.Inject(ctx, propagation.HeaderCarrier(h))
	if len(h) == 0 {
		return ctx
	}
	return jsonrpc.ContextWithHeader(ctx, h)
}

// params returns params with ctx's trace context in _meta, with WithParamsMeta.
func (c *client) params(ctx context.Context, params any) any {
	if !c.in.paramsMeta {
		return params
	}
	carrier := propagation.MapCarrier{}
	c.in.prop.Inject(ctx, carrier)
	return withMeta(params, carrier)
}

func (c *client) end(ctx context.Context, span trace.Span, start time.Time, method string, err error) {
	c.in.finish(ctx, span, time.Since(start).Seconds(), method, err, false, c.serverAttrs())
}

func (c *client) Call(ctx context.Context, method string, params, result any) error {
	start := time.Now()
	ctx, span, m := c.start(ctx, method)
	err := c.next.Call(c.headers(ctx), method, c.params(ctx, params), result)
	c.end(ctx, span, start, m, err)
	return err
}

func (c *client) Notify(ctx context.Context, method string, params any) error {
	start := time.Now()
	ctx, span, m := c.start(ctx, method)
	err := c.next.Notify(c.headers(ctx), method, c.params(ctx, params))
	c.end(ctx, span, start, m, err)
	return err
}

func (c *client) Batch(ctx context.Context, b *jsonrpc.Batch) error {
	start := time.Now()
	calls := b.Calls()
	type started struct {
		ctx    context.Context
		span   trace.Span
		method string
		params any
	}
	spans := make([]started, len(calls))
	for i, bc := range calls {
		sctx, span, m := c.start(ctx, bc.Method)
		spans[i] = started{sctx, span, m, bc.Params}
		bc.Params = c.params(sctx, bc.Params)
	}
	hctx := ctx
	if len(spans) > 0 {
		hctx = c.headers(trace.ContextWithSpan(ctx, spans[0].span))
	}
	err := c.next.Batch(hctx, b)
	for i, bc := range calls {
		bc.Params = spans[i].params // the caller's params, as given
		callErr := err
		if callErr == nil && !bc.IsNotification() {
			callErr = bc.Err
		}
		c.end(spans[i].ctx, spans[i].span, start, spans[i].method, callErr)
	}
	return err
}

// StartCall starts the CLIENT span of one call sent by other means than a
// client from NewClient (a hand-built message), and returns the context
// that carries the span (inject it into what goes out) and the function
// that ends it with the call's outcome: nil, the *jsonrpc.Error of an error
// response, or why no response came.
func StartCall(ctx context.Context, method string, opts ...Option) (context.Context, func(err error)) {
	c := &client{in: newInstruments(newConfig(opts), "client")}
	start := time.Now()
	ctx, span, m := c.start(ctx, method)
	return ctx, func(err error) { c.end(ctx, span, start, m, err) }
}
