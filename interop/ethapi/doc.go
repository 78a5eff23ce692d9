// Package ethapi is the typed client (and server side) of the Ethereum
// execution APIs that jrpc gen makes from execution-apis' OpenRPC
// document; the interop tests call a go-ethereum rpc server with it.
package ethapi

//go:generate go run github.com/seedhq/jsonrpc/cmd/jrpc gen go --package ethapi --out ethapi.go ../../../shared/codegen-corpus/execution-apis/refs-openrpc.json
