//go:build race

package jsonrpc

// RaceEnabled: the race detector slows the tests that move hundreds of MiB
// (exported for the external test package).
const RaceEnabled = true
