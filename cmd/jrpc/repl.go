package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/peterh/liner"
	"github.com/spf13/cobra"
)

const replHelp = `Type a call as METHOD [PARAMS]: PARAMS is one JSON value or key=value pairs.
  subtract [42,23]
  subtract minuend=42 subtrahend=23
Commands:
  .methods             list the server's methods (from rpc.discover)
  .describe METHOD     show a method's params and result (from rpc.discover)
  .notify METHOD [PARAMS]  send a notification
  .help                this help (help, ? without the dot too)
  .quit                leave (or Ctrl-D)`

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "repl URL",
		Short: "An interactive shell: call methods, with history and tab completion",
		Long: `An interactive shell on one connection. Each line is METHOD [PARAMS] (one
JSON value or key=value pairs); results print as with call, JSON-RPC errors
as one JSON object on stderr. History is kept across runs in
$JRPC_HISTORY, else $XDG_STATE_HOME/jrpc/history, else the user cache
directory. Method names, and then param names, complete with Tab when the
server offers rpc.discover. A line whose JSON params are not closed yet
continues on the next lines. Ctrl-C cancels the call running (over HTTP the
request is aborted; streams have no cancel message in JSON-RPC 2.0, so its
answer is dropped when it comes). When the server restarts, the next line
reconnects (and says so).

When standard input is not a terminal, lines are read plainly (no prompt,
no history), so a script can drive it: printf 'get_data\n' | jrpc repl URL.
Such a session exits with 1 when any call got a JSON-RPC error, 2 when a
line was not understood, 3 when the connection was lost for good.

` + replHelp,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, _, err := newTarget(args)
			if err != nil {
				return err
			}
			t.notices = true
			return runREPL(cmd.Context(), t, os.Stdin, isTerminal(os.Stdin.Fd()) && isTerminal(os.Stdout.Fd()))
		},
	})
}

// repl is the state of a session.
type repl struct {
	t       *target
	c       client
	methods []string
	doc     *discovery  // nil when the server offers no rpc.discover
	mcp     *mcpCatalog // an MCP server's tools, prompts and resources (nil: no MCP)
	worst   int         // the highest exit code of the session's failures

	mu     sync.Mutex
	cancel context.CancelFunc // of the call running (interactive Ctrl-C)
}

// lineSource reads the lines of a session: prompt is shown on a terminal.
// It returns errLineAborted when the user drops the entry (Ctrl-C).
type lineSource func(prompt string) (string, error)

var errLineAborted = errors.New("line aborted")

func runREPL(ctx context.Context, t *target, in io.Reader, interactive bool) error {
	if interactive {
		// Ctrl-C cancels the call running, not the session: the session
		// ends with Ctrl-D or .quit.
		ctx = context.WithoutCancel(ctx)
	}
	dctx, cancel := callContext(ctx)
	c, err := t.dial(dctx)
	cancel()
	if err != nil {
		return err
	}
	r := &repl{t: t, c: c}
	defer func() { r.c.Close() }()
	r.loadMethods(ctx)
	if interactive {
		return r.interactive(ctx)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 64<<20)
	err = r.loop(ctx, func(string) (string, error) {
		if sc.Scan() {
			return sc.Text(), nil
		}
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}, false)
	if err != nil {
		return err
	}
	if r.worst != exitOK {
		return &exitError{code: r.worst, err: errors.New("some lines of the session failed"), quiet: true}
	}
	return nil
}

// loop runs the lines of src until it ends or .quit. A line whose JSON
// params are not complete yet continues on the next lines.
func (r *repl) loop(ctx context.Context, src lineSource, interactive bool) error {
	for {
		text, err := src("jrpc> ")
		if errors.Is(err, errLineAborted) {
			continue
		}
		if err != nil {
			return nil // io.EOF: the end of input (Ctrl-D)
		}
		for incompleteParams(text) && err == nil {
			var more string
			if more, err = src("  ...> "); err == nil {
				text += "\n" + more
			}
		}
		if errors.Is(err, errLineAborted) {
			continue // Ctrl-C drops the entry
		}
		quit, err := r.line(ctx, text)
		if quit {
			return nil
		}
		if err != nil {
			if !interactive {
				return err
			}
			replError(err) // the server may come back: the next line reconnects
		}
	}
}

// incompleteParams reports whether a line's params hold a JSON array,
// object or string that has not ended yet.
func incompleteParams(text string) bool {
	_, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	if strings.HasPrefix(text, ".notify ") {
		_, rest, _ = strings.Cut(strings.TrimSpace(rest), " ")
	}
	_, err := splitParams(rest)
	return errors.Is(err, errIncomplete)
}

// loadMethods fetches the method names for completion from rpc.discover,
// or an MCP server's tools, prompts and resources.
func (r *repl) loadMethods(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var raw json.RawMessage
	err := r.c.Call(ctx, "rpc.discover", nil, &raw) // an MCP client finds the server's era before it
	if conn := r.c.conn(); conn != nil && conn.MCPVersion() != "" {
		r.mcp = loadMCPCatalog(ctx, r.c, conn.MCPVersion())
		r.methods = r.mcp.names()
		return
	}
	if err != nil {
		return
	}
	d, err := parseDiscovery(raw)
	if err != nil {
		return
	}
	r.doc = d
	r.methods = d.names()
}

// reconnect dials the target again when the connection was lost (the
// server restarted), with a notice. HTTP needs none: each call is a request.
func (r *repl) reconnect(ctx context.Context) error {
	conn := r.c.conn()
	if conn == nil {
		return nil
	}
	select {
	case <-conn.Done():
	default:
		return nil
	}
	dctx, cancel := callContext(ctx)
	c, err := r.t.dial(dctx)
	cancel()
	if err != nil {
		return fmt.Errorf("the connection to %s was lost and connecting again failed (the next line tries again): %w", r.t, err)
	}
	conn.Close()
	r.c = c
	fmt.Fprintf(os.Stderr, "(the connection to %s was lost; reconnected)\n", r.t)
	r.loadMethods(ctx)
	return nil
}

func historyPath() string {
	if p := os.Getenv("JRPC_HISTORY"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "jrpc", "history")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "jrpc", "history")
	}
	return ""
}

var replCommands = []string{".methods", ".describe", ".notify", ".help", ".quit"}

// complete completes the word before pos in line: the first word from the
// method names and commands, the method of .describe and .notify, and then
// the method's param names (as name=) from its schema.
func (r *repl) complete(line string, pos int) (head string, completions []string, tail string) {
	head, tail = line[:pos], line[pos:]
	start := strings.LastIndexAny(head, " \t") + 1
	word := head[start:]
	head = head[:start]
	fields := strings.Fields(head)
	var candidates []string
	switch {
	case len(fields) == 0:
		candidates = append(slices.Clone(r.methods), replCommands...)
	case len(fields) == 1 && (fields[0] == ".describe" || fields[0] == ".notify"):
		candidates = r.methods
	default:
		method, given := fields[0], fields[1:]
		if method == ".notify" {
			method, given = fields[1], fields[2:]
		}
		if len(given) > 0 && strings.ContainsAny(given[0][:1], "[{\"") {
			return head, nil, tail // JSON params: nothing to complete
		}
		for _, name := range r.paramNames(method) {
			if !slices.ContainsFunc(given, func(g string) bool { return strings.HasPrefix(g, name+"=") }) {
				candidates = append(candidates, name+"=")
			}
		}
	}
	for _, c := range candidates {
		if strings.HasPrefix(c, word) {
			completions = append(completions, c)
		}
	}
	sort.Strings(completions)
	return head, completions, tail
}

// paramNames returns the names a method takes by name, from rpc.discover
// (an MCP server: a tool's arguments).
func (r *repl) paramNames(method string) []string {
	if r.mcp != nil {
		return r.mcp.paramNames(method)
	}
	if r.doc == nil {
		return nil
	}
	m := r.doc.doc.Method(method)
	if m == nil || m.Variadic || m.ParamStructure == "by-position" {
		return nil
	}
	var names []string
	for _, p := range m.Params {
		names = append(names, p.Name)
	}
	if m.ParamsSchema != nil {
		names = append(names, sortedKeys(m.ParamsSchema.Properties)...)
	}
	return names
}

func (r *repl) interactive(ctx context.Context) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetWordCompleter(r.complete)
	ln.SetTabCompletionStyle(liner.TabPrints)
	hist := historyPath()
	if hist != "" {
		if f, err := os.Open(hist); err == nil {
			ln.ReadHistory(f)
			f.Close()
		}
	}
	saveHistory := func() {
		if hist == "" {
			return
		}
		os.MkdirAll(filepath.Dir(hist), 0o700)
		if f, err := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
			ln.WriteHistory(f)
			f.Close()
		}
	}
	defer saveHistory()

	// Ctrl-C while a call runs cancels it (at the prompt, liner reads it as
	// a key and clears the line).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			r.mu.Lock()
			if r.cancel != nil {
				r.cancel()
			}
			r.mu.Unlock()
		}
	}()

	fmt.Fprintf(os.Stderr, "connected to %s", r.t)
	if len(r.methods) > 0 {
		fmt.Fprintf(os.Stderr, " (%d methods; Tab completes)", len(r.methods))
	}
	fmt.Fprintln(os.Stderr, "; .help for help, Ctrl-C cancels a call, Ctrl-D leaves")
	var entry []string // the lines of the entry being read
	err := r.loop(ctx, func(prompt string) (string, error) {
		if prompt == "jrpc> " && len(entry) > 0 {
			ln.AppendHistory(strings.Join(entry, " "))
			entry = entry[:0]
		}
		text, err := ln.Prompt(prompt)
		if errors.Is(err, liner.ErrPromptAborted) {
			entry = entry[:0]
			return "", errLineAborted
		}
		if err != nil { // io.EOF: Ctrl-D
			fmt.Fprintln(os.Stderr)
			return "", err
		}
		if strings.TrimSpace(text) != "" {
			entry = append(entry, strings.TrimSpace(text))
		}
		return text, nil
	}, true)
	if len(entry) > 0 {
		ln.AppendHistory(strings.Join(entry, " "))
	}
	return err
}

// line runs one line. It returns quit for .quit, and an error when the
// connection is lost (or cannot be made again).
func (r *repl) line(ctx context.Context, text string) (quit bool, err error) {
	text = strings.TrimSpace(text)
	if text == "" || strings.HasPrefix(text, "#") {
		return false, nil
	}
	word, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	notify := word == ".notify"
	if notify {
		word, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimSpace(rest)
		if word == "" {
			r.fail(exitUsage, errors.New("usage: .notify METHOD [PARAMS]"))
			return false, nil
		}
	} else if cmd := r.asCommand(word); cmd != "" {
		return r.command(cmd, rest), nil
	}
	args, err := splitParams(rest)
	if err != nil {
		r.fail(exitUsage, fmt.Errorf("PARAMS %s: %w", cut(rest), err))
		return false, nil
	}
	params, err := buildParams(args, "", nil)
	if err != nil {
		r.fail(exitUsage, err)
		return false, nil
	}
	var p any
	if params != nil {
		p = params
	}
	if r.mcp != nil && !notify {
		word, p = r.mcp.asToolCall(word, params, p)
	}
	if err := r.reconnect(ctx); err != nil {
		r.worst = exitTransport
		return false, err
	}
	cctx, cancel := callContext(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		cancel()
	}()
	if r.doc != nil {
		warnIfDeprecated(r.doc.doc.Method(word))
	}
	if notify {
		err = r.c.Notify(cctx, word, p)
	} else {
		var result json.RawMessage
		err = r.c.Call(cctx, word, p, &result)
		r.t.drainNotices()
		r.t.watch.check(word)
		if err == nil {
			outputFor(os.Stdout).print(os.Stdout, result)
		}
	}
	return false, r.failed(ctx, err)
}

// failed reports how a line's call failed (nil: it did not), and
// reconnects when the connection is gone; it returns an error only when
// that fails.
func (r *repl) failed(ctx context.Context, err error) error {
	switch re := refusal(err); {
	case err == nil:
	case re != nil:
		fmt.Fprintln(os.Stderr, string(errorJSON(re)))
		r.worst = max(r.worst, exitRPCError)
	case errors.Is(err, context.Canceled) && ctx.Err() == nil:
		fmt.Fprintln(os.Stderr, "(call cancelled)")
		r.worst = max(r.worst, exitInterrupted)
	case errors.Is(err, context.DeadlineExceeded):
		r.fail(exitTransport, r.t.transportErr(err))
	default:
		// The connection is gone (a server restarted): say so and connect
		// again at once. The line is not sent again by itself: it may have
		// reached the server.
		r.fail(exitTransport, r.t.transportErr(err))
		if c := r.c.conn(); c != nil {
			c.Close()
			if err := r.reconnect(ctx); err != nil {
				return err
			}
			fmt.Fprintln(os.Stderr, "(the line was not sent again: run it again if it should be)")
		}
	}
	return nil
}

// asCommand is the command a line's first word names: a word with a dot,
// or help, ?, quit and exit typed without it (with a note), unless the
// server has a method of that name; "" for a method.
func (r *repl) asCommand(word string) string {
	if strings.HasPrefix(word, ".") {
		return word
	}
	cmd := map[string]string{"help": ".help", "?": ".help", "quit": ".quit", "exit": ".quit"}[word]
	if cmd == "" || slices.Contains(r.methods, word) {
		return ""
	}
	fmt.Fprintf(os.Stderr, "(%s is taken as %s: commands start with a dot)\n", word, cmd)
	return cmd
}

// command runs a dot command other than .notify; it returns quit for .quit.
func (r *repl) command(word, rest string) (quit bool) {
	switch word {
	case ".quit", ".exit":
		return true
	case ".help":
		fmt.Fprintln(os.Stdout, replHelp)
	case ".methods", ".describe":
		if r.mcp != nil && word == ".methods" {
			r.mcp.print(os.Stdout)
		} else if r.doc == nil {
			r.fail(exitUsage, errors.New("the server offers no rpc.discover: its methods are unknown"))
		} else if word == ".methods" {
			r.doc.printList(os.Stdout, 0)
		} else if err := r.doc.describe(os.Stdout, rest, nil); err != nil {
			r.fail(exitUsage, err)
		}
	default:
		r.fail(exitUsage, fmt.Errorf("unknown command %s (.help lists them)", word))
	}
	return false
}

// fail reports a failed line and remembers its exit code.
func (r *repl) fail(code int, err error) {
	r.worst = max(r.worst, code)
	replError(err)
}

func replError(err error) {
	fmt.Fprintf(os.Stderr, "error: %s\n", oneLine(err.Error()))
	var ee *exitError
	if errors.As(err, &ee) && ee.hint != "" {
		fmt.Fprintf(os.Stderr, "  try: %s\n", ee.hint)
	}
}
