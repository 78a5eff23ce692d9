package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

// callFlags are the flags of call and notify.
type callFlags struct {
	data    string
	id      string
	verbose bool
	raw     bool
	check   bool
}

func init() {
	var f callFlags
	call := &cobra.Command{
		Use:   "call URL METHOD [PARAMS...]",
		Short: "Call a method and print its result",
		Long: `Call a method and print its result: pretty and coloured on a terminal, compact
JSON when piped. A JSON-RPC error is printed as one JSON object on stderr and
exits with 1.

PARAMS are one JSON value, or key=value pairs (value parsed as JSON when it
is valid JSON, else a string), or -d @file / -d @- (standard input).`,
		Example: `  jrpc call http://127.0.0.1:8080/ subtract '[42,23]'
  jrpc call tcp://127.0.0.1:9090 subtract minuend=42 subtrahend=23
  echo '{"n":3}' | jrpc call tcp://127.0.0.1:9090 big -d @-
  jrpc call -v --id '"req-1"' ws://127.0.0.1:8081/ echo '{"hi":1}'
  jrpc --exec 'jrpc serve --listen stdio:' call get_data`,
		Args: targetArgs("METHOD [PARAMS...]", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), args, &f, false)
		},
	}
	call.Flags().StringVarP(&f.data, "data", "d", "", "params from `@FILE`, @- (standard input) or literal JSON")
	call.Flags().StringVar(&f.id, "id", "", "the request id, as JSON (e.g. 7 or '\"abc\"'; default 1)")
	call.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "print the request and response envelopes on stderr, as sent and received")
	call.Flags().BoolVar(&f.raw, "raw", false, "print the whole response envelope (jsonrpc, id, result or error) on stdout")
	call.Flags().BoolVar(&f.check, "check", false, "check the params against the server's rpc.discover document before sending")

	var nf callFlags
	notify := &cobra.Command{
		Use:   "notify URL METHOD [PARAMS...]",
		Short: "Send a notification (no response comes back)",
		Example: `  jrpc notify tcp://127.0.0.1:9090 notify_hello '[7]'
  jrpc notify -v http://127.0.0.1:8080/ update msg=hi`,
		Args: targetArgs("METHOD [PARAMS...]", 1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd.Context(), args, &nf, true)
		},
	}
	notify.Flags().StringVarP(&nf.data, "data", "d", "", "params from `@FILE`, @- (standard input) or literal JSON")
	notify.Flags().BoolVarP(&nf.verbose, "verbose", "v", false, "print the notification as sent (and anything the server answers) on stderr")
	rootCmd.AddCommand(call, notify)
}

func runCall(ctx context.Context, args []string, f *callFlags, notify bool) (err error) {
	t, rest, err := newTarget(args)
	if err != nil {
		return err
	}
	rq, err := f.request(t, rest, notify)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(ctx)
	defer cancel()
	ctx, traced := traceCall(ctx, t, rq.method, f.verbose)
	defer func() { traced(err) }()
	if f.check {
		if err := checkParams(ctx, t, rq.method, rq.params); err != nil {
			return err
		}
	}
	raw, err := rq.asWritten(t)
	if err != nil {
		return err
	}
	if raw {
		return rawCall(ctx, t, rq)
	}
	return clientCall(ctx, t, rq.method, rq.params, notify)
}

// callRequest is the request call or notify sends, and how it is shown.
type callRequest struct {
	method               string
	params               json.RawMessage
	id                   []byte // --id, or nil
	verbose, raw, notify bool
}

// request builds the request from METHOD [PARAMS...] and the flags.
func (f *callFlags) request(t *target, rest []string, notify bool) (callRequest, error) {
	rq := callRequest{method: rest[0], verbose: f.verbose, raw: f.raw, notify: notify}
	if strings.TrimSpace(rq.method) == "" {
		return rq, &exitError{code: exitUsage, err: errors.New("the method name is empty"), hint: t.commandLine("list") + " lists the methods"}
	}
	t.notices = true
	var err error
	if rq.params, err = buildParams(rest[1:], f.data, os.Stdin); err != nil {
		return rq, err
	}
	rq.id, err = parseID(f.id)
	return rq, err
}

// asWritten tells whether the request goes as written here (-v, --raw,
// --id; a call's id then defaults to 1) rather than through the library's
// client, which Streamable HTTP needs (-v then shows its exchange).
func (rq *callRequest) asWritten(t *target) (bool, error) {
	streamable := global.streamable && t.isHTTP()
	if streamable && (rq.raw || rq.id != nil) {
		return false, usageErrorf("--streamable does not combine with --raw or --id (they send the request as written, over plain HTTP); -v shows a Streamable HTTP exchange")
	}
	t.verboseHTTP = streamable && rq.verbose
	if streamable || !(rq.verbose || rq.raw || rq.id != nil) {
		return false, nil
	}
	if rq.id == nil && !rq.notify {
		rq.id = []byte("1")
	}
	return true, nil
}

// parseID parses --id: nil when it is not given.
func parseID(s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if _, ok := jsonrpc.RawID([]byte(s)); !ok {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("--id %s is not a JSON string, number or null", s), hint: `--id 7 or --id '"abc"'`}
	}
	return []byte(s), nil
}

// clientCall calls (or notifies) through the library's client.
func clientCall(ctx context.Context, t *target, method string, params json.RawMessage, notify bool) error {
	c, err := t.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var p any
	if params != nil {
		p = params
	}
	if notify {
		if err := c.Notify(ctx, method, p); err != nil {
			return t.transportErr(t.commandExit(c, err))
		}
		return nil
	}
	var result json.RawMessage
	err = c.Call(ctx, method, p, &result)
	t.printEra(c, err)
	if err == nil && method == "tools/call" {
		result, err = awaitTask(ctx, c, result) // MCP's Tasks extension
	}
	t.drainNotices()
	t.watch.check(method)
	if err != nil {
		return callErr(t, t.commandExit(c, err))
	}
	outputFor(os.Stdout).print(os.Stdout, result)
	return toolError(method, result)
}

// printEra prints, with --streamable -v, the MCP revision the client
// reached.
func (t *target) printEra(c client, err error) {
	conn := c.conn()
	if !t.verboseHTTP || conn == nil {
		return
	}
	switch v := conn.MCPVersion(); {
	case v == "" && err != nil:
		// not found: the error says why
	case v == "":
		fmt.Fprintln(os.Stderr, "* MCP: none (the server answers neither server/discover nor initialize: plain JSON-RPC)")
	case v >= jsonrpc.MCPVersion2026:
		fmt.Fprintln(os.Stderr, "* MCP "+v+" (stateless: _meta and headers on every request, no session)")
	default:
		fmt.Fprintln(os.Stderr, "* MCP "+v+" (session era: initialize, Mcp-Session-Id)")
	}
}

// toolError is exit 1 for an MCP tools/call whose result says isError:
// the tool failed, and its content (printed) says why.
func toolError(method string, result []byte) error {
	var r struct {
		IsError bool `json:"isError"`
	}
	if method != "tools/call" || json.Unmarshal(result, &r) != nil || !r.IsError {
		return nil
	}
	return &exitError{code: exitRPCError, err: errors.New("the tool failed (isError: true)"), quiet: true}
}

// callErr maps the error of a call by the exit code rule (exit.go): a
// refusal by the server is exit 1, anything else a failed exchange, 3.
func callErr(t *target, err error) error {
	return t.transportErr(err)
}

// commandExit returns why a spawned command's connection failed: its exit
// status when it exited, else err.
func (t *target) commandExit(c client, err error) error {
	conn := c.conn()
	var re *jsonrpc.Error
	if conn == nil || t.command == nil || errors.As(err, &re) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	select {
	case <-conn.Done():
	case <-time.After(time.Second):
		return err
	}
	var ee *exec.ExitError
	if cerr := conn.Err(); errors.As(cerr, &ee) {
		return ee
	}
	return err
}

// appendEnvelope appends a request (id nil: a notification).
func appendEnvelope(b []byte, id []byte, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != nil {
		b = append(b, `"id":`...)
		b = append(b, id...)
		b = append(b, ',')
	}
	m, _ := json.Marshal(method)
	b = append(b, `"method":`...)
	b = append(b, m...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, compact(params)...)
	}
	return append(b, '}')
}

// envelope is what jrpc reads of a message from the server.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// logWire prints a message as sent (-->) or received (<--) on stderr.
func logWire(dir string, msg []byte) {
	fmt.Fprintf(os.Stderr, "%s %s\n", dir, bytes.TrimSpace(msg))
}

// rawCall sends the request exactly as built here and reads messages until
// the response with our id arrives, printing both with -v.
func rawCall(ctx context.Context, t *target, rq callRequest) error {
	rc, err := t.dialRaw(ctx, rq.verbose)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := rc.Send(ctx, appendEnvelope(nil, rq.id, rq.method, rq.params)); err != nil {
		return t.transportErr(err)
	}
	if rq.notify && !t.isHTTP() {
		return nil
	}
	for {
		data, err := rc.Recv(ctx)
		if err != nil {
			if rq.notify && errors.Is(err, errNoMore) {
				return nil
			}
			return t.transportErr(err)
		}
		if done, err := rq.reply(ctx, t, rc, data); done {
			return err
		}
	}
}

// reply handles one message of a raw exchange; done when it is the
// answer (printed, and its exit error returned).
func (rq callRequest) reply(ctx context.Context, t *target, rc rawConn, data []byte) (done bool, err error) {
	e, err := decodeMessage(t, data)
	switch {
	case err != nil:
		return true, err
	case e == nil:
		return false, nil // a batch: not ours
	case e.Method != nil:
		if !rq.verbose && e.ID == nil {
			logWire("<--", data) // a notification during the call (-v shows every message)
		}
		answerServerRequest(ctx, rc, e)
		return false, nil
	case rq.notify:
		return true, answeredNotification(e)
	case !rq.answeredBy(e):
		return false, nil
	}
	t.watch.check(rq.method)
	return true, printReply(t, rq.method, data, e, rq.raw)
}

// answeredBy tells whether e answers the request: the same id, or an
// error with a null id (the request could not be read).
func (rq callRequest) answeredBy(e *envelope) bool {
	return bytes.Equal(compact(e.ID), compact(rq.id)) || e.Error != nil && string(e.ID) == "null"
}

// answeredNotification is the exit of a notification the server answered
// (e.g. a parse error).
func answeredNotification(e *envelope) error {
	if e.Error != nil {
		return rpcErrorExit(e.Error)
	}
	return nil
}

// decodeMessage decodes a message of a raw exchange: nil for a batch.
func decodeMessage(t *target, data []byte) (*envelope, error) {
	var e envelope
	if err := json.Unmarshal(data, &e); err != nil {
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
			return nil, nil
		}
		if bytes.HasPrefix(data, []byte("HTTP/")) && t.url != nil {
			return nil, t.notStream()
		}
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("<")) {
			return nil, transportError(fmt.Errorf("%s answered %s: it does not speak JSON-RPC", t, nameAnswer(data)), "check the host and port: is a JSON-RPC server listening there?")
		}
		return nil, transportError(fmt.Errorf("invalid response from %s: %v: %s", t, err, snippet(data)), "is this a JSON-RPC 2.0 server?")
	}
	return &e, nil
}

// printReply prints the answer to a raw call (the whole envelope with
// --raw) and returns its exit error.
func printReply(t *target, method string, data []byte, e *envelope, raw bool) error {
	if raw {
		outputFor(os.Stdout).print(os.Stdout, data)
		if e.Error != nil {
			return &exitError{code: exitRPCError, err: e.Error, quiet: true}
		}
		return toolError(method, e.Result)
	}
	if e.Error != nil {
		return rpcErrorExit(e.Error)
	}
	if e.Result == nil {
		return transportError(fmt.Errorf("invalid response from %s: neither result nor error: %s", t, snippet(data)), "")
	}
	outputFor(os.Stdout).print(os.Stdout, e.Result)
	return toolError(method, e.Result)
}

// answerServerRequest answers a request the server sent us (on
// bidirectional transports) with method not found; notifications are
// ignored.
func answerServerRequest(ctx context.Context, rc rawConn, e *envelope) {
	if e.ID == nil {
		return
	}
	m, _ := json.Marshal("method not found: " + *e.Method + " (jrpc serves no methods)")
	msg := []byte(`{"jsonrpc":"2.0","id":` + string(e.ID) + `,"error":{"code":-32601,"message":` + string(m) + `}}`)
	rc.Send(ctx, msg)
}
