// Package redial keeps clients connected, with no JSON-RPC in it: the
// engines of the jsonrpc package's ReconnectClient and FailoverClient.
//
// A Redialer holds one connection at a time and dials the next one
// whenever it drops (redial.go). Waits between dials start about
// Options.Min, double up to Options.Max, and are drawn at random from
// their upper half, so that the clients of a restarted server do not all
// come back at once. Callers take the current connection with Acquire,
// which waits while a new one is dialled.
//
// A Pool spreads use over several endpoints in turn (pool.go): one that
// cannot be reached is set aside and probed every interval until it
// answers.
package redial
