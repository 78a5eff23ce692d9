package chaos_test

// The fault matrix (issue 40): each fault against each transport and client
// mode, with a real server behind the proxy. A cell runs one call (message
// 1, untouched), the call the fault hits (the second "work" message in its
// direction), then six callers at once; it asserts that no call waits past
// its context, that no call is executed twice unless the network duplicated
// it (dup towards the server), that every answer is the caller's own, and
// (TestMain) that nothing leaks. Its outcome is written into
// docs/reliability.md: the test fails when the file differs, and rewrites
// it with -update, so the table cannot drift from the code.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
)

var update = flag.Bool("update", false, "rewrite docs/reliability.md from the matrix")

const (
	callTimeout = 600 * time.Millisecond // each call's context
	slack       = 400 * time.Millisecond // how far past it a call may return (a loaded CI machine)
	callers     = 6                      // the callers at once after the fault
)

// ledger counts the executions of each call's token on the servers.
type ledger struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *ledger) add(tok string) {
	l.mu.Lock()
	l.n[tok]++
	l.mu.Unlock()
}

func (l *ledger) count(tok string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[tok]
}

type workParams struct {
	Token  string `json:"token"`
	Notify bool   `json:"notify,omitempty"` // notify the caller first (an event-stream answer on Streamable HTTP)
}

// workServer serves "work" (records its token, answers it) on scheme.
func workServer(t testing.TB, scheme string, l *ledger) string {
	t.Helper()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "work", func(ctx context.Context, p workParams) (string, error) {
		l.add(p.Token)
		if p.Notify {
			if c := jsonrpc.ConnFromContext(ctx); c != nil {
				c.Notify(ctx, "working", map[string]string{"token": p.Token})
				time.Sleep(20 * time.Millisecond)
			}
		}
		return p.Token, nil
	})
	jsonrpc.Register(mux, "echo", func(_ context.Context, p []string) ([]string, error) { return p, nil })
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]any, error) {
		return map[string]any{}, nil // starts a Streamable HTTP session
	})
	srv := &jsonrpc.Server{Handler: mux}
	url, opts := scheme+"://127.0.0.1:0/", []jsonrpc.ListenOption(nil)
	if scheme == "streamable" {
		// Sessions: events carry ids, and a cut stream is resumed.
		url = "http://127.0.0.1:0/mcp"
		opts = append(opts, jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{Sessions: true, RetryDelay: 50 * time.Millisecond}))
	}
	ln, err := srv.Listen(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ln.Err()
	})
	return ln.URL
}

// The rows: faults on the second "work" message of their direction.
var matrixFaults = []string{
	"method=work,dir=in,nth=2,delay=150ms",
	"method=work,dir=in,nth=2,error=-32042",
	"method=work,dir=out,nth=2,error=-32042",
	"method=work,dir=in,nth=2,drop",
	"method=work,dir=out,nth=2,drop",
	"method=work,dir=in,nth=2,dup",
	"method=work,dir=out,nth=2,dup",
	"method=work,dir=in,nth=2,reorder",
	"method=work,dir=in,nth=2,cut",
	"method=work,dir=out,nth=2,cut",
	"method=work,dir=out,nth=2,cut-after-bytes=20",
	"method=work,dir=out,nth=2,corrupt",
	"method=work,dir=in,nth=2,half-open",
	"method=work,dir=out,nth=2,bandwidth=400",
	"method=work,nth=2,sse-cut-after=1",
}

// The columns: a transport and a client mode.
type column struct{ transport, mode string }

var matrixColumns = []column{
	{"tcp", "plain"}, {"tcp", "reconnect"}, {"tcp", "reconnect+stall"}, {"tcp", "failover"}, {"tcp", "batch"}, {"lsp", "reconnect"},
	{"ws", "plain"}, {"ws", "reconnect"}, {"ws", "reconnect+ping"}, {"ws", "batch"},
	{"http", "plain"}, {"http", "batch"},
	{"streamable", "plain"}, {"streamable", "batch"},
}

// applies reports whether a fault means anything in a column (SSE cuts on
// Streamable HTTP only; a reordered batch with batches only).
func applies(fault string, col column) bool {
	switch {
	case strings.Contains(fault, "sse-cut-after"):
		return col.transport == "streamable"
	case strings.Contains(fault, "reorder"):
		return col.mode == "batch"
	}
	return true
}

func TestFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the matrix takes about a minute")
	}
	l := &ledger{n: map[string]int{}}
	targets := map[string]string{}
	for _, s := range []string{"tcp", "ws", "http", "streamable"} {
		targets[s] = workServer(t, s, l)
	}
	targets["lsp"] = targets["tcp"]  // the server detects the client's Content-Length framing
	spare := workServer(t, "tcp", l) // failover's second endpoint
	var rows [][]string
	var findings []string
	for _, spec := range matrixFaults {
		row := []string{"`" + spec + "`"}
		for _, col := range matrixColumns {
			if !applies(spec, col) {
				row = append(row, "—")
				continue
			}
			name := spec + " " + col.transport + "/" + col.mode
			o := runCell(t, name, spec, col, targets[col.transport], spare, l)
			row = append(row, o.String())
			for _, s := range o.surprises {
				findings = append(findings, "- `"+spec+"` on "+col.transport+"/"+col.mode+": "+s)
			}
		}
		rows = append(rows, row)
	}
	subRows, subFindings := subMatrix(t)
	checkGolden(t, renderMatrix(rows, subRows, append(findings, subFindings...)))
}

// outcome is what a cell's callers saw.
type outcome struct {
	first, hit string // the untouched call's result, the hit call's
	after      string // the results of the callers after it, as a set
	twice      bool   // a call was executed twice
	surprises  []string
}

func (o outcome) String() string {
	s := o.hit
	if o.first != "ok" {
		s = "1st " + o.first + "; " + s
	}
	s += "; then " + o.after
	if o.twice {
		s += "; executed twice"
	}
	return s
}

// runCell runs one cell and asserts its invariants.
func runCell(t *testing.T, name, spec string, col column, target, spare string, l *ledger) outcome {
	t.Helper()
	p, err := chaos.Start("", target, chaos.Options{Faults: []*chaos.Fault{chaos.MustParse(spec)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := dialMode(col, p.URL, spare)
	if err != nil {
		t.Fatalf("%s: dial: %v", name, err)
	}
	defer c.Close()
	dupIn := strings.Contains(spec, "dir=in") && strings.Contains(spec, ",dup")
	var mu sync.Mutex
	var o outcome
	var all []string // every call's tokens
	run := func(i int) []string {
		res := doWork(c, col, name+"#"+strconv.Itoa(i))
		mu.Lock()
		defer mu.Unlock()
		if res.late {
			t.Errorf("%s: call %d returned %v after its context ended", name, i, res.took-callTimeout)
			o.surprises = append(o.surprises, "a call waited past its context")
		}
		if res.falseDeadline {
			t.Errorf("%s: call %d failed with an error matching context.DeadlineExceeded before its context ended", name, i)
			o.surprises = append(o.surprises, "a call's error matched context.DeadlineExceeded before its context ended")
		}
		if res.wrong {
			t.Errorf("%s: call %d got another call's answer", name, i)
			o.surprises = append(o.surprises, "a call got another call's answer")
		}
		all = append(all, res.tokens...)
		return res.kinds
	}
	o.first = strings.Join(set(run(1)), ", ")
	hit := run(2)
	var wg sync.WaitGroup
	kinds := make([][]string, callers)
	for i := range callers {
		wg.Go(func() { kinds[i] = run(3 + i) })
	}
	wg.Wait()
	o.after = strings.Join(set(slices.Concat(kinds...)), ", ")
	if twice := executions(l, all, dupIn); twice > 0 {
		if !dupIn {
			t.Errorf("%s: %d calls executed twice", name, twice)
			o.surprises = append(o.surprises, "a call was executed twice")
		}
		o.twice = true
	}
	o.hit = strings.Join(set(hit), ", ")
	return o
}

// executions counts the calls executed more than once, once the servers
// have settled (a duplicate reaches them after its call has its answer):
// with a duplicate expected, it waits for it (bounded).
func executions(l *ledger, toks []string, expect bool) int {
	twice := 0
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		twice = 0
		for _, tok := range toks {
			if l.count(tok) > 1 {
				twice++
			}
		}
		if twice > 0 || !expect || time.Now().After(end) {
			return twice
		}
	}
}

func dialMode(col column, url, spare string) (jsonrpc.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var opts []jsonrpc.DialOption
	switch col.transport {
	case "streamable":
		opts = append(opts, jsonrpc.WithStreamableHTTP())
	case "lsp":
		opts = append(opts, jsonrpc.WithFraming(jsonrpc.FramingHeader))
	}
	switch col.mode {
	case "reconnect+ping":
		opts = append(opts, jsonrpc.WithPing(100*time.Millisecond, 150*time.Millisecond), jsonrpc.WithReconnect())
	case "reconnect+stall":
		opts = append(opts, jsonrpc.WithStallTimeout(250*time.Millisecond), jsonrpc.WithReconnect())
	case "reconnect":
		opts = append(opts, jsonrpc.WithReconnect())
	case "failover":
		return jsonrpc.DialFailover(ctx, []string{url, spare}, opts...)
	}
	c, err := jsonrpc.Dial(ctx, url, opts...)
	if err == nil && col.transport == "streamable" {
		if err = c.Call(ctx, "initialize", nil, nil); err != nil {
			c.Close()
		}
	}
	return c, err
}

type result struct {
	kinds  []string // one a call (a batch: two)
	took   time.Duration
	late   bool
	wrong  bool
	tokens []string
	// falseDeadline: an error matching context.DeadlineExceeded though
	// the call's context had not ended
	falseDeadline bool
}

func falseDeadline(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
}

// doWork makes one call (a batch of two in batch mode) under callTimeout.
func doWork(c jsonrpc.Client, col column, tok string) result {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	notify := col.transport == "streamable"
	start := time.Now()
	var r result
	if col.mode == "batch" {
		var b jsonrpc.Batch
		var got [2]string
		calls := [2]*jsonrpc.BatchCall{}
		for i := range calls {
			r.tokens = append(r.tokens, tok+"/"+strconv.Itoa(i))
			calls[i] = b.Call("work", workParams{Token: r.tokens[i], Notify: notify}, &got[i])
		}
		err := c.Batch(ctx, &b)
		for i, bc := range calls {
			e := err
			if e == nil {
				e = bc.Err
			}
			r.kinds = append(r.kinds, classify(e))
			r.falseDeadline = r.falseDeadline || falseDeadline(ctx, e)
			r.wrong = r.wrong || e == nil && got[i] != r.tokens[i]
		}
	} else {
		var got string
		r.tokens = []string{tok}
		err := c.Call(ctx, "work", workParams{Token: tok, Notify: notify}, &got)
		r.kinds = []string{classify(err)}
		r.falseDeadline = falseDeadline(ctx, err)
		r.wrong = err == nil && got != tok
	}
	r.took = time.Since(start)
	r.late = r.took > callTimeout+slack
	return r
}

// classify names an error by what a caller can test it with.
func classify(err error) string {
	var e *jsonrpc.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &e):
		return "error " + strconv.FormatInt(e.Code, 10)
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, jsonrpc.ErrConnectionLost):
		return "ErrConnectionLost"
	case errors.Is(err, jsonrpc.ErrNoResponse):
		return "ErrNoResponse"
	case errors.Is(err, jsonrpc.ErrInvalidResponse):
		return "ErrInvalidResponse"
	case errors.Is(err, jsonrpc.ErrNoEndpoint):
		return "ErrNoEndpoint"
	case errors.Is(err, jsonrpc.ErrClosed):
		return "ErrClosed"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "EOF"
	}
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		return "HTTP " + strconv.Itoa(he.StatusCode)
	}
	if os.Getenv("CHAOS_MATRIX_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "transport error:", err)
	}
	return "transport error"
}

// set returns the kinds seen, sorted, each once: how many calls of a cell
// see each depends on timing (those in flight at a cut), which did not.
func set(kinds []string) []string {
	out := slices.Clone(kinds)
	slices.Sort(out)
	return slices.Compact(out)
}

func renderMatrix(rows, subRows [][]string, findings []string) string {
	var b strings.Builder
	b.WriteString(`# Reliability: what a caller sees under each fault

Generated by ` + "`TestFaultMatrix`" + ` (chaos/matrix_test.go): ` + "`go test ./chaos -run TestFaultMatrix -update`" + `
rewrites this file; the test fails when the file and the code disagree.

Each cell puts a ` + "[chaos](../chaos)" + ` proxy with one fault between a client and a real server
serving ` + "`work`" + ` (it records and returns a token). The client makes one call (untouched: shown
only when it did not succeed), the call the fault hits (the second ` + "`work`" + ` message in the
fault's direction: dir=in towards the server, dir=out towards the client), then six calls at
once. Every call has a ` + callTimeout.String() + ` context. Results: ` + "`ok`" + `, ` + "`error CODE`" + ` (a JSON-RPC
error), ` + "`deadline`" + ` (the call's context ended: nothing told the client the answer would not
come), or the sentinel the error matches (` + "`ErrConnectionLost`" + `: the call left and its
connection dropped, never resent; ` + "`ErrClosed`" + `: the connection is gone). A batch cell counts
its two calls. Modes: plain ` + "`Dial`" + `, ` + "`WithReconnect`" + `, ` + "`DialFailover`" + ` over the proxied
server and a second, direct one, a ` + "`Batch`" + ` of two calls; lsp: tcp with Content-Length framing; reconnect+ping: ` + "`WithPing(100ms, 150ms)`" + ` too; reconnect+stall: ` + "`WithStallTimeout(250ms)`" + ` too; Streamable HTTP through ` + "`Dial`" + ` with
` + "`WithStreamableHTTP`" + ` (its calls notify first, so answers are event streams). — : the fault
has no meaning there.

The test asserts in every cell: no call returns later than its context allows (+` + slack.String() + `) or
fails with an error matching ` + "`context.DeadlineExceeded`" + ` before its context ends, no
call is executed twice unless the fault duplicated it towards the server, no call gets
another's answer, and (TestMain) no goroutine outlives the matrix.

`)
	b.WriteString("| fault |")
	for _, c := range matrixColumns {
		b.WriteString(" " + c.transport + " " + c.mode + " |")
	}
	b.WriteString("\n|---|")
	for range matrixColumns {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString(subIntro)
	b.WriteString("| fault |")
	for _, tr := range subTransports {
		b.WriteString(" " + tr + " Resubscribe |")
	}
	b.WriteString("\n|---|")
	for range subTransports {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range subRows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString(matrixNotes)
	b.WriteString("\n## Invariants broken\n\n")
	if len(findings) == 0 {
		b.WriteString("None: every cell meets the invariants above (a cell that breaks one fails the test).\n")
	}
	for _, f := range slices.Compact(findings) {
		b.WriteString(f + "\n")
	}
	return b.String()
}

const subIntro = `
## Subscriptions

A ` + "`Resubscribe`" + ` on a ` + "`WithReconnect`" + ` client (backoff 10-50 ms) consumes a demo ticker (an event every
20 ms, ` + "`demo_subscription`" + ` notifications, go-ethereum's form) through the proxy; the fault hits the
third event. The cell lists what the consumer saw of twelve events within 2 s: runs of events in
order, ` + "`gap`" + ` (a ` + "`SubscriptionGap`" + `: the subscription was made again, its ticker starts at 1), values
missing or repeated without one. The test fails when a connection's failure loses an event
without a gap.

`

// matrixNotes reads the table; it is part of the golden file, so a change
// of outcome that makes it wrong fails the test too.
const matrixNotes = `
## Reading the table

- ` + "`DialFailover`" + ` spreads calls over its endpoints in turn: the second call went to the direct
  server, and the fault hit one of the six calls after it (the others went either way).
- Without ` + "`WithReconnect`" + ` a cut connection stays closed: the call in flight and every later one
  fail at once with ` + "`ErrClosed`" + `. With it, the call in flight fails with ` + "`ErrConnectionLost`" + `
  (it may have been served: never sent again) and later calls go through a new connection.
- A request duplicated towards the server is executed twice (JSON-RPC has no duplicate
  suppression; the caller sees one answer). A duplicated answer is ignored by the client.
- Streamable HTTP with sessions resumes a POST's event stream with ` + "`Last-Event-ID`" + ` when it ends
  before its response (cut after the first event, connection cut at the answer, answer event
  dropped): the call succeeds, from the server's event store. A stream cut before its first
  event id (cut-after-bytes=20) cannot be resumed, and a stream whose answer event was
  corrupted ends without it: the call fails at once with the stream's error.
- ` + "`WithStallTimeout(250ms)`" + ` (tcp reconnect+stall) takes a connection that reads nothing for 250ms while
  calls wait as lost: a half-open peer, and also a dropped request or answer (nothing else was
  due), fail the call in flight with ` + "`ErrConnectionLost`" + ` after about 250ms rather than at its
  deadline, and later calls go through a new connection. A slow answer (delay, bandwidth)
  within the timeout is not affected.
- A corrupted answer fails its call at once with ` + "`ErrInvalidResponse`" + ` on every transport. On
  HTTP the answer is known to be the POST's; on tcp and ws the client reads the id that the
  message still shows (a response's, ending before the bad byte; bad bytes tolerated only in
  strings) and fails that call, or, for a batch reply, its whole batch (fixed: such a call
  used to wait out its context). A corrupted answer whose id is unreadable is still waited for.

## Known limits (found by the matrix, not fixed)

- **half-open on tcp and ws**: nothing detects a peer that stops reading and writing while
  keeping its socket. The call and every later call on that connection wait out their
  contexts (a call without a deadline would wait for ever), and ` + "`WithReconnect`" + ` does not
  redial, since the connection never fails. WebSocket's pings end it (every 30 s by default; with
  ` + "`WithPing(100ms, 150ms)`" + ` the connection is dropped and redialled, see ws reconnect+ping);
  on TCP only the caller's deadline does, unless ` + "`WithStallTimeout`" + ` is set (opt-in: calls
  in flight and nothing read for its duration drop the connection; see tcp reconnect+stall).
  ` + "`DialFailover`" + ` keeps giving such an endpoint its turn:
  the calls sent to it time out while the others succeed.
- **a subscription notification dropped, duplicated or corrupted on a live connection** reaches
  the consumer as a missing or repeated event with no ` + "`SubscriptionGap`" + `: go-ethereum-style
  notifications carry no sequence number, so nothing can tell. A connection that fails (cut,
  cut mid-message) always yields a gap. A half-open connection stalls the subscription until
  the consumer's context ends, as it stalls calls.
`

func checkGolden(t *testing.T, got string) {
	t.Helper()
	const path = "../docs/reliability.md"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("docs/reliability.md differs from the matrix (go test ./chaos -run TestFaultMatrix -update):\n%s", got)
	}
}
