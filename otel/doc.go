// Package otel instruments github.com/seedhq/jsonrpc servers and clients
// with OpenTelemetry traces and metrics, following the RPC and JSON-RPC
// semantic conventions of semconv v1.44.0 (docs/rpc/json-rpc.md,
// rpc-spans.md, rpc-metrics.md). It depends on the OpenTelemetry API only:
// the application chooses the SDK and exporters (providers default to the
// global ones).
//
//	import jsonrpcotel "github.com/seedhq/jsonrpc/otel"
//
//	srv := &jsonrpc.Server{Handler: mux}
//	jsonrpcotel.Instrument(srv)                     // a SERVER span and a duration per request
//	c = jsonrpcotel.NewClient(c, jsonrpcotel.WithServerAddress("api.example.com:443"))
//
// # Spans
//
// One SERVER span per request, and per element of a batch; one CLIENT span
// per call or notification, and per element of a batch. The span is named
// after the method, or "jsonrpc" when the method is recorded as _OTHER.
// Attributes: rpc.system.name "jsonrpc", rpc.method, jsonrpc.protocol.version
// "2.0", jsonrpc.request.id (server side; absent for notifications and a
// null id), network.peer.address and network.peer.port (server side, when
// the transport has them), server.address and server.port (client side,
// WithServerAddress). An error response sets rpc.response.status_code and
// error.type to the error code ("-32602") and the span status to Error with
// the error's message. (After v1.44.0 the conventions' main branch renames
// rpc.response.status_code to rpc.status_code; this package follows the
// release.) Client spans carry no jsonrpc.request.id: the transport picks
// the id after the span has started.
//
// # Metrics
//
// rpc.server.call.duration and rpc.client.call.duration: histograms in
// seconds, with the bucket boundaries the conventions advise, and the
// attributes rpc.system.name, rpc.method, rpc.response.status_code and
// error.type (on errors), server.address and server.port (client side).
// The conventions define no in-flight metric, and they deprecated the
// request and response size metrics (v1.40.0): none is recorded.
//
// # Cardinality
//
// rpc.method is the method's name only when it is recognized: on a server,
// registered on the Server's Mux (Instrument) or accepted by WithMethods;
// any other name is recorded as "_OTHER" (spans keep the name in
// rpc.method_original), so a peer sending random method names creates no
// new series. A client records the names it calls unless WithMethods
// restricts them. error.type takes the error code of an error response, or
// for a call that got no response: "timeout", "canceled", "closed" (the
// connection ended), "http_NNN" (an HTTP status), "_OTHER".
//
// # Trace context
//
// The server takes the parent span from the request's params._meta
// (traceparent, tracestate: the convention MCP reserves), on every
// transport; failing that, from the span already in the context (an HTTP
// middleware's), or from the HTTP request's headers or the WebSocket
// handshake's. When _meta gives the parent, the transport's context is
// kept as a link. The client sends its span's context in the HTTP
// headers of each POST, and in params._meta on every transport with
// WithParamsMeta (opt-in: it changes the params the server sees, so the
// server's methods must accept a _meta member, as MCP servers do; a typed
// jsonrpc.Register struct rejects unknown members). A batch's elements are
// children of the message's context (its HTTP headers, or the span around
// it), or of their own _meta, linked then to the message's. The propagator
// is the global one unless WithPropagators says otherwise.
//
// # Earlier conventions
//
// OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup (read when the middleware or
// client is made) also emits the attributes and metric of the conventions
// before v1.39 (rpc.system, rpc.jsonrpc.version, rpc.jsonrpc.request_id,
// rpc.jsonrpc.error_code, rpc.jsonrpc.error_message; rpc.server.duration
// and rpc.client.duration in milliseconds), for dashboards that still use
// them. Without it, or with "rpc", only the current ones are emitted.
package otel
