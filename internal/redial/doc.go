// Package redial holds one connection at a time and dials the next one
// whenever it drops, with no JSON-RPC in it: the engine of the jsonrpc
// package's ReconnectClient. Waits between dials start about Options.Min,
// double up to Options.Max, and are drawn at random from their upper half,
// so that the clients of a restarted server do not all come back at once.
// Callers take the current connection with Acquire, which waits while a
// new one is dialled.
package redial
