package otel

import (
	"context"
	"time"

	"github.com/seedhq/jsonrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// Instrument adds Middleware to srv.Middleware (outermost of what is there
// already), recognizing the methods of srv.Handler when it is a *Mux
// (WithMethods overrides). Call it before srv serves.
func Instrument(srv *jsonrpc.Server, opts ...Option) {
	if mux, ok := srv.Handler.(*jsonrpc.Mux); ok {
		opts = append([]Option{WithMethods(mux.Has)}, opts...)
	}
	srv.Middleware = append([]jsonrpc.Middleware{Middleware(opts...)}, srv.Middleware...)
}

// Middleware returns server middleware for jsonrpc.Server.Middleware that
// starts a SERVER span per request and records rpc.server.call.duration.
// See the package documentation for the names it records. Without
// WithMethods every method is recorded as "_OTHER"; Instrument sets it.
func Middleware(opts ...Option) jsonrpc.Middleware {
	in := newInstruments(newConfig(opts), "server")
	return func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			method, recognized := in.method(req.Method, true)
			name := method
			if !recognized {
				name = system
			}
			attrs := in.startAttrs(method, req.Method, recognized)
			if id := requestID(req.ID); id != "" {
				attrs = append(attrs, keyRequestID.String(id))
			}
			if in.dup && !req.IsNotification() {
				attrs = append(attrs, keyOldRequestID.String(requestID(req.ID)))
			}
			peer, hasPeer := jsonrpc.PeerFromContext(ctx)
			if hasPeer && peer.RemoteAddr != "" {
				host, port := splitHostPort(peer.RemoteAddr)
				attrs = append(attrs, keyPeerAddress.String(host))
				if port != 0 {
					attrs = append(attrs, keyPeerPort.Int(port))
				}
			}
			parent, links := in.parent(ctx, req, peer.Header)
			startOpts := []trace.SpanStartOption{serverKind, trace.WithAttributes(attrs...)}
			if links != nil {
				startOpts = append(startOpts, trace.WithLinks(links...))
			}
			start := time.Now()
			ctx, span := in.tracer.Start(parent, name, startOpts...)
			v, err := next.ServeRPC(ctx, req)
			in.finish(ctx, span, time.Since(start).Seconds(), method, err, true, nil)
			return v, err
		})
	}
}

// parent returns the context the request's span starts from: params._meta
// first, then a span already in ctx, then the transport's headers. When
// _meta gives the parent, the transport's span context becomes a link.
func (in *instruments) parent(ctx context.Context, req *jsonrpc.Request, header map[string][]string) (context.Context, []trace.Link) {
	transport := ctx
	if !trace.SpanContextFromContext(ctx).IsValid() && header != nil {
		transport = in.prop.Extract(ctx, propagation.HeaderCarrier(header))
	}
	meta := metaOf(req.Params)
	if meta == nil {
		return transport, nil
	}
	// Extract onto a context without a span, so that only _meta counts.
	fromMeta := trace.SpanContextFromContext(in.prop.Extract(context.Background(), meta))
	if !fromMeta.IsValid() {
		return transport, nil
	}
	var links []trace.Link
	if sc := trace.SpanContextFromContext(transport); sc.IsValid() && !sc.Equal(fromMeta) {
		links = []trace.Link{{SpanContext: sc}}
	}
	return trace.ContextWithRemoteSpanContext(in.prop.Extract(transport, meta), fromMeta), links
}
