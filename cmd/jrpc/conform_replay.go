package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seedhq/jsonrpc/conformance"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/seedhq/jsonrpc/openrpc/schema"
)

// fixture is one test of the execution-apis format: a request on a line
// that starts with ">>", the response it must get on a line that starts
// with "<<", again as often as it likes; "//" lines before the first
// message are its comment, and a comment line "speconly: …" says that the
// response is one valid example among many, to be checked against the
// method's result schema only.
type fixture struct {
	name     string // the file's path under the directory replayed, without .io
	speconly bool
	messages []fixtureMessage
}

type fixtureMessage struct {
	data []byte
	send bool // >>; otherwise << (a response)
}

// maxFixtureLine bounds a line of a fixture (some record large receipts).
const maxFixtureLine = 64 << 20

// parseFixture reads a fixture.
func parseFixture(name string, data []byte) (*fixture, error) {
	f := &fixture{name: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxFixtureLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		switch {
		case len(line) == 0:
		case bytes.HasPrefix(line, []byte("//")):
			text := strings.TrimSpace(string(line[2:]))
			if len(f.messages) == 0 && strings.HasPrefix(text, "speconly:") {
				f.speconly = true
			}
		case bytes.HasPrefix(line, []byte(">>")) || bytes.HasPrefix(line, []byte("<<")):
			msg := bytes.TrimSpace(line[2:])
			if !json.Valid(msg) {
				return nil, fmt.Errorf("%s:%d: not JSON: %.80s", name, n, msg)
			}
			f.messages = append(f.messages, fixtureMessage{data: bytes.Clone(msg), send: line[0] == '>'})
		default:
			return nil, fmt.Errorf("%s:%d: a line of a fixture starts with >>, << or //: %.80s", name, n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(f.messages) == 0 || !f.messages[0].send {
		return nil, fmt.Errorf("%s: no request (>>) before the first response", name)
	}
	return f, nil
}

// loadFixtures reads FILE.io, or every *.io file under DIR (in lexical
// order, named by their path under DIR).
func loadFixtures(path string) ([]*fixture, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, usageErrorf("--replay: %v", err)
	}
	files := map[string]string{} // name → path
	if !st.IsDir() {
		files[strings.TrimSuffix(filepath.Base(path), ".io")] = path
	} else {
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".io") {
				return err
			}
			rel, _ := filepath.Rel(path, p)
			files[strings.TrimSuffix(filepath.ToSlash(rel), ".io")] = p
			return nil
		})
		if err != nil {
			return nil, usageErrorf("--replay: %v", err)
		}
	}
	if len(files) == 0 {
		return nil, usageErrorf("--replay: no .io fixtures under %s", path)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*fixture, 0, len(names))
	for _, n := range names {
		b, err := os.ReadFile(files[n])
		if err != nil {
			return nil, usageErrorf("--replay: %v", err)
		}
		f, err := parseFixture(n, b)
		if err != nil {
			return nil, usageErrorf("--replay: %v", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// fixtureReplayer replays fixtures on one connection (dialled again after a
// failure, so that a late reply is never taken for the next fixture's).
type fixtureReplayer struct {
	target  conformance.Target
	conn    conformance.Conn
	timeout time.Duration
	schemas func(method string) (*schema.Validator, error)
}

// replay runs the fixtures and returns the report, one check for each.
func (rp *fixtureReplayer) replay(ctx context.Context, fixtures []*fixture, progress func(conformance.Result)) (*conformance.Report, error) {
	rep := &conformance.Report{Target: rp.target.String()}
	defer func() {
		if rp.conn != nil {
			rp.conn.Close()
		}
	}()
	for i, f := range fixtures {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		res := conformance.Result{Name: "replay/" + f.name, Level: conformance.MUST, Status: conformance.Pass, Spec: "execution-apis fixture (the recorded response, error messages aside)"}
		if f.speconly {
			res.Spec = "execution-apis fixture, speconly (the result against the method's result schema)"
		}
		if rp.conn == nil {
			c, err := rp.dial(ctx)
			if err != nil && i == 0 {
				return nil, fmt.Errorf("%w: %s: %w", conformance.ErrUnreachable, rp.target, err)
			}
			rp.conn = c
			if err != nil {
				res.Status, res.Detail, res.Cause = conformance.Fail, "cannot connect again: "+err.Error(), "the server cannot be reached"
			}
		}
		if res.Status == conformance.Pass {
			err := rp.run(ctx, f)
			var re *replayError
			if i == 0 && errors.As(err, &re) && re.cause == causeConnection {
				return nil, fmt.Errorf("%w: %s: %w", conformance.ErrUnreachable, rp.target, err) // HTTP dials nothing until the first request
			}
			if err != nil {
				res.Status, res.Detail, res.Cause = conformance.Fail, err.Error(), replayCause(err)
				rp.conn.Close()
				rp.conn = nil
			}
		}
		rep.Checks = append(rep.Checks, res)
		progress(res)
	}
	return rep, nil
}

func (rp *fixtureReplayer) dial(ctx context.Context) (conformance.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, rp.timeout)
	defer cancel()
	return rp.target.Dial(ctx)
}

// run sends a fixture's requests and checks each response.
func (rp *fixtureReplayer) run(ctx context.Context, f *fixture) error {
	var sent []byte
	for _, m := range f.messages {
		if m.send {
			sent = m.data
			sctx, cancel := context.WithTimeout(ctx, rp.timeout)
			err := rp.conn.Send(sctx, m.data)
			cancel()
			if err != nil {
				return &replayError{causeConnection, fmt.Errorf("sending %s: %w", clipBytes(m.data), err)}
			}
			continue
		}
		got, err := rp.recv(ctx)
		if err != nil {
			return &replayError{"no reply came", fmt.Errorf("%w; sent: %s", err, clipBytes(sent))}
		}
		if err := rp.check(f, sent, got, m.data); err != nil {
			return fmt.Errorf("%w; sent: %s; got: %s", err, clipBytes(sent), clipBytes(got))
		}
	}
	return nil
}

// recv returns the next message that is not the server's own request or
// notification.
func (rp *fixtureReplayer) recv(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, rp.timeout)
	defer cancel()
	for {
		b, err := rp.conn.Recv(ctx)
		if errors.Is(err, conformance.ErrNoReply) {
			return nil, errors.New("no reply (an empty body)")
		}
		if err != nil {
			return nil, err
		}
		var m struct {
			Method json.RawMessage `json:"method"`
		}
		if json.Unmarshal(b, &m) == nil && m.Method != nil {
			continue
		}
		return b, nil
	}
}

// causeConnection is the cause of a request that could not be sent.
const causeConnection = "the connection failed"

// replayError is a failure with its cause.
type replayError struct {
	cause string
	err   error
}

func (e *replayError) Error() string { return e.err.Error() }
func (e *replayError) Unwrap() error { return e.err }

func replayCause(err error) string {
	var re *replayError
	if errors.As(err, &re) {
		return re.cause
	}
	return err.Error()
}

// check compares a response with the recorded one: as JSON, numbers by
// value, the message of an error that both have aside; for a speconly
// fixture's result, against the method's result schema instead.
func (rp *fixtureReplayer) check(f *fixture, sent, got, want []byte) error {
	g, err := decodeJSON(got)
	if err != nil {
		return &replayError{"replies are not JSON", fmt.Errorf("the reply is not JSON: %w", err)}
	}
	w, _ := decodeJSON(want)
	gm, isObj := g.(map[string]any)
	if f.speconly && isObj && gm["error"] == nil {
		return rp.checkSchema(sent, gm, w)
	}
	if wm, ok := w.(map[string]any); ok && isObj {
		switch {
		case gm["error"] != nil && wm["result"] != nil:
			return &replayError{"errors where results were recorded", fmt.Errorf("error %s, the recorded response has a result", short(gm["error"]))}
		case gm["result"] != nil && wm["error"] != nil:
			return &replayError{"results where errors were recorded", fmt.Errorf("a result, the recorded response has error %s", short(wm["error"]))}
		}
	}
	if d := jsonDiff("", g, w); d != "" {
		return &replayError{"responses differ from the recorded ones", errors.New(d)}
	}
	return nil
}

// checkSchema checks the envelope of a speconly fixture's response (jsonrpc
// and id as recorded) and its result against the result schema of the
// method called.
func (rp *fixtureReplayer) checkSchema(sent []byte, got map[string]any, want any) error {
	if wm, ok := want.(map[string]any); ok {
		for _, k := range []string{"jsonrpc", "id"} {
			if d := jsonDiff(k, got[k], wm[k]); d != "" {
				return &replayError{"responses differ from the recorded ones", errors.New(d)}
			}
		}
	}
	var req struct {
		Method string `json:"method"`
	}
	json.Unmarshal(sent, &req)
	v, err := rp.schemas(req.Method)
	if err != nil {
		return &replayError{"no result schema", err}
	}
	res, ok := got["result"]
	if !ok {
		return &replayError{"responses differ from the recorded ones", errors.New("no result member")}
	}
	b, _ := json.Marshal(res)
	if problems := v.Validate(b); len(problems) > 0 {
		var ps []string
		for _, p := range problems {
			ps = append(ps, "result"+p.Path+": "+p.Problem)
		}
		return &replayError{"results do not fit the method's schema", fmt.Errorf("the result does not fit the schema of %s: %s", req.Method, strings.Join(ps, "; "))}
	}
	return nil
}

// decodeJSON decodes b with numbers kept as written.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

// jsonDiff returns where got and want first differ ("" when they do not):
// objects whatever their member order, numbers by value, and the message
// of an error object that both sides have is not compared.
func jsonDiff(path string, got, want any) string {
	at := func() string {
		if path == "" {
			return "the response"
		}
		return path
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", at(), short(got))
		}
		return objectDiff(path, g, w)
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an array", at(), short(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: %d elements, want %d", at(), len(g), len(w))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		if g, ok := got.(json.Number); ok && sameNumberText(string(g), string(w)) {
			return ""
		}
	default:
		if got == want {
			return ""
		}
	}
	return fmt.Sprintf("%s: got %s, want %s", at(), short(got), short(want))
}

// objectDiff compares two objects member by member (see jsonDiff).
func objectDiff(path string, g, w map[string]any) string {
	keys := make([]string, 0, len(w)+len(g))
	for k := range w {
		keys = append(keys, k)
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		gv, gok := g[k]
		wv, wok := w[k]
		switch {
		case !gok:
			return fmt.Sprintf("%s: missing, want %s", p, short(wv))
		case !wok:
			return fmt.Sprintf("%s: %s, not in the recorded response", p, short(gv))
		}
		ge, gIsErr := gv.(map[string]any)
		we, wIsErr := wv.(map[string]any)
		if k == "error" && gIsErr && wIsErr && ge["message"] != nil && we["message"] != nil {
			gv, wv = without(ge, "message"), without(we, "message")
		}
		if d := jsonDiff(p, gv, wv); d != "" {
			return d
		}
	}
	return ""
}

func without(m map[string]any, key string) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			c[k] = v
		}
	}
	return c
}

// sameNumberText compares two JSON numbers exactly.
func sameNumberText(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > 400 || len(b) > 400 {
		return false
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// short is a value as JSON, shortened for a report line.
func short(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return clipBytes(b)
}

func clipBytes(b []byte) string {
	const max = 200
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > max {
		s = s[:max] + fmt.Sprintf("…(%d bytes)", len(b))
	}
	return s
}

// resultSchemas returns the compiled result schemas of an OpenRPC
// document, read from file or, when file is "", asked of the server
// (rpc.discover) on first use.
func resultSchemas(file string, discover func() ([]byte, error)) func(method string) (*schema.Validator, error) {
	var doc *openrpc.Doc
	var docErr error
	loaded := false
	cache := map[string]*schema.Validator{}
	return func(method string) (*schema.Validator, error) {
		if !loaded {
			loaded = true
			doc, docErr = loadSchemaDoc(file, discover)
		}
		if docErr != nil {
			return nil, docErr
		}
		if v := cache[method]; v != nil {
			return v, nil
		}
		m := doc.Method(method)
		if m == nil || m.Result == nil || m.Result.Schema == nil {
			return nil, fmt.Errorf("the OpenRPC document has no result schema for %s", method)
		}
		var defs map[string]*openrpc.Schema
		if doc.Components != nil {
			defs = doc.Components.Schemas
		}
		v, err := schema.Compile(m.Result.Schema, defs, openrpc.RefComponents)
		if err != nil {
			return nil, fmt.Errorf("the result schema of %s: %w", method, err)
		}
		cache[method] = v
		return v, nil
	}
}

func loadSchemaDoc(file string, discover func() ([]byte, error)) (*openrpc.Doc, error) {
	var b []byte
	var err error
	if file != "" {
		b, err = os.ReadFile(file)
	} else if b, err = discover(); err != nil {
		err = fmt.Errorf("speconly fixtures need the methods' result schemas: rpc.discover failed (%w); pass --schema openrpc.json", err)
	}
	if err != nil {
		return nil, err
	}
	doc, err := openrpc.ParseDocument(b)
	if err != nil {
		return nil, fmt.Errorf("the OpenRPC document: %w", err)
	}
	return doc, nil
}

// discover asks the server for its OpenRPC document on a connection of
// its own.
func (rp *fixtureReplayer) discover(ctx context.Context) ([]byte, error) {
	c, err := rp.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	saved := rp.conn
	rp.conn = c
	defer func() { rp.conn = saved }()
	sctx, cancel := context.WithTimeout(ctx, rp.timeout)
	defer cancel()
	if err := c.Send(sctx, []byte(`{"jsonrpc":"2.0","id":"replay-discover","method":"rpc.discover"}`)); err != nil {
		return nil, err
	}
	b, err := rp.recv(ctx)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Result == nil {
		return nil, fmt.Errorf("the answer is %s", clipBytes(b))
	}
	return resp.Result, nil
}

// runReplay replays the fixtures of o.replay against the target and
// reports them as the other checks are reported.
func runReplay(cmd *cobra.Command, t *target, ct conformance.Target, o conformOptions) error {
	fixtures, err := loadFixtures(o.replay)
	if err != nil {
		return err
	}
	only, err := compileFlag("--only", o.only)
	if err != nil {
		return err
	}
	skipRE, err := compileFlag("--skip", o.skip)
	if err != nil {
		return err
	}
	fixtures = slices.DeleteFunc(fixtures, func(f *fixture) bool {
		name := "replay/" + f.name
		return only != nil && !only.MatchString(name) || skipRE != nil && skipRE.MatchString(name)
	})
	timeout := conformance.DefaultTimeout
	if cmd.Flags().Changed("timeout") || cmd.InheritedFlags().Changed("timeout") {
		timeout = global.timeout
	}
	ctx := cmd.Context()
	rp := &fixtureReplayer{target: ct, timeout: timeout}
	rp.schemas = resultSchemas(o.schema, func() ([]byte, error) { return rp.discover(ctx) })
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "jrpc conform %s --replay %s (%d fixtures)\n", t, o.replay, len(fixtures))
	rep, err := rp.replay(ctx, fixtures, func(r conformance.Result) { printResult(out, r) })
	if errors.Is(err, conformance.ErrUnreachable) {
		return transportError(err, "check the URL, and that a JSON-RPC server answers there")
	}
	if err != nil {
		return t.transportErr(err)
	}
	return finishConform(out, rep, o)
}
