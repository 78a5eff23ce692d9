// Package mcp is a Model Context Protocol server on github.com/seedhq/jsonrpc:
// tools with typed arguments and results and every content type, resources
// and resource templates, prompts with arguments, completion, logging,
// list-changed notifications and pagination, served in both eras of the
// protocol by the same handlers: the session era (2025-11-25 and earlier,
// initialize first) and the stateless era (2026-07-28, every request
// carrying its _meta).
//
//	s := mcp.NewServer(mcp.Implementation{Name: "notes", Version: "1.0.0"})
//	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two numbers."},
//		func(ctx context.Context, a AddArgs) (AddResult, error) { return AddResult{Sum: a.A + a.B}, nil })
//	srv := &jsonrpc.Server{Handler: s.Mux(), Convention: jsonrpc.ConventionMCP}
//	http.Handle("/mcp", srv.StreamableHTTPHandler(s.StreamableHTTPOptions()))
//
// Contracts: a server answers what it has: an unknown tool or prompt is
// -32602, an unknown resource -32602 "Resource not found" with the uri in
// data; a tool whose handler fails answers a result with isError (a
// *jsonrpc.Error is sent as the response's error instead). Under the
// stateless era every result carries resultType "complete" and the
// server's identity in _meta, and the lists and reads their caching hints
// (CacheTTL). A server never sends a client a request (elicitation,
// sampling, roots: Ask) its capabilities do not cover. Registering after
// serving starts is safe and tells the clients (list_changed under
// 2025-11-25 to initialized sessions, subscriptions/listen under
// 2026-07-28). A tool with TaskSupport runs as a task (the Tasks
// extension) for a client that declares it, asking for input through
// tasks/update when it needs some; tasks are kept in a TaskStore (memory by
// default; package mcptest checks any implementation against the
// contract): see tasks.go, taskstore.go and docs/mcp.md. Behind a load
// balancer, with a state.SessionStore, a session's log level and
// subscriptions travel with it (its Values), and Server.Broker carries
// ResourceUpdated to every instance.
package mcp
