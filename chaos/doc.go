// Package chaos is a JSON-RPC-aware fault proxy for tests, used the way
// net/http/httptest is: New starts a proxy in front of a target and returns
// its address; clients dial the proxy; the proxy forwards every message and
// injects the faults it was given into the ones they match.
//
//	p := chaos.New("tcp://127.0.0.1:9090", chaos.MustParse("method=eth_call,nth=2,drop"))
//	defer p.Close()
//	c, _ := jsonrpc.Dial(ctx, p.URL)
//
// Transports: tcp and unix (newline or Content-Length framing, detected from
// the client's first bytes, as the server does), ws, and http, which also
// carries Streamable HTTP (JSON answers, event-stream answers and the GET
// stream, whose events are messages too). tls://, https:// and wss://
// targets are dialled with Options.TargetTLS (default: the system's roots);
// the proxy itself listens in the clear (tcp://, http://, ws://). Stdio goes
// through the CLI (jrpc chaos --exec), or Pipe. A WebSocket message goes in
// the frame type (text or binary) of the last frame read from its sender.
//
// A Fault is a match and one action. The match: Method (a request's method;
// a response is matched by the method of the request it answers on the same
// connection or POST), Dir (In: towards the target; Out: towards the
// client), Nth (the N-th message that matched the rest, 1-based, counted
// over the whole proxy), P (a probability, drawn from a generator seeded by
// Options.Seed). A match left out matches every message. The first fault
// whose match, Nth and P select a message acts on it (each fault counts the
// messages its match selects, whichever acts); a message none selects is forwarded
// unchanged. The actions and what they do on each transport are Action's
// constants.
//
// A message no fault acts on costs little: about 0.7 µs of CPU a message
// over a plain TCP forwarder (BenchmarkOverhead, one call's two messages
// 38.3 µs against 36.9 µs of the whole process, 2 allocations), when no
// fault needs to read messages (faults with Dir In and no Method); a fault
// with a Method, or one that may act on answers, has every message parsed:
// about 2.7 µs a message more.
//
// The network faults match the kernel's: TestNetworkNamespaceFaults
// shapes a namespace's loopback with tc (tbf against bandwidth=; netem
// against delay= where the kernel has netem) and checks that a client sees
// the same within a factor of 1.6 (tbf at 2 Mbit/s: a 256 KiB answer in
// 1.15 s, through bandwidth=250000 in 1.02 s).
//
// Every injected fault is an Event: written as one line to Options.Log
// (one JSON object a line with Options.JSON), and kept for Events, so a test
// can assert what happened.
package chaos
