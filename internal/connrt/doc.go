// Package connrt is the part of a connection's runtime that needs nothing
// of the jsonrpc package: the workers that run handlers (Go), the count of
// unwritten reply bytes that admission waits on (Backlog), a handler's
// context that costs nothing until somebody waits on it (Ctx), pooled
// timers that fire at a message's deadline (Timers), and what a server
// stops on Shutdown (Group), who reads a connection (ReadOwner), and our
// calls in flight and the rules that match responses to them (Calls). It
// calls nothing of its users but the functions they give it to run and,
// to start a read loop or cut a read, its connection (Reader), and to
// hand a call its response, its owner (Outcomes).
package connrt
