package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/peterh/liner"
	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

const replHelp = `Type a call as METHOD [PARAMS]: PARAMS is one JSON value or key=value pairs.
  subtract [42,23]
  subtract minuend=42 subtrahend=23
Commands:
  .methods             list the server's methods (from rpc.discover)
  .describe METHOD     show a method's params and result (from rpc.discover)
  .notify METHOD [PARAMS]  send a notification
  .help                this help
  .quit                leave (or Ctrl-D)`

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "repl URL",
		Short: "An interactive shell: call methods, with history and tab completion",
		Long: `An interactive shell on one connection. Each line is METHOD [PARAMS] (one
JSON value or key=value pairs); results print as with call, JSON-RPC errors
as one JSON object on stderr. History is kept across runs in
$JRPC_HISTORY, else $XDG_STATE_HOME/jrpc/history, else the user cache
directory. Method names complete with Tab when the server offers
rpc.discover.

When standard input is not a terminal, lines are read plainly (no prompt,
no history), so a script can drive it: printf 'get_data\n' | jrpc repl URL.

` + replHelp,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, _, err := newTarget(args)
			if err != nil {
				return err
			}
			return runREPL(cmd.Context(), t, os.Stdin, isTerminal(os.Stdin.Fd()) && isTerminal(os.Stdout.Fd()))
		},
	})
}

// repl is the state of an interactive session.
type repl struct {
	t       *target
	c       jsonrpc.Client
	methods []string
	doc     *discovery // nil when the server offers no rpc.discover
}

func runREPL(ctx context.Context, t *target, in io.Reader, interactive bool) error {
	dctx, cancel := callContext(ctx)
	c, err := t.dial(dctx)
	cancel()
	if err != nil {
		return err
	}
	defer c.Close()
	r := &repl{t: t, c: c}
	r.loadMethods(ctx)
	if interactive {
		return r.interactive(ctx)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if quit, err := r.line(ctx, sc.Text()); quit || err != nil {
			return err
		}
	}
	return nil
}

// loadMethods fetches the method names for completion from rpc.discover.
func (r *repl) loadMethods(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var raw json.RawMessage
	if err := r.c.Call(ctx, "rpc.discover", nil, &raw); err != nil {
		return
	}
	d, err := parseDiscovery(raw)
	if err != nil {
		return
	}
	r.doc = d
	r.methods = d.names()
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

// complete returns the completions of a line: method names and commands
// for the first word.
func (r *repl) complete(line string) []string {
	if strings.ContainsAny(line, " \t") {
		cmd, rest, _ := strings.Cut(line, " ")
		if cmd == ".describe" || cmd == ".notify" {
			var out []string
			for _, m := range r.methods {
				if strings.HasPrefix(m, strings.TrimLeft(rest, " ")) {
					out = append(out, cmd+" "+m)
				}
			}
			return out
		}
		return nil
	}
	var out []string
	for _, m := range append(slices.Clone(r.methods), ".methods", ".describe", ".notify", ".help", ".quit") {
		if strings.HasPrefix(m, line) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

func (r *repl) interactive(ctx context.Context) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	ln.SetCompleter(r.complete)
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
	fmt.Fprintf(os.Stderr, "connected to %s", r.t)
	if len(r.methods) > 0 {
		fmt.Fprintf(os.Stderr, " (%d methods; Tab completes)", len(r.methods))
	}
	fmt.Fprintln(os.Stderr, "; .help for help, Ctrl-D to leave")
	for {
		text, err := ln.Prompt("jrpc> ")
		if errors.Is(err, liner.ErrPromptAborted) {
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			fmt.Fprintln(os.Stderr)
			return nil
		}
		if strings.TrimSpace(text) != "" {
			ln.AppendHistory(text)
		}
		if quit, err := r.line(ctx, text); quit || err != nil {
			return err
		}
	}
}

// line runs one line. It returns quit for .quit, and an error only when
// the session cannot go on (the connection is lost).
func (r *repl) line(ctx context.Context, text string) (quit bool, err error) {
	text = strings.TrimSpace(text)
	if text == "" || strings.HasPrefix(text, "#") {
		return false, nil
	}
	word, rest, _ := strings.Cut(text, " ")
	rest = strings.TrimSpace(rest)
	notify := false
	switch word {
	case ".quit", ".exit":
		return true, nil
	case ".help":
		fmt.Fprintln(os.Stdout, replHelp)
		return false, nil
	case ".methods":
		if r.doc == nil {
			replError(errors.New("the server offers no rpc.discover: its methods are unknown"))
			return false, nil
		}
		r.doc.printList(os.Stdout, 0)
		return false, nil
	case ".describe":
		if r.doc == nil {
			replError(errors.New("the server offers no rpc.discover"))
			return false, nil
		}
		if err := r.doc.describe(os.Stdout, rest, ""); err != nil {
			replError(err)
		}
		return false, nil
	case ".notify":
		notify = true
		word, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimSpace(rest)
		if word == "" {
			replError(errors.New("usage: .notify METHOD [PARAMS]"))
			return false, nil
		}
	default:
		if strings.HasPrefix(word, ".") {
			replError(fmt.Errorf("unknown command %s (.help lists them)", word))
			return false, nil
		}
	}
	var args []string
	if rest != "" {
		if rest[0] == '{' || rest[0] == '[' || rest[0] == '"' {
			args = []string{rest}
		} else if args, err = splitCommand(rest); err != nil {
			replError(err)
			return false, nil
		}
	}
	params, err := buildParams(args, "", nil)
	if err != nil {
		replError(err)
		return false, nil
	}
	var p any
	if params != nil {
		p = params
	}
	cctx, cancel := callContext(ctx)
	defer cancel()
	if notify {
		err = r.c.Notify(cctx, word, p)
	} else {
		var result json.RawMessage
		if err = r.c.Call(cctx, word, p, &result); err == nil {
			outputFor(os.Stdout).print(os.Stdout, result)
		}
	}
	var re *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &re):
		fmt.Fprintln(os.Stderr, string(errorJSON(re)))
	case errors.Is(err, context.DeadlineExceeded):
		replError(r.t.transportErr(err))
	default:
		return false, r.t.transportErr(err) // the connection is gone
	}
	return false, nil
}

func replError(err error) {
	fmt.Fprintf(os.Stderr, "error: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) && ee.hint != "" {
		fmt.Fprintf(os.Stderr, "  try: %s\n", ee.hint)
	}
}
