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
// out as is; context cancellation becomes CodeRequestCanceled; any other
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
// A Conn reads messages on one goroutine. Responses to our own calls are
// delivered as they are read. Each incoming request (or batch) is handled
// on a goroutine of its own, started in the order the messages arrived; at
// most Server.MaxConcurrency run at once per connection (further requests
// wait and the connection stops reading meanwhile, so a fast sender is
// slowed, never dropped). Likewise, while more than Server.MaxQueuedBytes of
// its replies wait to be written, a connection takes no new request: a peer
// that stops reading its answers stops being read, and the server holds
// about MaxQueuedBytes plus MaxConcurrency replies for it, whatever the
// transport. With MaxConcurrency 1, requests are handled one at
// a time in arrival order; otherwise they run concurrently and their
// responses may leave in any order (ids match them). Elements of a batch run
// concurrently while the connection has spare capacity.
//
// On a byte stream (TCP, unix, stdio), a request that arrives with nothing
// else waiting to be read is served by the goroutine that read it, which
// then reads on: a fast reply leaves without any goroutine switch. While
// such a handler runs nothing is read, so a watchdog moves reading to a
// fresh goroutine once the handler has run for 1 ms (a message that comes
// meanwhile waits at most that long to be read), and a handler that calls
// its peer hands reading on at once. After a second of idleness the read
// goroutine is replaced by a fresh one, so an idle connection keeps only a
// small stack. Other handlers run on goroutines that are kept for 100 ms
// after use and reused, so their stacks have already grown; none lingers
// once traffic stops.
//
// A connection that has only made calls, one at a time (the peer has sent
// it no request or notification, as with most clients, and no call has
// overlapped another for 100 ms), stops reading between calls, and a caller
// reads its own response: the answer reaches it without a goroutine
// switch. A message that arrives between calls is read by the next caller,
// or within about 2 ms by a read goroutine the watchdog starts; a caller
// whose context ends stops reading at once, even halfway through a
// message, and nothing read is lost. Otherwise the connection keeps
// reading at all times.
//
// A handler may call its peer through ConnFromContext(ctx): while it waits
// for the answer it gives its concurrency slot back, so callbacks never
// deadlock the connection, even with MaxConcurrency 1.
//
// Call, Notify and Batch are safe for concurrent use; concurrent messages
// are coalesced into few writes. Closing a Conn (Close, a broken transport)
// fails every pending call with ErrClosed and cancels the context of every
// running handler. When the peer ends its side cleanly (EOF: a half-closed
// socket, stdin at its end), requests already read are still answered before
// the connection closes; when the transport breaks (a reset, an abnormal
// WebSocket close), running handlers are cancelled at once. On HTTP the
// handler's context is the request's, cancelled when the client goes away.
// An error response with id null (the peer could not read one of our
// messages) fails the waiting calls when they all belong to one message. Shutdown on a Conn or a
// Server stops reading new work, answers every request already read (those
// that arrive meanwhile get CodeRequestCanceled), then closes.
//
// A Server, a Mux and the clients are safe for concurrent use. Do not change
// a Server's fields while it serves.
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
//	header section (LSP)      8 KiB          fixed                   -32700, connection closed
//	unix socket file mode     0600           ListenSocketMode        (Listen refuses paths that are not sockets)
package jsonrpc
