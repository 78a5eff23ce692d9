// Package redial keeps clients connected, with no JSON-RPC in it: the
// engines of the jsonrpc package's ReconnectClient and FailoverClient. A
// Redialer holds one connection at a time and dials the next one whenever
// it drops, with doubling waits drawn at random from their upper half (so
// that the clients of a restarted server do not all come back at once);
// Acquire waits while it redials. A Pool spreads use over several
// endpoints in turn, setting aside one that cannot be reached and probing
// it every interval until it answers.
package redial
