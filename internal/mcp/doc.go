// Package mcp holds the rules of the Model Context Protocol that need no
// JSON-RPC engine, with nothing of the root package in it: the revisions
// and their eras (meta.go), the per-request _meta of the stateless
// revision (2026-07-28 on) and its checks, the HTTP headers that mirror a
// request (Mcp-Method, Mcp-Name, Mcp-Param-*: header.go, paramheader.go),
// the server's checks of a stateless request (stateless.go), the sealed
// requestState of multi round-trip requests (state.go), and what a client
// keeps to write stateless requests (client.go).
//
// A rule that refuses a request returns an *Error, the JSON-RPC error the
// request gets: its fields are those of the root package's Error, which
// converts it as it is. Values of the root's public API (its error codes,
// _meta keys and revisions) are the same as the constants here
// (the root's tests check it).
package mcp
