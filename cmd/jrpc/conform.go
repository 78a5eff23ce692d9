package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/conformance"
	jnats "github.com/seedhq/jsonrpc/nats"
	"github.com/spf13/cobra"
)

// conformOptions are the flags of jrpc conform.
type conformOptions struct {
	jsonFile, junitFile string
	only, skip          string
	method, params      string
	discover            bool
	quiet               time.Duration
	hostile, owner      bool
	maxBytes            int64
	duration            time.Duration
	replay, schema      string
}

func init() {
	var o conformOptions
	cmd := &cobra.Command{
		Use:   "conform URL",
		Short: "Check a JSON-RPC 2.0 server against the specification (and, with --hostile, against bad input)",
		Long: `Check that the server at URL (or the --exec command) follows the JSON-RPC 2.0
specification, byte for byte: unknown methods with ids of every type (-32601,
the id echoed exactly), notifications never answered (also in batches),
invalid JSON (-32700), valid JSON that is not a Request (-32600), batches (each
call answered), on line-framed streams what a line holds besides one message,
the shape of every response, and over HTTP the status and Content-Type rules
(SHOULD/MAY: the spec has no HTTP binding). Each check cites its section; its
level follows one rule for its family, from the spec's words. The summary
groups the failures by cause.

With --method NAME --params JSON, and with --discover for each method of
rpc.discover that has an example, the method is called by position or by name, under several ids,
in a batch and as a notification.

--hostile adds bad input (deep nesting, huge numbers and strings, long method
names, many and duplicate keys, invalid UTF-8, a flood of notifications, a
slow reader, a truncated message), each at most --max-bytes and all within
--duration; after each the server must still answer. It refuses targets
outside loopback unless --i-own-this-server.

--replay FILE.io|DIR replays Ethereum execution-apis test fixtures instead
(">>" a request, "<<" the response it must get, as hive's rpc-compat
simulator reads them): each response is compared with the recorded one as
JSON (numbers by value, error messages aside); a "speconly" fixture's result
is checked against its method's result schema only, from --schema (an
OpenRPC document) or the server's rpc.discover.

One line per check: PASS, FAIL or SKIP, its level (MUST, SHOULD, MAY), its
name and section; a failure says what was sent and received.

Exit codes: 0 every MUST check passed, 1 a MUST check failed (a server that
dies or drops the connection during the run fails the checks it was
answering), 2 bad usage, 3 the target cannot be reached at the start.`,
		Example: `  jrpc conform http://127.0.0.1:8080/
  jrpc conform tcp://127.0.0.1:9090 --json report.json --junit report.xml
  jrpc --exec 'my-lsp-server --stdio' --framing lsp conform --skip '^hostile/'
  jrpc conform ws://127.0.0.1:8080/ --method subtract --params '[42,23]'
  jrpc conform http://127.0.0.1:8080/ --hostile --max-bytes 4194304 --duration 30s
  jrpc conform http://127.0.0.1:8545/ --replay execution-apis/tests --schema openrpc.json`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConform(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.jsonFile, "json", "", `write the report to FILE as {"target","checks":[{"name","level","status","spec","detail"}]}`)
	f.StringVar(&o.junitFile, "junit", "", "write the report to `FILE` as JUnit XML (for CI systems)")
	f.StringVar(&o.only, "only", "", "run only the checks whose name matches this `REGEXP`")
	f.StringVar(&o.skip, "skip", "", "skip the checks whose name matches this `REGEXP`")
	f.StringVar(&o.method, "method", "", "also check this method's results (with --params)")
	f.StringVar(&o.params, "params", "", "the params of --method: a JSON array (by position) or object (by name)")
	f.BoolVar(&o.discover, "discover", false, "also call the methods of rpc.discover that have an example, with the example's params (off by default: calling a server's own methods may change its state)")
	f.DurationVar(&o.quiet, "quiet-wait", conformance.DefaultQuiet, "on streams, how long to watch for a reply that must not come before sending a request behind it")
	f.BoolVar(&o.hostile, "hostile", false, "also send bad input, bounded by --max-bytes and --duration (loopback targets only, unless --i-own-this-server)")
	f.BoolVar(&o.owner, "i-own-this-server", false, "allow --hostile against a target outside loopback")
	f.Int64Var(&o.maxBytes, "max-bytes", conformance.DefaultHostileBytes, "the most bytes one hostile case sends")
	f.DurationVar(&o.duration, "duration", conformance.DefaultHostileDuration, "the most time the hostile cases take together")
	f.StringVar(&o.replay, "replay", "", "replay the execution-apis fixtures of `FILE.io|DIR` instead of the protocol checks")
	f.StringVar(&o.schema, "schema", "", "with --replay: the OpenRPC document (`FILE`) whose result schemas check speconly fixtures (default: the server's rpc.discover)")
	ownFlagsHelp(cmd, "exec", "framing", "header", "timeout")
	rootCmd.AddCommand(cmd)
}

func runConform(cmd *cobra.Command, args []string, o conformOptions) error {
	t, _, err := newTarget(args)
	if err != nil {
		return err
	}
	if o.replay != "" {
		if o.hostile || o.method != "" || o.discover {
			return usageErrorf("--replay runs the fixtures only: not with --hostile, --method or --discover")
		}
		ct, err := t.conformTarget(cmd.Context())
		if err != nil {
			return err
		}
		return runReplay(cmd, t, ct, o)
	}
	if o.schema != "" {
		return usageErrorf("--schema without --replay")
	}
	s, err := o.suite(cmd)
	if err != nil {
		return err
	}
	if o.hostile && !o.owner {
		if err := t.onLoopback(cmd.Context()); err != nil {
			return err
		}
	}
	ct, err := t.conformTarget(cmd.Context())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "jrpc conform %s\n", t)
	s.Progress = func(r conformance.Result) { printResult(out, r) }
	rep, err := s.Check(cmd.Context(), ct)
	if errors.Is(err, conformance.ErrUnreachable) {
		return transportError(err, "check the URL, and that a JSON-RPC server answers there")
	}
	if err != nil {
		return t.transportErr(err)
	}
	return finishConform(out, rep, o)
}

// finishConform prints the summary, writes the reports and returns the
// exit status of a run.
func finishConform(out io.Writer, rep *conformance.Report, o conformOptions) error {
	printSummary(out, rep)
	if err := o.writeReports(rep); err != nil {
		return err
	}
	if !rep.OK() {
		return &exitError{code: exitRPCError, err: fmt.Errorf("%d MUST checks failed", len(rep.Failed(conformance.MUST))), quiet: true}
	}
	return nil
}

// suite builds the conformance.Suite of the flags.
func (o conformOptions) suite(cmd *cobra.Command) (*conformance.Suite, error) {
	s := &conformance.Suite{Discover: o.discover, Quiet: o.quiet}
	if cmd.Flags().Changed("timeout") || cmd.InheritedFlags().Changed("timeout") {
		s.Timeout = global.timeout
	}
	var err error
	if s.Only, err = compileFlag("--only", o.only); err != nil {
		return nil, err
	}
	if s.Skip, err = compileFlag("--skip", o.skip); err != nil {
		return nil, err
	}
	switch {
	case o.method == "" && o.params != "":
		return nil, usageErrorf("--params without --method")
	case o.method != "":
		m := conformance.Method{Name: o.method}
		if o.params != "" {
			p := bytes.TrimSpace([]byte(o.params))
			if !json.Valid(p) || (p[0] != '[' && p[0] != '{') {
				return nil, usageErrorf("--params must be a JSON array or object, not %s", o.params)
			}
			m.Params = p
		}
		s.Methods = []conformance.Method{m}
	}
	if o.hostile {
		if o.maxBytes <= 0 || o.duration <= 0 {
			return nil, usageErrorf("--max-bytes and --duration must be positive")
		}
		s.Hostile = &conformance.Hostile{MaxBytes: o.maxBytes, Duration: o.duration}
	}
	return s, nil
}

// compileFlag compiles the regexp of a flag ("": nil).
func compileFlag(flag, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	x, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageErrorf("%s: %v", flag, err)
	}
	return x, nil
}

func (o conformOptions) writeReports(rep *conformance.Report) error {
	if o.jsonFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(o.jsonFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if o.junitFile != "" {
		var b bytes.Buffer
		err := rep.WriteJUnit(&b)
		if err == nil {
			err = os.WriteFile(o.junitFile, b.Bytes(), 0o644)
		}
		if err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	return nil
}

// printResult prints one check: status, level, name, section; what went
// wrong on the next line.
func printResult(w io.Writer, r conformance.Result) {
	fmt.Fprintf(w, "%-4s  %-6s  %-44s  %s\n", r.Status, r.Level, r.Name, r.Spec)
	if r.Status != conformance.Pass && r.Detail != "" {
		fmt.Fprintf(w, "      %s\n", strings.ReplaceAll(r.Detail, "\n", " "))
	}
}

func printSummary(w io.Writer, rep *conformance.Report) {
	count := map[conformance.Status]int{}
	for _, c := range rep.Checks {
		count[c.Status]++
	}
	must, should, may := len(rep.Failed(conformance.MUST)), len(rep.Failed(conformance.SHOULD)), len(rep.Failed(conformance.MAY))
	fmt.Fprintf(w, "\n%d checks: %d passed, %d failed (MUST %d, SHOULD %d, MAY %d), %d skipped\n",
		len(rep.Checks), count[conformance.Pass], count[conformance.Fail], must, should, may, count[conformance.Skip])
	printCauses(w, rep.Checks)
	if must == 0 {
		fmt.Fprintln(w, "every MUST check passed")
	}
}

// printCauses prints the failures grouped by cause: one line for each
// group of checks (id/, batch/, …) that fail for the same reason, the
// largest first.
func printCauses(w io.Writer, checks []conformance.Result) {
	type group struct {
		prefix, cause string
		names         []string
		must          int
	}
	var groups []*group
	for _, c := range checks {
		if c.Status != conformance.Fail {
			continue
		}
		prefix, _, _ := strings.Cut(c.Name, "/")
		i := slices.IndexFunc(groups, func(g *group) bool { return g.prefix == prefix && g.cause == c.Cause })
		if i < 0 {
			i = len(groups)
			groups = append(groups, &group{prefix: prefix, cause: c.Cause})
		}
		g := groups[i]
		g.names = append(g.names, c.Name)
		if c.Level == conformance.MUST {
			g.must++
		}
	}
	if len(groups) == 0 {
		return
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return len(b.names) - len(a.names) })
	fmt.Fprintln(w, "failures by cause:")
	for _, g := range groups {
		n := fmt.Sprintf("%d checks fail", len(g.names))
		if len(g.names) == 1 {
			n = "1 check fails"
		}
		names := g.names
		if len(names) > 6 {
			names = append(slices.Clip(names[:6]), "…")
		}
		fmt.Fprintf(w, "  %s: %s (%d MUST) because %s: %s\n", g.prefix, n, g.must, g.cause, strings.Join(names, ", "))
	}
}

// onLoopback refuses a target outside this machine (--hostile).
func (t *target) onLoopback(ctx context.Context) error {
	if t.url == nil || t.url.Scheme == "unix" {
		return nil
	}
	host := t.url.Hostname()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return transportError(fmt.Errorf("cannot resolve %s: %w", host, err), "")
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return &exitError{code: exitUsage, err: fmt.Errorf("--hostile refuses %s: %s is not a loopback address", t, ip.IP),
				hint: "add --i-own-this-server if you are allowed to send it bad input"}
		}
	}
	return nil
}

// conformTarget returns the conformance.Target of t.
func (t *target) conformTarget(ctx context.Context) (conformance.Target, error) {
	if t.command != nil {
		return &conformance.CommandTarget{Path: t.command[0], Args: t.command[1:], Framing: t.framing}, nil
	}
	switch t.url.Scheme {
	case "http", "https":
		return &conformance.HTTPTarget{URL: t.url.String(), Client: t.httpClient(), Header: t.headers}, nil
	case "ws", "wss":
		h, err := t.handshakeHeaders()
		if err != nil {
			return nil, err
		}
		return &conformance.WebSocketTarget{URL: t.url.String(), Client: t.httpClient(), Header: h}, nil
	case "nats":
		return &natsTarget{t}, nil
	}
	network, addr := "tcp", t.url.Host
	if t.url.Scheme == "unix" {
		network, addr = "unix", unixPath(t.url)
	}
	open := func(ctx context.Context) (io.ReadWriteCloser, error) {
		if t.url.Scheme == "tls" {
			d := tls.Dialer{Config: t.tls}
			return d.DialContext(ctx, network, addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &conformance.StreamTarget{Name: t.raw, Open: open, Framing: t.framing}, nil
}

// natsTarget checks a server on a NATS subject: each message is a request
// whose reply (empty for a notification) is the answer.
type natsTarget struct{ t *target }

func (n *natsTarget) String() string { return n.t.raw }

func (n *natsTarget) Dial(ctx context.Context) (conformance.Conn, error) {
	c, err := jnats.Dial(ctx, n.t.url.String())
	if err != nil {
		return nil, err
	}
	return natsConn{&natsRaw{c: c, subject: strings.Trim(n.t.url.Path, "/")}}, nil
}

type natsConn struct{ *natsRaw }

func (n natsConn) Recv(ctx context.Context) ([]byte, error) {
	b, err := n.natsRaw.Recv(ctx)
	if errors.Is(err, errNoMore) {
		return nil, conformance.ErrNoReply
	}
	return b, err
}
