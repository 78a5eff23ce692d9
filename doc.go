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
// On a byte stream, FramingAuto (the server's default on sockets and stdio)
// selects Content-Length framing only when the first bytes are a header
// name ("Content-Length:" or "Content-Type:", any case); anything else,
// JSON or not, is newline framing and gets its answer on that line.
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
// Request.Params may share memory with the read buffer: a handler must not
// keep it after returning (copy it to keep it). Register decodes params into
// a typed value before the handler runs, so typed handlers need not care.
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
//     every transport; a cancel by id reaches the first of them. The elements of a batch run concurrently
//     while the connection has spare capacity; the batch's answer is one
//     array, sent when the last element is done. Messages we send ([Conn.Call],
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
// Each role has one way of being configured ([Server] fields, [ListenOption],
// [WebSocketOption], [DialOption], [StreamOptions]), and an option's name says
// which family it belongs to:
//
//	what                          how                              applies to
//	a server                      Server fields (see Limits)       every transport
//	Server.Listen                 ListenOption: Listen...          ListenFraming (tcp, unix, stdio), ListenTLS (https,
//	                                                               wss, tls), ListenHandler (http, https), ListenSocketMode (unix)
//	Server.WebSocketHandler       WebSocketOption: WebSocket...    WebSocketOriginPatterns, WebSocketInsecureSkipVerify,
//	                                                               WebSocketPing (the server's side of WithPing),
//	                                                               WebSocketCompression (the server's side of WithCompression)
//	a client                      DialOption: With...              Dial, NewHTTPClient, DialWebSocket, DialCommand,
//	                                                               NewMessageClient (see below)
//	one byte stream               StreamOptions (a struct)         NewStream
//
// A DialOption that does not concern the transport dialled is ignored:
//
//	option               http(s)  ws(s)  tcp, tls, unix  DialCommand
//	WithHeader           yes      yes (handshake)
//	WithHTTPClient       yes      yes
//	WithTLSConfig        https    wss    tls
//	WithFraming                          yes             yes
//	WithServer                    yes    yes             yes
//	WithMaxMessageSize   yes      yes    yes             yes
//	WithPing                      yes
//	WithCompression      yes      yes
//	WithStderr, WithGracePeriod                          yes
//	WithStrictResults    yes      yes    yes             yes
//	WithReconnect,                yes    yes             NewReconnectClient
//	WithBackoff, WithOnReconnect
//	WithProbeInterval    DialFailover (any URL)
//	WithInterceptors     yes      yes    yes             yes (see Intercept)
//
// Results are decoded leniently (members a type does not name are
// ignored; see WithStrictResults). With WithReconnect, Dial returns a
// *ReconnectClient: re-dials wait [DefaultReconnectMinDelay], doubling to
// [DefaultReconnectMaxDelay], and a call in flight at a drop fails with
// [ErrConnectionLost]. DialFailover spreads calls over several
// endpoints, setting aside one that fails and probing it every
// [DefaultProbeInterval] (docs/client.md).
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
//	                                                                 (N bytes, limit M)", errors.Is ErrMessageTooLarge
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
//
// MCP 2026-07-28 (stateless, per request) is served beside 2025-11-25 on one
// endpoint: StreamableHTTPOptions.StatelessVersions, MCPStateless,
// MCPMetaFromContext, InputRounds, ChangeFeed (docs/mcp.md).
package jsonrpc
