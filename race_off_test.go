//go:build !race

package jsonrpc

const RaceEnabled = false
