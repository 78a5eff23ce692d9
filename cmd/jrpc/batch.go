package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func init() {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "batch URL FILE|-",
		Short: "Send a batch of requests and print each response next to its request",
		Long: `Send the requests of FILE (or standard input with -) as one JSON-RPC batch.
FILE holds either one JSON array of request objects, or one request a line:
a request object, sent exactly as written (ids included), or METHOD [PARAMS]
as jrpc call takes them (PARAMS one JSON value or key=value pairs, quoted as
on a command line), which gets the next free number as its id;
.notify METHOD [PARAMS] is a notification, and lines starting with # are
skipped. The answer is printed as one JSON line per request, in the file's
order:

  {"id":1,"method":"sum","result":7}
  {"id":2,"method":"nope","error":{"code":-32601,"message":"method not found: nope"}}
  {"method":"notify_hello","notification":true}

plus {"id":…,"unmatched":true,…} for responses that match no request (such as
the errors for invalid entries, whose id is null). Exit code 1 when any
response is an error.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,4]}' \
    '{"jsonrpc":"2.0","method":"notify_hello","params":[7]}' | jrpc batch tcp://127.0.0.1:9090 -
  printf '%s\n' 'sum [1,2,4]' 'subtract minuend=42 subtrahend=23' '.notify notify_hello [7]' |
    jrpc batch tcp://127.0.0.1:9090 -`,
		Args: targetArgs("FILE|-", 1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, rest, err := newTarget(args)
			if err != nil {
				return err
			}
			items, err := readBatch(rest[0])
			if err != nil {
				return err
			}
			ctx, cancel := callContext(cmd.Context())
			defer cancel()
			return runBatch(ctx, t, items, verbose)
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print the batch and the response as sent and received on stderr")
	rootCmd.AddCommand(cmd)
}

// readBatch reads the requests of a batch file: a JSON array, or one JSON
// value per line.
func readBatch(name string) ([]json.RawMessage, error) {
	var src []byte
	var err error
	what := name
	if name == "-" {
		src, err = io.ReadAll(os.Stdin)
		what = "standard input"
	} else {
		src, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot read the batch: %v", err), hint: "check the file name (or - for standard input)"}
	}
	src = bytes.TrimSpace(src)
	var items []json.RawMessage
	if len(src) > 0 && src[0] == '[' {
		if err := checkJSON(src, what); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(src, &items); err != nil {
			return nil, usageErrorf("cannot read the batch in %s: %v", what, err)
		}
	} else if items, err = readBatchLines(src, what); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("the batch in %s is empty", what), hint: `one request per line, e.g. {"jsonrpc":"2.0","id":1,"method":"get_data"}`}
	}
	return items, nil
}

// readBatchLines reads a batch of one request a line: a JSON value, or
// METHOD [PARAMS] as jrpc call takes them (.notify METHOD [PARAMS] for a
// notification), whose id is the lowest number no other request of the
// batch has.
func readBatchLines(src []byte, what string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	var calls []int // the items written as METHOD [PARAMS], idless yet
	taken := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		where := fmt.Sprintf("line %d of %s", n, what)
		switch {
		case len(line) == 0 || line[0] == '#':
			continue
		case line[0] == '{' || line[0] == '[':
			if err := checkJSON(line, where); err != nil {
				return nil, err
			}
			var m struct{ ID json.RawMessage }
			if json.Unmarshal(line, &m) == nil && m.ID != nil {
				taken[string(compact(m.ID))] = true
			}
			items = append(items, json.RawMessage(bytes.Clone(line)))
		default:
			calls = append(calls, len(items))
			items = append(items, json.RawMessage(line)) // the text, for now
		}
	}
	id := 0
	for _, i := range calls {
		if !bytes.HasPrefix(items[i], []byte(".notify")) {
			for id++; taken[strconv.Itoa(id)]; id++ {
			}
		}
		msg, err := callLine(string(items[i]), id)
		if err != nil {
			return nil, err
		}
		items[i] = msg
	}
	return items, nil
}

// callLine is the request a batch line METHOD [PARAMS] stands for, with
// id (.notify METHOD [PARAMS]: a notification).
func callLine(text string, id int) (json.RawMessage, error) {
	word, rest, _ := strings.Cut(text, " ")
	idJSON := []byte(strconv.Itoa(id))
	if word == ".notify" {
		word, rest, _ = strings.Cut(strings.TrimSpace(rest), " ")
		idJSON = nil
	}
	if word == "" {
		return nil, usageErrorf("batch line %q names no method: usage: METHOD [PARAMS] or .notify METHOD [PARAMS]", cut(text))
	}
	args, err := splitParams(rest)
	if err != nil {
		return nil, usageErrorf("batch line %q: PARAMS: %v", cut(text), err)
	}
	params, err := buildParams(args, "", nil)
	if err != nil {
		return nil, usageErrorf("batch line %q: %v", cut(text), err)
	}
	return appendEnvelope(nil, idJSON, word, params), nil
}

// batchItem is what jrpc reads of a request in a batch file.
type batchItem struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	hasID  bool
}

func runBatch(ctx context.Context, t *target, items []json.RawMessage, verbose bool) error {
	if global.streamable && t.isHTTP() {
		return usageErrorf("--streamable does not apply to batch (it sends the batch as written, over plain HTTP)")
	}
	reqs, msg, expect := parseBatch(items)
	rc, err := t.dialRaw(ctx, verbose)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := rc.Send(ctx, msg); err != nil {
		return t.transportErr(err)
	}
	var resps []envelope
	if expect || t.isHTTP() {
		if resps, err = recvBatch(ctx, t, rc, expect); err != nil {
			return err
		}
	}
	if printBatch(reqs, resps) {
		return &exitError{code: exitRPCError, err: fmt.Errorf("some requests of the batch failed"), quiet: true}
	}
	return nil
}

// parseBatch reads what jrpc needs of each request and joins them into
// one batch message; expect says whether any of them gets a response.
func parseBatch(items []json.RawMessage) (reqs []batchItem, msg []byte, expect bool) {
	reqs = make([]batchItem, len(items))
	msg = []byte{'['}
	for i, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) == nil {
			reqs[i].Method = m["method"]
			reqs[i].ID, reqs[i].hasID = m["id"]
		}
		// Only an object with a method and without id is a notification;
		// anything else gets a response (at least an error).
		expect = expect || reqs[i].hasID || reqs[i].Method == nil
		if i > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, compact(it)...)
	}
	return reqs, append(msg, ']'), expect
}

// recvBatch reads the batch's responses, answering the server's own
// requests that come first; over HTTP no reply is fine when none is
// expected.
func recvBatch(ctx context.Context, t *target, rc rawConn, expect bool) ([]envelope, error) {
	var raws []json.RawMessage
	for {
		data, err := rc.Recv(ctx)
		if err == errNoMore && !expect {
			return nil, nil
		}
		if err != nil {
			return nil, t.transportErr(err)
		}
		data = bytes.TrimSpace(data)
		var e envelope
		if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &e) == nil && e.Method != nil {
			answerServerRequest(ctx, rc, &e)
			continue
		}
		if raws, err = batchReplies(t, data); err != nil {
			return nil, err
		}
		break
	}
	resps := make([]envelope, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &resps[i]); err != nil {
			return nil, transportError(fmt.Errorf("invalid response in the batch from %s: %v: %s", t, err, snippet(r)), "")
		}
	}
	return resps, nil
}

// batchReplies splits a reply to a batch: an array of responses, or one
// error object for the whole batch (e.g. too many requests).
func batchReplies(t *target, data []byte) ([]json.RawMessage, error) {
	if len(data) > 0 && data[0] == '{' {
		return []json.RawMessage{data}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, transportError(fmt.Errorf("invalid batch response from %s: %v: %s", t, err, snippet(data)), "")
	}
	return raws, nil
}

// printBatch prints one line per request of the batch with its outcome,
// then the responses no request matched; it reports whether any failed.
func printBatch(reqs []batchItem, resps []envelope) (failed bool) {
	out := outputFor(os.Stdout)
	out.pretty = false
	used := make([]bool, len(resps))
	for _, r := range reqs {
		b, ok := r.line(resps, used)
		if b != nil {
			out.print(os.Stdout, b)
		}
		failed = failed || !ok
	}
	for j := range resps {
		if !used[j] {
			out.print(os.Stdout, unmatchedLine(&resps[j]))
			failed = true
		}
	}
	return failed
}

// line is the request's line: its id and method with the outcome of the
// response of the same id (marked used), or "missing"; a notification's
// line; nil for an invalid entry (its error comes back unmatched). ok is
// false for an error or a missing response.
func (r batchItem) line(resps []envelope, used []bool) (b []byte, ok bool) {
	if !r.hasID {
		if r.Method == nil {
			return nil, true
		}
		return fmt.Appendf(nil, `{"method":%s,"notification":true}`, r.Method), true
	}
	b = append([]byte(`{"id":`), compact(r.ID)...)
	if r.Method != nil {
		b = append(append(b, `,"method":`...), r.Method...)
	}
	for j := range resps {
		if !used[j] && bytes.Equal(compact(resps[j].ID), compact(r.ID)) {
			used[j] = true
			return append(appendOutcome(b, &resps[j]), '}'), resps[j].Error == nil
		}
	}
	return append(b, `,"missing":true}`...), false
}

// unmatchedLine is the line of a response that matched no request.
func unmatchedLine(e *envelope) []byte {
	b := []byte(`{"id":`)
	if e.ID == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, compact(e.ID)...)
	}
	b = appendOutcome(b, e)
	return append(b, `,"unmatched":true}`...)
}

func appendOutcome(b []byte, e *envelope) []byte {
	if e.Error != nil {
		b = append(b, `,"error":`...)
		return append(b, errorJSON(e.Error)...)
	}
	b = append(b, `,"result":`...)
	if e.Result == nil {
		return append(b, "null"...)
	}
	return append(b, compact(e.Result)...)
}
