// Package jsonrpc is a strict, fast JSON-RPC 2.0 toolkit: server, client and
// every transport (HTTP, WebSocket, TCP and unix sockets, stdio), sharing one
// decode → dispatch → encode path.
//
// # Serving
//
// Register typed methods on a Mux and serve it with a Server:
//
//	mux := jsonrpc.NewMux()
//	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p SubParams) (float64, error) {
//		return p.Minuend - p.Subtrahend, nil
//	})
//	srv := &jsonrpc.Server{Handler: mux}
//	l, err := srv.Listen("tcp://127.0.0.1:9090") // or http://, ws://, unix://, stdio:
//
// A Server is also an http.Handler, WebSocketHandler gives its WebSocket
// handler, Serve takes any net.Listener, and NewConn runs a connection over
// any Channel.
//
// # Calling
//
// Dial returns a Client for a URL; Call decodes the result, Notify sends a
// notification, Batch sends several requests at once:
//
//	c, err := jsonrpc.Dial(ctx, "tcp://127.0.0.1:9090")
//	var diff float64
//	err = c.Call(ctx, "subtract", []int{42, 23}, &diff)
//	var rpcErr *jsonrpc.Error
//	if errors.As(err, &rpcErr) { ... } // the server answered with an error object
//
// # The wire, exactly
//
// Every message is scanned once, strictly: invalid JSON or UTF-8 (including
// lone surrogate escapes and trailing bytes) is a parse error (-32700, id
// null); valid JSON that is not a request object is -32600, with the id
// echoed when a valid one could be read. Member names match
// case-sensitively; duplicate names and unknown envelope members are
// rejected (-32600, or -32602 inside params), so a message cannot mean one
// thing to us and another to a proxy. Ids are kept as the exact bytes sent
// and echoed byte-for-byte (a string stays a string; 2^64 stays 2^64).
// "id": null is a request and gets a response; a request without an id is a
// notification and never gets one, not even an error. A batch is answered
// by an array holding a response for each element that needs one, in any
// order; an empty batch gets one -32600 object and an all-notification batch
// gets nothing. A "result": null is written, never dropped. Methods named
// "rpc." are reserved for extensions (see Mux.HandleExtension). A UTF-8
// byte-order mark before a message is a parse error (-32700, named as
// such) on every transport: RFC 8259 §8.1 forbids sending one, and one
// answer everywhere beats a guess; on a stream the connection goes on.
//
// On a byte stream, [FramingAuto] (the server's default on sockets and
// stdio) selects Content-Length framing only when the first bytes are a
// header name; anything else, JSON or not, is newline framing.
//
// # Handlers and errors
//
// A Handler returns (result, error). A *Error (or an error wrapping one) goes
// out as is; context cancellation becomes CodeRequestCanceled; a handler
// still running at Server.HandlerTimeout (30 s on HTTP by default, none on
// streams) is answered at that moment with CodeRequestTimeout (-32002
// "request timed out", go-ethereum's code) and its context cancelled, with
// context.Cause naming the timeout; any other
// error becomes -32603 "internal error", with its text only when
// Server.ExposeInternalErrors is set. A panic in a handler becomes -32603 and
// is logged with its stack; the server keeps serving. A result that cannot
// be encoded becomes -32603. Clients return error responses as *Error, so
// errors.As works on both sides.
//
// [Request].Params may share the read buffer, reused for later messages;
// Register decodes params before the handler runs, so typed handlers need
// not care.
//
// # Streaming results
//
// A handler may return a [Stream] (an iter.Seq2[T, error]): the server
// writes the result as a JSON array, element by element, cut short (never
// completed wrongly) by an error midway; [CallIter] reads a result element
// by element as it arrives.
//
// # Subscriptions
//
// NewSubscriptions and AddSubscription offer server push in go-ethereum's
// convention (<ns>_subscribe, <ns>_subscription, <ns>_unsubscribe) on every
// transport with a connection; Subscribe is the client. The subscribe
// response precedes the subscription's events, events keep their order,
// buffers are bounded on both sides, and a subscription ends with its
// connection.
//
// # Concurrency
//
// What a [Conn] promises, on every [Channel]:
//
//   - Order. Requests and notifications of the peer are started in the
//     order they arrive. With [Server.MaxConcurrency] 1 they are handled one
//     at a time, in that order, and the responses leave in that order.
//     Otherwise handlers run concurrently and responses leave in the order
//     the handlers finished, which may differ from the order of the
//     requests (ids match them): a slow request never holds up the replies
//     to those behind it. Requests that arrive together (a pipelining
//     peer) start in their order, and their responses leave together, in
//     few writes, in the order they finished.
//   - Ids. An id is the client's to choose: a request whose id is already
//     in flight on the connection (the same id twice in one batch, or
//     reused before its answer) is served and answered like any other, on
//     every transport; a cancel by id reaches the first of them. The elements of a batch are served
//     in turn while each is quick; once one has run 500 µs, the rest run
//     beside it while the connection has spare capacity (so an element may
//     wait for a later one); the batch's answer is one array, sent when the
//     last element is done. Messages we send ([Conn.Call],
//     [Conn.Notify], [Conn.Batch]) leave in the order they were sent; concurrent ones may
//     be coalesced into one write.
//   - Bounds. At most MaxConcurrency handlers run at once per connection;
//     while that many run, or while more than [Server.MaxQueuedBytes] of
//     replies wait to be written, the connection takes no new request and
//     stops reading, so a fast or non-reading peer is slowed down, never
//     dropped, and its memory stays bounded whatever the transport. A
//     response to one of our calls is delivered as soon as it is read.
//   - Callbacks never deadlock. A handler may call or notify its peer
//     through [ConnFromContext](ctx): while it waits, its slot is free for
//     the peer's other requests, and a finished handler whose reply waits
//     to be written holds no slot either. Two peers whose handlers call
//     each other back, at any depth, on any Channel, keep going even with
//     MaxConcurrency 1. To reach the peer after the handler has returned,
//     keep [SessionConn](ctx): the connection itself on a stream, the
//     session's over Streamable HTTP (its messages go on the session's GET
//     stream).
//   - Streams. A [Stream] result is written as one message in pieces: while
//     it is written it occupies the connection's output, and the other
//     messages sent on the connection (replies, notifications, calls) wait
//     behind it; handlers keep running meanwhile. A stream that fails
//     after its first [StreamChunk] bytes closes the connection
//     (docs/streaming.md). The mirror on the reading side: while a
//     [CallIter] loop reads its response as it arrives (newline or
//     Content-Length framing, WebSocket), the connection's reader is lent
//     to it and nothing else is read from that connection; a Call on the
//     same connection from inside the loop waits for the loop to end.
//   - Nothing is left unread. However requests are scheduled, a message of
//     the peer (a notification between our calls, a hang-up) is read
//     promptly, and a caller whose context ends stops waiting at once,
//     without losing or misreading any message.
//
// What cancels what:
//
//   - The context of a call or notification bounds only that call: it
//     returns ctx's error, and a response that comes later is dropped.
//   - Under a [Convention] (Server.Convention: LSP's or MCP's), the peer's
//     cancel notification cancels the context of the handler serving the
//     request it names, and a call of ours whose context ends sends the peer
//     the matching cancel. A cancel is taken on the read goroutine and needs
//     no handler slot. [ReportProgress] sends progress, never after the response.
//   - Close, or a broken transport (a reset, an abnormal WebSocket close),
//     fails every pending call with an error matching [ErrClosed] (and the
//     cause) and cancels the context of every running handler.
//   - When the peer ends its side cleanly (EOF: a half-closed socket, stdin
//     at its end), requests already read are still answered, then the
//     connection closes.
//   - Shutdown ([Conn.Shutdown], [Server.Shutdown]) stops taking new work, answers every
//     request already read (those that arrive meanwhile get
//     [CodeRequestCanceled]), then closes; if its context ends first, it
//     closes at once.
//   - On HTTP, a handler's context is the request's, cancelled when the
//     client goes away.
//
// An error response with id null (the peer could not read one of our
// messages) fails the waiting calls when they all belong to one message; a
// batch answer that leaves calls out fails them with [ErrNoResponse].
//
// A [Server], a [Mux], a [Conn] and the clients are safe for concurrent use. Do not
// change a Server's fields while it serves.
//
// # Options
//
// Three families, one per place a setting belongs, and a name says which:
//
//   - A client's settings are functional options, [DialOption], all named
//     WithX, one family for every client ([Dial], [DialConn],
//     [DialWebSocket], [DialStreamableHTTP], [DialCommand], [DialFailover],
//     [NewHTTPClient], [NewMessageClient], [NewReconnectClient], and a
//     registered transport through [DialSettings]). Why: Dial picks the
//     transport from a URL at run time, so one list of options must carry
//     the settings of every transport it may reach (an option that does not
//     concern the transport dialled is ignored). A client's connection is
//     configured by these options alone (its handler, limits and
//     convention), never by a [Server].
//   - A server's policy and limits are plain fields, net/http style: the
//     fields of [Server] (every transport), and of the one options struct
//     of a server transport or feature ([StreamableHTTPOptions],
//     [WebSocketOptions], [SubscriptionsOptions] for [NewSubscriptions],
//     [SubscriptionKindOptions] for [AddSubscription], [LogOptions] for
//     [LogCalls]). Why: a server is built once and read by every
//     connection, so its settings are a value one can print, copy and
//     check; fields are set before serving and read concurrently, and the
//     zero value of each is its default.
//   - What belongs to one listener rather than to the server is a
//     [ListenOption], named ListenX, given to [Server.Listen] (or to
//     [Server.Serve] with a net.Listener of one's own): its framing, TLS,
//     socket mode, HTTP handlers and middleware. Why: one Server listens on
//     several URLs at once (tcp:// with line framing beside tls:// with
//     Content-Length, https:// beside a unix socket), each needing its own,
//     and the URL picks the transport as it does for Dial.
//
// Options of one call or one value are structs named for what they
// configure: [SubscribeOptions] ([SubscribeWith], the client's side of a
// subscription) and [StreamOptions] ([NewStream]). Each setting has one
// name per side: the message size is Server.MaxMessageSize on a server
// and WithMaxMessageSize on a client, wherever the messages come from
// ([DialSettings] hands the client's to a registered transport); the
// framing is ListenFraming on a server and WithFraming on a client.
//
// Every DialOption, with its default:
//
//	option                 default                    http(s)  ws(s)  tcp, tls, unix  DialCommand  Streamable
//	WithHeader             none                       yes      handshake                            yes
//	WithHTTPClient         keep-alive client          yes      yes                                  yes
//	WithTLSConfig          system roots               https    wss    tls                           https
//	WithFraming            FramingLine                                yes             yes
//	WithMaxMessageSize     DefaultMaxMessageSize      yes      yes    yes             yes          yes
//	WithPing               DefaultPingInterval/Timeout         yes
//	WithStallTimeout       off                                 yes    yes             yes
//	WithStderr             os.Stderr                                                  yes
//	WithGracePeriod        DefaultGracePeriod                                         yes
//	WithStreamableHTTP     off (plain HTTP)           yes
//	WithMCPVersion         off (no MCP client)                                                      yes (MCPAuto, or a revision)
//	WithMCPClientInfo      "seedhq-jsonrpc"                                                         yes
//	WithMCPCapabilities    {}                                                                       yes
//	WithMCPTasks           off (tasks not declared)                                                 yes
//	WithMaxInputRounds     DefaultMaxInputRounds                                                    yes
//	WithCompression        off                        gzip     deflate
//	WithReconnect          off                                 yes    yes                           (NewReconnectClient too)
//	WithBackoff            DefaultReconnectMin/MaxDelay        yes    yes
//	WithOnReconnect        none                                yes    yes
//	WithInterceptors       none                       yes      yes    yes             yes          yes (see Intercept)
//	WithProbeInterval      DefaultProbeInterval       (DialFailover: any URL)
//	WithStrictResults      off (lenient results)      yes      yes    yes             yes          yes
//	WithHandler            none: calls get -32601              yes    yes             yes          yes
//	WithMaxConcurrency     DefaultMaxConcurrency               yes    yes             yes          yes
//	WithAdmit              none                                yes    yes             yes          yes
//	WithLogger             none                                yes    yes             yes          yes
//	WithConvention         ConventionNone                      yes    yes             yes          yes
//	WithProgress           none                                yes    yes             yes          yes
//
// Every ListenOption ([Server.Listen], and [Server.Serve] for a
// net.Listener of one's own, where ListenFraming and ListenTLS mean what
// they mean for tcp:// and tls://), with its default:
//
//	ListenFraming          FramingAuto (tcp, tls, unix, stdio, Serve)
//	ListenTLS              none; required for https, wss, tls (Serve: a TLS handshake on each connection)
//	ListenHandler          none (http, https: another handler on a path of the same listener)
//	ListenHTTPMiddleware   none (http, https, ws, wss: wraps the listener's HTTP handler, e.g. authentication)
//	ListenSocketMode       0600 (unix)
//	ListenStreamableHTTP   off: http(s) serves plain HTTP; with it, Streamable HTTP with those options
//	ListenWebSocket        the WebSocketOptions defaults below (ws, wss)
//
// Every field of [WebSocketOptions] ([Server.WebSocketHandler], [ListenWebSocket]):
//
//	PingInterval, PingTimeout     DefaultPingInterval, DefaultPingTimeout (the server's side of WithPing)
//	BufferSize                    DefaultWebSocketBufferSize
//	Compression                   off (the server's side of WithCompression)
//	Subprotocols                  DefaultWebSocketSubprotocols
//
// Results are decoded leniently (members a type does not name are
// ignored; see WithStrictResults). With WithReconnect, Dial returns a
// *ReconnectClient: re-dials wait [DefaultReconnectMinDelay], doubling to
// [DefaultReconnectMaxDelay], and a call in flight at a drop fails with
// [ErrConnectionLost]. DialFailover spreads calls over several
// endpoints, setting aside one that fails and probing it every
// [DefaultProbeInterval] (docs/client.md).
//
// [Server] fields not in the Limits table below: Handler (required),
// Middleware (none), Convention (ConventionNone), OnProgress (none),
// ExposeInternalErrors (off), NotificationStatus (204), HTTPCompressMinSize
// (DefaultHTTPCompressMinSize; negative: never), Authorize and
// Admit (none: every call runs; see Access below), AllowedOrigins (none:
// same-origin only), AllowedHosts (none: any Host), HealthPath
// (DefaultHealthPath, under Listen), DrainDelay (0), TrustedProxies (none:
// X-Forwarded-For ignored), Logger (none).
//
// [StreamOptions] ([NewStream]): Framing (FramingAuto); its size limit and
// write timeout are the Conn's (Server.MaxMessageSize, Server.WriteTimeout:
// DefaultWriteTimeout on a socket, none on pipes and stdio;
// WithMaxMessageSize on a client).
//
// [StreamableHTTPOptions]: Sessions (off: stateless), InitializeMethod
// ("initialize"), SessionIdleTimeout (DefaultSessionIdleTimeout),
// MaxSessions (DefaultMaxSessions), SSE (SSEAuto), ProtocolVersions (any),
// StatelessVersions (none), ToolInputSchema (none: Mcp-Param-* headers
// unchecked), NoStandaloneStream (off), OutboxSize and
// OutboxBytes (DefaultOutboxSize, DefaultOutboxBytes), EventStoreSize and
// EventStoreBytes (DefaultEventStoreSize, DefaultEventStoreBytes; negative:
// no store), KeepAlive (DefaultKeepAlive), RetryDelay (DefaultRetryDelay),
// SessionStore (nil: sessions in this process only), SessionStaleness (0:
// every request asks the store), EventStore (nil: each session keeps its
// own events).
//
// [SubscriptionsOptions] ([NewSubscriptions], the server side): Namespace
// (go-ethereum's <ns>_subscribe, <ns>_unsubscribe, <ns>_subscription), or
// SubscribeMethod, UnsubscribeMethod and NotificationMethod (which replace
// the names it makes), MaxPerConn (DefaultMaxSubscriptionsPerConn), Broker
// (none: topics reach this process only); [SubscriptionKindOptions]
// ([AddSubscription], [AddTopic]): Buffer (DefaultSubscriptionBuffer), Overflow (OverflowBlock);
// [SubscribeOptions] on the client: Namespace (or SubscribeMethod,
// UnsubscribeMethod and NotificationMethod, which replace the names it
// makes), Buffer (DefaultClientSubscriptionBuffer). [LogOptions] ([LogCalls]): Params
// (off), MaxParams (DefaultMaxLoggedParams), Principal (none).
//
// # Streamable HTTP
//
// [Server.StreamableHTTPHandler] serves MCP's Streamable HTTP transport for
// any service. The contract: a POST of requests is answered by one JSON body
// or, when the client accepts text/event-stream and the handler sends the
// client something first, by an event stream ending with the response; a
// POST of notifications and responses only gets 202. Inside a handler,
// [ConnFromContext] reaches the client for the length of the POST;
// [SessionConn] (with Sessions) reaches it later, on the session's GET
// stream, whose messages wait in a bounded outbox. With Sessions, events
// carry ids and a client that reconnects with Last-Event-ID gets what it
// missed, once. Limits answer as on plain HTTP. The client is [DialConn]
// (or [DialStreamableHTTP]) on an http(s) URL.
//
// # Access: Authorize and Admit
//
// [Server.Authorize] judges each request (each batch element on its own)
// and [Server.Admit] each message as it is read, on every transport, before
// any handler runs; their docs say how a refusal is answered. Both are
// called concurrently and must be quick; [PeerFromContext] tells who is
// asking. On a client, [WithAdmit] is the same hook for what the server sends.
//
// # RegisterTransport
//
// A module of its own adds a URL scheme with [RegisterTransport] from its
// init, as database/sql drivers do, so the core never imports it. The
// contract: its DialFunc returns a [Client] (a *Conn when it has a
// connection, started with [DialSettings.NewConn] so that every DialOption
// holds and [DialConn] works) and honours the [DialSettings] it names; its ListenFunc serves every message with [Server.Process], so the
// server's limits, Admit and Authorize hold, and returns an [Endpoint] that
// Server.Shutdown drains. A built-in scheme cannot be replaced.
//
// # Limits
//
// Every limit has a default, a field or option, and a documented error;
// exceeding one never closes other callers' work:
//
//	limit                     default        where                   over it
//	message size              10 MiB         Server.MaxMessageSize   -32600 "message too large" (id null); line
//	                                                                 framing answers once the limit is crossed,
//	                                                                 skips the rest of the line and goes on, HTTP
//	                                                                 answers 413, Content-Length framing closes
//	response size (client)    10 MiB         WithMaxMessageSize      the call fails at once: "response too large
//	                                                                 (N bytes, limit M)", errors.Is ErrMessageTooLarge;
//	                                                                 CallIter over HTTP, Streamable HTTP (JSON),
//	                                                                 WebSocket and streams: the limit is per element
//	batch length              1000           Server.MaxBatchLen      one -32600 object; nothing runs
//	batch response size       10 MiB         Server.MaxResponseBytes responses past it become -32603 errors
//	nesting depth             128            Server.MaxDepth         -32600 (id null); invalid JSON past the limit
//	                                                                 is still -32700 (scanned on without recursion)
//	method name length        256 bytes      Server.MaxMethodLen     -32600
//	handlers per connection   8×GOMAXPROCS   Server.MaxConcurrency   further requests wait (read back-pressure)
//	connections per listener  16384          Server.MaxConns         sockets closed on accept, HTTP 503
//	stalled write (sockets)   30 s           Server.WriteTimeout     that connection is closed (no byte
//	                                                                 written for that long; stdio waits)
//	replies queued unwritten  1 MiB          Server.MaxQueuedBytes   no new request is read until the peer
//	                                                                 reads (back-pressure; nothing dropped)
//	handler run time          30 s on HTTP   Server.HandlerTimeout   -32002 "request timed out" at the deadline,
//	                          none on streams                        context cancelled; a batch keeps what is done
//	HTTP request body         30 s           Server.HTTPBodyTimeout  408 Request Timeout, connection closed
//	compressed bodies         decompressed size counts against the message size limits: a gzip request
//	                          body over MaxMessageSize gets 413, a gzip reply over WithMaxMessageSize
//	                          fails the call (ErrMessageTooLarge), a deflated WebSocket message closes 1009
//	header section (LSP)      8 KiB          fixed                   -32700, connection closed
//	unix socket file mode     0600           ListenSocketMode        (Listen refuses paths that are not sockets)
//	MCP requestState life     10 min         InputRounds.TTL         -32602 wrapping ErrRequestStateExpired
//	MCP input rounds (client) 8              WithMaxInputRounds      the call fails: ErrTooManyInputRounds
//
// MCP 2026-07-28 (stateless, per request) is served beside 2025-11-25 on one
// endpoint: StreamableHTTPOptions.StatelessVersions, MCPStateless,
// MCPMetaFromContext, InputRounds, ChangeFeed; its client, which finds
// the server's era, is DialStreamableHTTP with WithMCPVersion (docs/mcp.md).
package jsonrpc
