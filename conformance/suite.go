package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Level is how strongly the specification asks for what a check checks.
type Level string

// The levels, as RFC 2119 keywords of the specification's text.
const (
	MUST   Level = "MUST"
	SHOULD Level = "SHOULD"
	MAY    Level = "MAY"
)

// Status is the outcome of a check.
type Status string

// The outcomes.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Result is the outcome of one check.
type Result struct {
	Name   string `json:"name"`
	Level  Level  `json:"level"`
	Status Status `json:"status"`
	Spec   string `json:"spec"`   // the section of the specification the check is written from
	Detail string `json:"detail"` // on failure, what was sent and what came back
	// Cause is, on failure, why in a few words shared by the checks that
	// fail for the same reason ("numbers are rounded to 64-bit floats"), so
	// that a report can group them.
	Cause string `json:"cause,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	Target string   `json:"target"`
	Checks []Result `json:"checks"`
}

// Failed returns the checks of level l that failed.
func (r *Report) Failed(l Level) []Result {
	var out []Result
	for _, c := range r.Checks {
		if c.Status == Fail && c.Level == l {
			out = append(out, c)
		}
	}
	return out
}

// OK reports whether every MUST check passed (or was skipped).
func (r *Report) OK() bool { return len(r.Failed(MUST)) == 0 }

// Method names a method of the server under test and params that it
// accepts: the suite calls it (by id, with several id types, in a batch)
// and sends it as a notification.
type Method struct {
	Name   string
	Params json.RawMessage // an array or object; nil: no params member
	// Result, when set, is the result the call must return (an example of
	// the server's own discovery document): a MAY check compares them.
	Result json.RawMessage
}

// Hostile enables the checks of bad input (deep nesting, huge values,
// floods, a slow reader, truncated messages): after each the server must
// still answer.
type Hostile struct {
	MaxBytes int64         // the most bytes one case sends; default DefaultHostileBytes
	Duration time.Duration // the most time the hostile cases take together; default DefaultHostileDuration
}

// Defaults of Suite and Hostile.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultQuiet           = 50 * time.Millisecond
	DefaultHostileBytes    = 1 << 20
	DefaultHostileDuration = 10 * time.Second
)

// Suite runs the checks. The zero value runs the protocol checks (those
// that need no knowledge of the server's methods) with the defaults.
type Suite struct {
	// Timeout bounds the wait for each reply (default DefaultTimeout).
	Timeout time.Duration
	// Quiet is how long a stream is watched for a reply that must not come
	// (to a notification) before a request is sent behind it, whose reply
	// must then be the next message (default DefaultQuiet).
	Quiet time.Duration
	// Only and Skip select checks by name (nil: all; none).
	Only, Skip *regexp.Regexp
	// Methods are checked with the result checks.
	Methods []Method
	// Discover asks the server for rpc.discover (OpenRPC) and checks each
	// method that has an example, with the example's params.
	Discover bool
	// Hostile, when set, adds the checks of bad input.
	Hostile *Hostile
	// Progress, when set, is called with each result as it is known.
	Progress func(Result)
}

// ErrUnreachable is wrapped by Check's error when the target cannot be
// reached, or does not answer a request with JSON, at the start.
var ErrUnreachable = errors.New("conformance: target unreachable")

// Run runs the default Suite against target as part of a Go test: each
// failed MUST check is a test error, each failed SHOULD or MAY check is
// logged.
func Run(tb testing.TB, target Target) *Report {
	tb.Helper()
	return (&Suite{}).Run(tb, target)
}

// Run runs s against target as part of a Go test (see the function Run).
func (s *Suite) Run(tb testing.TB, target Target) *Report {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := s.Check(ctx, target)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range rep.Checks {
		switch {
		case c.Status == Fail && c.Level == MUST:
			tb.Errorf("%s %s (%s): %s", c.Level, c.Name, c.Spec, c.Detail)
		case c.Status == Fail:
			tb.Logf("%s %s (%s): %s", c.Level, c.Name, c.Spec, c.Detail)
		}
	}
	return rep
}

// Check runs s against target and returns the report. Its error is not nil
// only when the target could not be reached at the start (it wraps
// ErrUnreachable) or ctx ended.
func (s *Suite) Check(ctx context.Context, target Target) (*Report, error) {
	r := &runner{s: s.withDefaults(), target: target, ctx: ctx, rep: &Report{Target: target.String()}}
	if err := r.probe(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, target, err)
	}
	defer r.close()
	checks := protocolChecks()
	checks = append(checks, r.specExampleChecks()...)
	checks = append(checks, r.methodChecks()...)
	if r.s.Hostile != nil {
		checks = append(checks, hostileChecks()...)
	}
	checks = append(checks, shapeChecks()...)
	for _, c := range checks {
		if ctx.Err() != nil {
			return r.rep, ctx.Err()
		}
		r.run(c)
	}
	r.report(keptCheck(r.lost))
	return r.rep, nil
}

func (s *Suite) withDefaults() *Suite {
	c := *s
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Quiet <= 0 {
		c.Quiet = DefaultQuiet
	}
	if c.Hostile != nil {
		h := *c.Hostile
		if h.MaxBytes <= 0 {
			h.MaxBytes = DefaultHostileBytes
		}
		if h.Duration <= 0 {
			h.Duration = DefaultHostileDuration
		}
		c.Hostile = &h
	}
	return &c
}

// check is one check of the suite.
type check struct {
	name  string
	level Level
	spec  string
	// run returns nil when the check passes, a skip when it does not apply,
	// and otherwise what is wrong.
	run func(r *runner) error
	// mayClose: the server may close the connection after answering (bad
	// input on a stream); the next check then opens a new one.
	mayClose bool
}

// skip is returned by a check that does not apply to this target.
type skip string

func (s skip) Error() string { return string(s) }

// causeError is a failure whose cause is known in words shared by the
// checks it fails.
type causeError struct {
	cause string
	err   error
}

func (e *causeError) Error() string { return e.err.Error() }
func (e *causeError) Unwrap() error { return e.err }

// because returns a failure of cause, described by format and args.
func because(cause, format string, args ...any) error {
	return &causeError{cause: cause, err: fmt.Errorf(format, args...)}
}

// causeOf returns the cause of a failure: the one it was given, the loss
// of the connection, a missing reply, or else its text.
func causeOf(err error) string {
	var ce *causeError
	var lost *lostError
	var none *errNoReply
	switch {
	case errors.As(err, &ce):
		return ce.cause
	case errors.As(err, &lost):
		return "the server dropped the connection or exited"
	case errors.As(err, &none):
		return "no reply came"
	}
	return err.Error()
}

// lostError is a failure of the connection during a check.
type lostError struct{ err error }

func (e *lostError) Error() string { return "the connection was lost: " + e.err.Error() }
func (e *lostError) Unwrap() error { return e.err }

func (r *runner) selected(name string) bool {
	if r.s.Only != nil && !r.s.Only.MatchString(name) {
		return false
	}
	return r.s.Skip == nil || !r.s.Skip.MatchString(name)
}

// run runs one check and reports it.
func (r *runner) run(c check) {
	if !r.selected(c.name) {
		return
	}
	res := Result{Name: c.name, Level: c.level, Spec: c.spec, Status: Pass}
	r.sent, r.got = nil, nil
	err := r.ensureConn()
	if err == nil {
		err = c.run(r)
	}
	var sk skip
	var lost *lostError
	switch {
	case err == nil:
	case errors.As(err, &sk):
		res.Status, res.Detail = Skip, sk.Error()
	default:
		res.Status, res.Detail, res.Cause = Fail, err.Error()+r.exchange(), causeOf(err)
	}
	switch {
	case errors.As(err, &lost):
		r.lost = append(r.lost, c.name+": "+lost.err.Error())
		r.drop()
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		r.drop() // a late reply must not be taken for the next check's
	case c.mayClose && r.conn != nil:
		if r.alive() != nil {
			r.drop()
		}
	}
	r.report(res)
}

func (r *runner) report(res Result) {
	if !r.selected(res.Name) {
		return
	}
	r.rep.Checks = append(r.rep.Checks, res)
	if r.s.Progress != nil {
		r.s.Progress(res)
	}
}

// exchange describes what the failed check sent and received.
func (r *runner) exchange() string {
	var b strings.Builder
	if r.sent != nil {
		fmt.Fprintf(&b, "; sent: %s", clip(r.sent))
	}
	if r.got != nil {
		fmt.Fprintf(&b, "; got: %s", clip(r.got))
	}
	return b.String()
}

// clip shortens a message for a report line.
func clip(b []byte) string {
	const max = 200
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > max {
		s = s[:max] + fmt.Sprintf("…(%d bytes)", len(b))
	}
	return s
}

// keptCheck reports the connections lost during the run.
func keptCheck(lost []string) Result {
	res := Result{Name: "connection/kept", Level: MUST, Status: Pass, Spec: "§5 Response object (the Server MUST reply)"}
	if len(lost) > 0 {
		res.Status = Fail
		res.Detail = fmt.Sprintf("the server dropped the connection or exited during %d check(s), which failed: %s", len(lost), strings.Join(lost, "; "))
	}
	return res
}
