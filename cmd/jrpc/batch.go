package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func init() {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "batch URL FILE|-",
		Short: "Send a batch of requests and print each response next to its request",
		Long: `Send the requests of FILE (or standard input with -) as one JSON-RPC batch.
FILE holds either one JSON array of request objects, or one request object per
line. The requests are sent exactly as written (ids included). The answer is
printed as one JSON line per request, in the file's order:

  {"id":1,"method":"sum","result":7}
  {"id":2,"method":"nope","error":{"code":-32601,"message":"method not found: nope"}}
  {"method":"notify_hello","notification":true}

plus {"id":…,"unmatched":true,…} for responses that match no request (such as
the errors for invalid entries, whose id is null). Exit code 1 when any
response is an error.`,
		Example: `  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,4]}' \
    '{"jsonrpc":"2.0","method":"notify_hello","params":[7]}' | jrpc batch tcp://127.0.0.1:9090 -`,
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
	} else {
		sc := bufio.NewScanner(bytes.NewReader(src))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if err := checkJSON(line, fmt.Sprintf("line %d of %s", n, what)); err != nil {
				return nil, err
			}
			items = append(items, json.RawMessage(bytes.Clone(line)))
		}
	}
	if len(items) == 0 {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("the batch in %s is empty", what), hint: `one request per line, e.g. {"jsonrpc":"2.0","id":1,"method":"get_data"}`}
	}
	return items, nil
}

// batchItem is what jrpc reads of a request in a batch file.
type batchItem struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	hasID  bool
}

func runBatch(ctx context.Context, t *target, items []json.RawMessage, verbose bool) error {
	reqs := make([]batchItem, len(items))
	expect := false
	msg := []byte{'['}
	for i, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) == nil {
			reqs[i].Method = m["method"]
			reqs[i].ID, reqs[i].hasID = m["id"]
		}
		// Only an object with a method and without id is a notification;
		// anything else gets a response (at least an error).
		if reqs[i].hasID || reqs[i].Method == nil {
			expect = true
		}
		if i > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, compact(it)...)
	}
	msg = append(msg, ']')

	if global.streamable && t.isHTTP() {
		return usageErrorf("--streamable does not apply to batch (it sends the batch as written, over plain HTTP)")
	}
	rc, err := t.dialRaw(ctx, verbose)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := rc.Send(ctx, msg); err != nil {
		return t.transportErr(err)
	}
	var resps []envelope
	var raws []json.RawMessage
	if expect || t.isHTTP() {
		for {
			data, err := rc.Recv(ctx)
			if err == errNoMore && !expect {
				break
			}
			if err != nil {
				return t.transportErr(err)
			}
			data = bytes.TrimSpace(data)
			if len(data) > 0 && data[0] == '{' {
				var e envelope
				if json.Unmarshal(data, &e) == nil && e.Method != nil {
					answerServerRequest(ctx, rc, &e)
					continue
				}
				// One error object for the whole batch (e.g. too many requests).
				raws = []json.RawMessage{data}
			} else if err := json.Unmarshal(data, &raws); err != nil {
				return transportError(fmt.Errorf("invalid batch response from %s: %v: %s", t, err, snippet(data)), "")
			}
			break
		}
		resps = make([]envelope, len(raws))
		for i, r := range raws {
			if err := json.Unmarshal(r, &resps[i]); err != nil {
				return transportError(fmt.Errorf("invalid response in the batch from %s: %v: %s", t, err, snippet(r)), "")
			}
		}
	}

	out := outputFor(os.Stdout)
	out.pretty = false
	used := make([]bool, len(resps))
	failed := false
	line := func(b []byte) { out.print(os.Stdout, b) }
	for _, r := range reqs {
		var b []byte
		switch {
		case r.hasID:
			b = append(b, `{"id":`...)
			b = append(b, compact(r.ID)...)
			if r.Method != nil {
				b = append(b, `,"method":`...)
				b = append(b, r.Method...)
			}
			found := false
			for j := range resps {
				if !used[j] && bytes.Equal(compact(resps[j].ID), compact(r.ID)) {
					used[j] = true
					found = true
					b = appendOutcome(b, &resps[j])
					failed = failed || resps[j].Error != nil
					break
				}
			}
			if !found {
				b = append(b, `,"missing":true`...)
				failed = true
			}
			b = append(b, '}')
		case r.Method != nil:
			b = append(b, `{"method":`...)
			b = append(b, r.Method...)
			b = append(b, `,"notification":true}`...)
		default:
			continue // an invalid entry: its error comes back unmatched
		}
		line(b)
	}
	for j := range resps {
		if used[j] {
			continue
		}
		b := []byte(`{"id":`)
		if resps[j].ID == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, compact(resps[j].ID)...)
		}
		b = appendOutcome(b, &resps[j])
		b = append(b, `,"unmatched":true}`...)
		failed = true
		line(b)
	}
	if failed {
		return &exitError{code: exitRPCError, err: fmt.Errorf("some requests of the batch failed"), quiet: true}
	}
	return nil
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
