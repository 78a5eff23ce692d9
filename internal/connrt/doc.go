// Package connrt is the runtime of a connection, in the parts that need
// nothing of the jsonrpc package:
//
//   - Go: the workers that run handlers;
//   - Backlog: the count of unwritten reply bytes that admission waits on;
//   - Ctx: a handler's context that costs nothing until somebody waits on it;
//   - Timers: pooled timers that fire at a message's deadline;
//   - ReadOwner: who reads a connection (loop, inline, caller, parked);
//   - Calls: our calls in flight, by id and by the message they were sent in;
//   - Group: what a server stops on Shutdown.
//
// It calls nothing of its users but the functions they give it to run,
// and one interface: a connection's Reader, to start a read loop or cut a
// read, which only the connection can do.
package connrt
