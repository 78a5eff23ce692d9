// Command jrpc serves, calls, explores, load-tests, bridges, records, replays
// and mocks JSON-RPC 2.0 endpoints over HTTP, WebSocket, TCP, unix sockets and
// stdio.
//
//	jrpc serve                                  # the demo service on HTTP :8080 and TCP :9090
//	jrpc call http://127.0.0.1:8080/ subtract '[42,23]'
//	jrpc --exec 'jrpc serve --listen stdio:' call echo name=ada
//	jrpc repl tcp://127.0.0.1:9090
//	jrpc raw ws://127.0.0.1:8081/                # each line sent as typed, every message printed
//	jrpc bench tcp://127.0.0.1:9090 sum '[1,2]' -c 16 -n 100000
//	jrpc bridge --listen ws://127.0.0.1:8081/ --exec 'my-stdio-server'
//	jrpc record --listen tcp://127.0.0.1:7000 --out session.jsonl tcp://127.0.0.1:9090
//	jrpc replay session.jsonl --listen tcp://127.0.0.1:9091
//	jrpc mock openrpc.json --listen http://127.0.0.1:8082/
//	jrpc conform http://127.0.0.1:8080/         # the server against the JSON-RPC 2.0 specification
//
// Without a URL, $JRPC_URL is the target; @name names an endpoint of
// $XDG_CONFIG_HOME/jrpc/config (jrpc help config).
//
// Exit codes: 0 success, 1 the server answered with a JSON-RPC error,
// 2 bad usage, 3 transport failure, 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes, documented in `jrpc --help`.
const (
	exitOK          = 0
	exitRPCError    = 1   // the server answered with a JSON-RPC error object
	exitUsage       = 2   // bad command line, PARAMS or input file
	exitTransport   = 3   // could not connect, connection lost, timeout, bad response
	exitInterrupted = 130 // SIGINT while waiting
)

const exitCodesHelp = `Exit codes:
  0    success
  1    the server answered with a JSON-RPC error, limits included (-32600 or HTTP 413 or
       WebSocket close 1009 for a message too large, -32005 or HTTP 429 for a rate limit),
       printed as one JSON object on stderr; the same on every transport, with -v and --raw
  2    bad usage: unknown flag, missing argument, invalid PARAMS JSON, params that fail --check
  3    the exchange failed: connection refused or lost, timeout, other HTTP errors, invalid response
  130  interrupted (Ctrl-C)
(go run reports each of them as 1: build or install jrpc where they matter.)`

// globals holds the persistent flags shared by every command.
type globals struct {
	exec       string
	framing    string
	headers    []string
	timeout    time.Duration
	color      string
	maxSize    int64  // bytes in one message read from the server
	natsCreds  string // --nats-creds: the credentials file for nats:// URLs
	streamable bool   // --streamable: http(s):// targets speak Streamable HTTP
	mcpVersion string // --mcp-version: the MCP revision of --streamable (auto: the server's era)
}

var global globals

// rootCmd is the jrpc command; the subcommands add themselves to it in their
// own files' init functions.
var rootCmd = &cobra.Command{
	Use:   "jrpc",
	Short: "Serve, call, explore, load-test, bridge, record and mock JSON-RPC 2.0 endpoints",
	Long: `jrpc talks JSON-RPC 2.0 over every common transport. A target is a URL:

  http://host:port/path  https://…   one HTTP POST per message
  ws://host:port/path    wss://…     WebSocket, one message per text frame
  tcp://host:port                    TCP stream, newline-delimited (--framing lsp for Content-Length)
  tls://host:port                    the same over TLS
  unix:///path/to/socket             unix socket stream (unix://@name: an abstract socket, Linux)
  nats://host:port/subject           NATS request/reply on a subject

or, with --exec 'COMMAND ARGS', a server spawned as a subprocess and spoken to
over its stdin and stdout (its stderr is shown); the URL argument is then left out:

  jrpc --exec 'jrpc serve --listen stdio:' call subtract '[42,23]'

Without a URL, $JRPC_URL is the target; @name is a named endpoint of
$XDG_CONFIG_HOME/jrpc/config (see jrpc help config).

PARAMS are one JSON value ('[1,2]', '{"a":1}'), or key=value pairs (the value is
parsed as JSON when it is valid JSON, else taken as a string), or -d @file / -d @-.

` + exitCodesHelp,
	SilenceUsage:  true,
	SilenceErrors: true,
	PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
		if _, err := parseClientFraming(global.framing, cmd.Name() == "serve"); err != nil {
			return err
		}
		switch global.color {
		case "auto", "always", "never":
		default:
			return usageErrorf("--color must be auto, always or never, not %q", global.color)
		}
		return nil
	},
}

func init() {
	pf := rootCmd.PersistentFlags()
	pf.StringVar(&global.exec, "exec", "", "spawn `'COMMAND ARGS'` as a stdio server and talk to it instead of a URL")
	pf.StringVar(&global.framing, "framing", "", "framing on streams (tcp, unix, stdio): line or lsp (Content-Length); serve also takes auto")
	pf.StringArrayVarP(&global.headers, "header", "H", nil, "add an HTTP header `K:V` (HTTP requests, WebSocket handshake); repeatable")
	pf.DurationVar(&global.timeout, "timeout", 30*time.Second, "give up on a call after this long (0: no limit)")
	pf.Int64Var(&global.maxSize, "max-message-size", jsonrpc.DefaultMaxMessageSize, "the largest message to accept from the server, in `BYTES` (a larger response fails with \"response too large\", exit 3)")
	pf.StringVar(&global.natsCreds, "nats-creds", "", "authenticate nats:// URLs with this credentials `FILE` (JWT and nkey seed, as nsc writes; same as ?creds=FILE)")
	pf.BoolVar(&global.streamable, "streamable", false, "speak Streamable HTTP (MCP) to http(s):// targets: keep the session, read event-stream answers, and print the notifications a call produces on stderr as they arrive")
	pf.StringVar(&global.mcpVersion, "mcp-version", jsonrpc.MCPAuto, "with --streamable, the MCP revision to speak: auto (2026-07-28, stateless, when the server speaks it, else 2025-11-25 after initialize, else plain JSON-RPC), or a revision to pin (2026-07-28, 2025-11-25); -v prints the one reached. Given explicitly, a command target (--exec) speaks MCP over its stdio the same way")
	pf.StringVar(&global.color, "color", "auto", "colour output: auto (on a terminal, unless NO_COLOR is set), always or never")
	rootCmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v (see '%s --help')", err, c.CommandPath())
	})
	rootCmd.SetHelpTemplate(rootCmd.HelpTemplate())
}

// ownFlagsHelp makes cmd's help list only its own flags and the inherited
// ones named in keep (serve has no use for --exec or --timeout).
func ownFlagsHelp(cmd *cobra.Command, keep ...string) {
	help := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(keep, f.Name) {
				f.Hidden = true
			}
		})
		help(c, args)
	})
}

// exitError carries an exit code and an optional hint (what to try).
type exitError struct {
	code   int
	err    error
	hint   string
	quiet  bool // already reported (e.g. a response printed with --raw)
	asJSON bool // err is a *jsonrpc.Error: printed as one JSON object
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

func transportError(err error, hint string) error {
	return &exitError{code: exitTransport, err: err, hint: hint}
}

// rpcErrorExit reports a JSON-RPC error response: exit 1, and the error as
// one JSON object on stderr.
func rpcErrorExit(e *jsonrpc.Error) error {
	return &exitError{code: exitRPCError, err: e, asJSON: true}
}

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// execute runs the command line and returns the exit code.
func execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	addMethodCompletion()
	rootCmd.SetArgs(args)
	rootCmd.SetOut(stdout)
	rootCmd.SetErr(stderr)
	err := rootCmd.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		// cobra's own errors: unknown command, wrong argument count.
		ee = &exitError{code: exitUsage, err: err}
		if msg, near, ok := strings.Cut(err.Error(), "\n\nDid you mean this?\n"); ok {
			// cobra's suggestions: one per line, tab-indented.
			ee.err = errors.New(msg)
			ee.hint = "jrpc " + strings.Join(strings.Fields(near), ", jrpc ") + " (run 'jrpc --help' for the list of commands)"
		} else if strings.HasPrefix(err.Error(), "unknown command") {
			ee.hint = "run 'jrpc --help' for the list of commands"
		}
	}
	if ctx.Err() != nil && ee.code == exitTransport {
		ee = &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	var re *jsonrpc.Error
	switch {
	case ee.asJSON && errors.As(ee.err, &re):
		fmt.Fprintln(stderr, string(errorJSON(re)))
	case !ee.quiet:
		fmt.Fprintf(stderr, "jrpc: %s\n", oneLine(ee.err.Error()))
		if ee.hint != "" {
			fmt.Fprintf(stderr, "  try: %s\n", ee.hint)
		}
	}
	return ee.code
}

// oneLine keeps an error message on its first line: the newlines of wrapped
// causes (errors.Join, a server's text) become "; ". Lines that are meant to
// follow (indented: a caret under invalid JSON, a list of problems) stay.
func oneLine(msg string) string {
	lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		switch {
		case i == 0:
		case strings.HasPrefix(l, " "):
			b.WriteByte('\n')
		default:
			b.WriteString("; ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// argsFunc validates positional arguments, reporting problems as usage errors.
// min and max count the arguments after the URL; the URL is required unless
// --exec is given.
func targetArgs(names string, min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		n := len(args)
		switch {
		case global.exec != "":
			if n > 0 && looksLikeTarget(args[0]) {
				return &exitError{code: exitUsage, err: fmt.Errorf("--exec and the URL %s given together: jrpc talks to one of them", args[0]),
					hint: "drop --exec to use the URL, or the URL to spawn the command"}
			}
		case n > 0 && (looksLikeTarget(args[0]) || os.Getenv("JRPC_URL") == ""):
			n--
		case os.Getenv("JRPC_URL") != "":
			// The target is $JRPC_URL.
		default:
			return usageErrorf("missing URL: usage: jrpc %s URL %s (or jrpc --exec 'COMMAND' %s %s, or set JRPC_URL)", cmd.Name(), names, cmd.Name(), names)
		}
		if n < min {
			return usageErrorf("missing arguments: usage: %s", usageLine(cmd, names))
		}
		if max >= 0 && n > max {
			extra := args[len(args)-(n-max):]
			return usageErrorf("too many arguments (%s): usage: %s", strings.Join(extra, " "), usageLine(cmd, names))
		}
		return nil
	}
}

func usageLine(cmd *cobra.Command, names string) string {
	if global.exec != "" {
		return "jrpc --exec '" + global.exec + "' " + cmd.Name() + " " + names
	}
	return "jrpc " + cmd.Name() + " URL " + names
}
