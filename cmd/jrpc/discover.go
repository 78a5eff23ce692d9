package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/spf13/cobra"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "discover URL",
		Short: "Print the server's OpenRPC document (rpc.discover)",
		Example: `  jrpc discover tcp://127.0.0.1:9090
  jrpc discover http://127.0.0.1:8080/ | jq '.methods[].name'`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, _, err := newTarget(args)
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd.Context())
			defer cancel()
			doc, err := fetchDiscover(ctx, t)
			if err != nil {
				return err
			}
			outputFor(os.Stdout).print(os.Stdout, doc)
			return nil
		},
	}, listCmd, &cobra.Command{
		Use:     "describe URL METHOD",
		Short:   "Show one method's params, result and errors as readable text (from rpc.discover)",
		Example: `  jrpc describe tcp://127.0.0.1:9090 subtract`,
		Args:    targetArgs("METHOD", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := discoverTarget(cmd.Context(), args)
			if err != nil {
				return err
			}
			return d.describe(os.Stdout, args[len(args)-1], func(command string) string { return commandPrefix(args, command) })
		},
	})
}

var listJSON bool

var listCmd = &cobra.Command{
	Use:   "list URL",
	Short: "List the server's methods with their signatures (from rpc.discover)",
	Long: `List the server's methods, one a line: signature and summary, cut to the
terminal's width on a terminal. With --json, one JSON array of
{"name","signature","summary","deprecated"} objects.`,
	Example: `  jrpc list tcp://127.0.0.1:9090
  jrpc list --json http://127.0.0.1:8080/ | jq -r '.[].name'`,
	Args: targetArgs("", 0, 0),
	RunE: func(cmd *cobra.Command, args []string) error {
		d, err := discoverTarget(cmd.Context(), args)
		if err != nil {
			return err
		}
		if listJSON {
			outputFor(os.Stdout).print(os.Stdout, d.listJSON())
			return nil
		}
		width := 0
		if isTerminal(os.Stdout.Fd()) {
			width = terminalColumns(os.Stdout.Fd())
		}
		d.printList(os.Stdout, width)
		return nil
	},
}

func init() {
	listCmd.Flags().BoolVar(&listJSON, "json", false, "print the methods as one JSON array")
}

// commandLine returns the start of a jrpc command line for command on t
// (for hints).
func (t *target) commandLine(command string) string {
	if t.command != nil {
		return "jrpc --exec " + shellQuote(global.exec) + " " + command
	}
	return "jrpc " + command + " " + shellQuote(t.raw)
}

// commandPrefix returns the start of a jrpc call command line for the target
// of a command's args, as the user gave it.
func commandPrefix(args []string, command string) string {
	if global.exec != "" {
		return "jrpc --exec " + shellQuote(global.exec) + " " + command
	}
	if arg, _, err := targetArg(args); err == nil && len(args) > 0 && args[0] == arg {
		return "jrpc " + command + " " + shellQuote(arg)
	}
	return "jrpc " + command // from $JRPC_URL
}

// discoverTarget dials the target of args and reads its discovery document.
func discoverTarget(ctx context.Context, args []string) (*discovery, error) {
	t, _, err := newTarget(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	raw, err := fetchDiscover(ctx, t)
	if err != nil {
		return nil, err
	}
	d, err := parseDiscovery(raw)
	if err != nil {
		return nil, transportError(fmt.Errorf("%s answered rpc.discover with something else than an OpenRPC document: %v", t, err), t.commandLine("discover")+" prints what it sent")
	}
	d.t = t
	return d, nil
}

// fetchDiscover calls rpc.discover. A server without it gets a usage-level
// explanation rather than a bare -32601.
func fetchDiscover(ctx context.Context, t *target) (json.RawMessage, error) {
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var doc json.RawMessage
	if err := c.Call(ctx, openrpc.DiscoverMethod, nil, &doc); err != nil {
		var re *jsonrpc.Error
		if errors.As(err, &re) && re.Code == jsonrpc.CodeMethodNotFound {
			fmt.Fprintln(os.Stderr, string(errorJSON(re)))
			return nil, &exitError{code: exitRPCError, err: fmt.Errorf("%s does not offer rpc.discover, so its methods cannot be listed", t), hint: "call methods directly with jrpc call"}
		}
		return nil, callErr(t, err)
	}
	return doc, nil
}

// discovery is a parsed OpenRPC document, and the target that sent it
// (for hints; "" in the REPL).
type discovery struct {
	doc *openrpc.Doc
	t   *target
}

func parseDiscovery(raw []byte) (*discovery, error) {
	doc, err := openrpc.ParseDocument(raw)
	if err != nil {
		return nil, err
	}
	return &discovery{doc: doc}, nil
}

func (d *discovery) names() []string {
	var out []string
	for _, m := range d.doc.Methods {
		out = append(out, m.Name)
	}
	sort.Strings(out)
	return out
}

func (d *discovery) method(name string) (*openrpc.Method, error) {
	if m := d.doc.Method(name); m != nil {
		return m, nil
	}
	var near []string
	for _, n := range d.names() {
		if strings.Contains(n, name) || strings.Contains(name, n) || levenshtein(n, name) <= 2 {
			near = append(near, n)
		}
	}
	hint := ".methods lists every method"
	if d.t != nil {
		hint = d.t.commandLine("list") + " shows every method"
	}
	if len(near) > 0 {
		hint = "did you mean " + strings.Join(near, " or ") + "?"
	}
	return nil, &exitError{code: exitUsage, err: fmt.Errorf("the server has no method %q", name), hint: hint}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// printList prints the methods: signature and summary, in width columns
// (0: 80, lines not cut). The summaries start in one column, beside the
// signatures that fit in listSignatureColumns (a longer signature has its
// summary on the next line, so that one long signature does not push
// every summary off the screen), and wrap at the width; a signature wider
// than the screen is cut on a terminal.
func (d *discovery) printList(w io.Writer, width int) {
	wrapAt := width
	if wrapAt <= 0 {
		wrapAt = 80
	}
	limit := min(listSignatureColumns, wrapAt/2)
	col := 0
	for _, name := range d.names() {
		if n := utf8.RuneCountInString(d.doc.Method(name).Signature()); n <= limit {
			col = max(col, n)
		}
	}
	col += 3
	indent := strings.Repeat(" ", col)
	for _, name := range d.names() {
		m := d.doc.Method(name)
		sig := m.Signature()
		lines := wrapWords(m.Summary, max(wrapAt-col, 20))
		if n := utf8.RuneCountInString(sig); n+3 <= col && len(lines) > 0 {
			lines[0] = sig + strings.Repeat(" ", col-n) + lines[0]
		} else {
			io.WriteString(w, fitWidth(sig, width)+"\n")
			if len(lines) > 0 {
				lines[0] = indent + lines[0]
			}
		}
		for i, l := range lines {
			if i > 0 {
				l = indent + l
			}
			io.WriteString(w, fitWidth(l, width)+"\n")
		}
	}
}

// wrapWords breaks s into lines of at most width runes, between words (a
// longer word has a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= width:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// listSignatureColumns is the widest signature jrpc list sets its summary
// beside (at most half the terminal's width).
const listSignatureColumns = 40

// fitWidth cuts s to width columns (counted in runes), ending in "…".
func fitWidth(s string, width int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:max(width-1, 0)]) + "…"
}

// listJSON returns the methods as a JSON array.
func (d *discovery) listJSON() []byte {
	type item struct {
		Name       string `json:"name"`
		Signature  string `json:"signature"`
		Summary    string `json:"summary,omitempty"`
		Deprecated bool   `json:"deprecated,omitempty"`
	}
	items := []item{}
	for _, name := range d.names() {
		m := d.doc.Method(name)
		items = append(items, item{m.Name, m.Signature(), m.Summary, m.Deprecated})
	}
	b, _ := json.Marshal(items)
	return b
}

func (d *discovery) defs() map[string]*openrpc.Schema {
	if d.doc.Components == nil {
		return nil
	}
	return d.doc.Components.Schemas
}

// describe prints a method's description and, after prefix (the start of a
// command line for a command: call, or subscribe for a subscription; nil in
// the REPL), a call built from its first example or from its params'
// schemas.
func (d *discovery) describe(w io.Writer, name string, prefix func(command string) string) error {
	m, err := d.method(name)
	if err != nil {
		return err
	}
	io.WriteString(w, strings.TrimRight(d.doc.Describe(m), "\n")+"\n")
	if prefix != nil && m.Subscription != nil && len(m.Subscription.Kinds) > 0 && len(m.Examples) == 0 {
		for _, k := range m.Subscription.Kinds {
			fmt.Fprintf(w, "try: %s %s %s\n", prefix("subscribe"), m.Name, strings.Join(kindArgs(k, d.defs()), " "))
		}
		return nil
	}
	call := strings.Join(append([]string{m.Name}, exampleArgs(m, d.defs())...), " ")
	switch {
	case prefix != nil && strings.HasSuffix(m.Name, "_subscribe") && len(m.Examples) == 0:
		call = prefix("subscribe") + " " + m.Name + " KIND [key=value ...]   (KIND: a kind of events the server offers)"
	case prefix != nil && strings.HasSuffix(m.Name, "_subscribe"):
		call = prefix("subscribe") + " " + call
	case prefix != nil:
		call = prefix("call") + " " + call
	}
	fmt.Fprintf(w, "try: %s\n", call)
	return nil
}

// checkParams validates params against the method's description in the
// server's discovery document, before anything is sent.
func checkParams(ctx context.Context, t *target, method string, params json.RawMessage) error {
	raw, err := fetchDiscover(ctx, t)
	if err != nil {
		return err
	}
	d, err := parseDiscovery(raw)
	if err != nil {
		return transportError(fmt.Errorf("cannot --check: %s answered rpc.discover with something else than an OpenRPC document: %v", t, err), "call without --check")
	}
	d.t = t
	m, err := d.method(method)
	if err != nil {
		return err
	}
	warnIfDeprecated(m)
	problems, err := d.validate(m, params)
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("cannot --check %s: %v", method, err), hint: "call without --check"}
	}
	if len(problems) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "params do not fit %s (checked against rpc.discover; nothing was sent):", m.Signature())
	for _, p := range problems {
		path := p.Path
		if path == "" {
			path = "(params)"
		}
		fmt.Fprintf(&b, "\n    %s: %s", path, p.Problem)
	}
	return &exitError{code: exitUsage, err: errors.New(b.String()), hint: d.t.commandLine("describe") + " " + method}
}

// validate checks params against a method's description.
func (d *discovery) validate(m *openrpc.Method, params json.RawMessage) ([]openrpc.Problem, error) {
	v, err := openrpc.CompileMethod(m, d.defs())
	if err != nil {
		return nil, err
	}
	return v.Check(params), nil
}

// levenshtein is the edit distance of a and b (for "did you mean").
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// kindArgs are the arguments of jrpc subscribe for a kind of
// subscription: its name, then its required params as key=value, sampled
// from their schemas.
func kindArgs(k openrpc.SubscriptionKind, defs map[string]*openrpc.Schema) []string {
	args := []string{shellQuote(k.Name)}
	if k.Params == nil {
		return args
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(sampler{defs: defs}.sample(k.Params), &obj) != nil {
		return args
	}
	for _, name := range sortedKeys(obj) {
		args = append(args, shellQuote(name+"="+pairValue(obj[name])))
	}
	return args
}
