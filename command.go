package jsonrpc

import (
	"context"
	"io"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/netx"
)

// DefaultGracePeriod is how long closing a DialCommand connection waits
// for the command to exit after its standard input closed, before killing it.
const DefaultGracePeriod = 5 * time.Second

// WithStderr sends the standard error of a DialCommand subprocess to w
// (default os.Stderr; io.Discard drops it).
func WithStderr(w io.Writer) DialOption { return func(c *dialConfig) { c.stderr = w } }

// WithGracePeriod sets how long Close waits for a DialCommand subprocess to
// exit once its standard input is closed, before killing it (default
// DefaultGracePeriod).
func WithGracePeriod(d time.Duration) DialOption { return func(c *dialConfig) { c.grace = d } }

// DialCommand starts the command name with args and returns a Conn that
// talks JSON-RPC over its standard input and output, as LSP and MCP clients
// do. The package doc's table lists the options that apply (FramingHeader
// is LSP's WithFraming).
//
// ctx bounds the start only. Close (or the connection's end) closes the
// command's standard input, waits up to the grace period for it to exit,
// then kills and reaps it. When the command exits by itself the connection
// ends; if it failed, Conn.Err says how (an *exec.ExitError inside).
// Calls then fail with an error matching [ErrClosed], also one whose
// request was being written as the command exited or closed its input
// (that write's error, such as syscall.EPIPE, is wrapped too).
//
// The command's first output is checked against the framing: messages
// framed the other way end the connection at once, saying which WithFraming
// fits; text that is not JSON-RPC (a banner) is logged (WithLogger) and, if
// the command then ends, named in the error.
//
// With WithMCPVersion the connection is an MCP client that finds the
// command's era as a Streamable HTTP client does (server/discover under
// 2026-07-28, else initialize), and Conn.MCPVersion names it.
func DialCommand(ctx context.Context, name string, args []string, opts ...DialOption) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := newDialConfig(opts)
	fr := cfg.streamFraming()
	p, err := netx.StartCommand(name, args, netx.CommandOptions{Stderr: cfg.stderr, Grace: orDefault(cfg.grace, DefaultGracePeriod), Framing: framing.Framing(fr), Logger: cfg.logger, Closed: ErrClosed})
	if err != nil {
		return nil, err
	}
	return withStreamMCP(cfg.newConn(NewStream(p, StreamOptions{Framing: fr})), cfg)
}
