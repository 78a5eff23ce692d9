// Package nats is the NATS transport of github.com/seedhq/jsonrpc: many
// server instances serve one subject as a queue group, and clients call them
// with NATS request/reply, so the broker balances the load and no client
// needs to know where an instance runs.
//
// Importing the package registers the nats:// scheme with jsonrpc.Dial and
// jsonrpc.Server.Listen:
//
//	import _ "github.com/seedhq/jsonrpc/nats"
//
//	l, err := srv.Listen("nats://127.0.0.1:4222/math")        // serve subject "math"
//	c, err := jsonrpc.Dial(ctx, "nats://127.0.0.1:4222/math") // call it
//
// Listen and Dial in this package do the same with options, in the
// vocabulary of package jsonrpc: an endpoint's settings are the fields of
// ListenOptions (QueueGroup, the micro service's Name, Version and
// Description, NATSOptions for any nats.go connection option), a client's
// are DialOptions named WithX (WithCallTimeout, WithNATSOptions).
//
// # URLs
//
// nats://[user:password@ | token@]host:port/subject[?query]. The path is the
// subject (dots allowed; wildcards only for Listen). The query may hold:
//
//	queue=NAME    the queue group (Listen; default DefaultQueueGroup)
//	name=NAME     the micro service name (Listen; default: from OpenRPC info)
//	creds=FILE    a credentials file (JWT and nkey seed, as nsc writes)
//	nkey=FILE     an nkey seed file
//	tls_ca=FILE   the CA bundle that signs the NATS server's certificate
//	tls_cert=FILE, tls_key=FILE   a client certificate
//
// An unknown query parameter is an error, so a misspelt credential never
// connects without it. jsonrpc.WithTLSConfig is honoured too.
//
// # Serving
//
// An endpoint subscribes to the subject in a queue group: the NATS server
// gives each message to one member of the group, so instances that share
// the group share the load. Each message is one JSON-RPC message (a
// request, a notification or a batch) and is served by
// jsonrpc.Server.Process, with every limit of the Server (a message over
// MaxMessageSize gets the usual -32600). The reply goes to the message's
// reply subject: a batch gets one reply. A message with no reply subject is
// served and not answered; a notification that came with a reply subject
// gets an empty message there (an acknowledgement, like HTTP's 204), never
// a JSON-RPC response. At most Server.MaxConcurrency messages are served at
// once per endpoint; past that, messages wait in the NATS client's pending
// queue (nats.go's slow-consumer limits apply).
//
// Each endpoint is also a NATS micro service (nats.go's micro package):
// $SRV.PING, $SRV.INFO and $SRV.STATS, and so `nats micro ls|info|stats`,
// list every instance with its request count. The name, version and
// description come from the OpenRPC document (rpc.discover's info) when the
// Server's handler has one, or from ListenOptions. micro measures
// num_requests and processing_time up to the hand-off of a message to a
// handler goroutine; the stats' data member carries the JSON-RPC view
// (StatsData): error responses, notifications, messages in flight and the
// handlers' own time.
//
// Shutdown (Server.Shutdown) drains: the endpoint unsubscribes first, so
// the NATS server routes new messages to the other members of the group,
// then serves every message it had already received, publishes the
// replies, and closes its connection. A rolling restart under load loses no
// call. If Shutdown's context ends first, the handlers still running are
// cancelled (their callers get CodeRequestCanceled if the reply can still
// be sent) and the connection closes.
//
// # Calling
//
// A Client sends each call, notification or batch as one NATS request and
// waits for its reply until the call's context ends (with no deadline in
// the context, DefaultCallTimeout; WithCallTimeout). Notify waits for the endpoint's
// acknowledgement, so it too reports a subject nobody serves. With no
// endpoint subscribed, the NATS server says so at once and the call fails
// with an error matching ErrNoResponders, not a timeout. Errors are those of
// jsonrpc.NewMessageClient: an error response is a *jsonrpc.Error.
package nats
