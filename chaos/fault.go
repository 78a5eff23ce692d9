package chaos

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Dir is the direction of a message through the proxy.
type Dir uint8

const (
	Any Dir = iota // either direction
	In             // from the client towards the target
	Out            // from the target towards the client
)

func (d Dir) String() string {
	switch d {
	case In:
		return "in"
	case Out:
		return "out"
	}
	return "any"
}

// Action is what a fault does to a message it matches.
type Action string

const (
	// Delay holds the message for Fault.Delay (or a draw from Fault.DelayMax
	// or Fault.DelayMean) before forwarding it; on a connection the messages
	// behind it wait too, as on a slow link.
	Delay Action = "delay"
	// Error answers a request, instead of forwarding it (In) or instead of
	// its answer (Out), with a JSON-RPC error of Fault.Code that keeps the
	// request's id; each call of a batch gets one. A notification matched
	// In is dropped.
	Error Action = "error"
	// Drop forwards nothing: on HTTP the POST is held unanswered until its
	// client gives up (or an answer's event, or the JSON answer, is held).
	Drop Action = "drop"
	// Dup forwards the message twice (In on HTTP: the POST is sent twice,
	// the client gets the first answer; Out on an HTTP JSON answer it has
	// no meaning and the answer goes as it is).
	Dup Action = "dup"
	// Reorder forwards a batch with its elements in reverse order (a
	// message that is not a batch goes as it is).
	Reorder Action = "reorder"
	// Cut closes the connection (both sides) instead of forwarding the
	// message; on HTTP the client's connection is closed without an answer.
	Cut Action = "cut"
	// CutAfterBytes forwards Fault.N more bytes in the message's direction,
	// from the message's first byte (framing included), then cuts.
	CutAfterBytes Action = "cut-after-bytes"
	// SSECutAfter cuts an event-stream answer (Streamable HTTP) after
	// Fault.N events; it matches the stream by the method of the request it
	// answers ("" for the GET stream), Dir Out.
	SSECutAfter Action = "sse-cut-after"
	// Corrupt replaces one byte of the message, at a seeded position, with
	// 0xFF, which is never valid UTF-8: the peer sees a parse error.
	Corrupt Action = "corrupt"
	// HalfOpen stops the connection: the proxy neither reads nor writes
	// either side from then on, and keeps both sockets open until Close (on
	// HTTP: the client's connection, unanswered).
	HalfOpen Action = "half-open"
	// Bandwidth writes the message at Fault.N bytes a second.
	Bandwidth Action = "bandwidth"
	// SlowRead makes the proxy read the message's sender slowly from then
	// on (64 bytes every 50 ms), so the sender's writes back up.
	SlowRead Action = "slow-read"
)

// Fault is a match and an action; see the package doc.
type Fault struct {
	Method string  // "": any
	Dir    Dir     // Any, In or Out
	Nth    int64   // the N-th matching message, 1-based (0: every one)
	P      float64 // the probability of acting on a match (0: always)

	Action    Action
	Delay     time.Duration // Delay: the fixed delay, or the low end of a uniform one
	DelayMax  time.Duration // Delay: the high end of a uniform delay (0: fixed)
	DelayMean time.Duration // Delay: the mean of an exponential delay (instead)
	Code      int64         // Error: the JSON-RPC error code
	N         int64         // CutAfterBytes, SSECutAfter, Bandwidth

	seen atomic.Int64 // matching messages so far
}

// MustParse is ParseFault that panics on error, for tests.
func MustParse(spec string) *Fault {
	f, err := ParseFault(spec)
	if err != nil {
		panic(err)
	}
	return f
}

// ParseFault reads a fault spec: a comma-separated list of a match
// (method=NAME, dir=in|out, nth=N, p=P) and one action (delay=DURATION,
// delay=MIN..MAX, delay=exp:MEAN, error=CODE, drop, dup, reorder, cut,
// cut-after-bytes=N, sse-cut-after=N, corrupt, half-open, bandwidth=BYTES,
// slow-read).
func ParseFault(spec string) (*Fault, error) {
	f := &Fault{}
	for part := range strings.SplitSeq(spec, ",") {
		k, v, hasV := strings.Cut(strings.TrimSpace(part), "=")
		if err := f.set(k, v, hasV); err != nil {
			return nil, fmt.Errorf("chaos: fault %q: %w", spec, err)
		}
	}
	if f.Action == "" {
		return nil, fmt.Errorf("chaos: fault %q: no action (delay, error, drop, dup, reorder, cut, cut-after-bytes, sse-cut-after, corrupt, half-open, bandwidth, slow-read)", spec)
	}
	return f, nil
}

func (f *Fault) set(k, v string, hasV bool) error {
	var err error
	switch k {
	case "method":
		f.Method = v
		return nil
	case "dir":
		switch v {
		case "in":
			f.Dir = In
		case "out":
			f.Dir = Out
		case "any":
			f.Dir = Any
		default:
			return fmt.Errorf("dir=%q: want in or out", v)
		}
		return nil
	case "nth":
		f.Nth, err = positive(v)
		return err
	case "p":
		f.P, err = strconv.ParseFloat(v, 64)
		if err == nil && (f.P <= 0 || f.P > 1) {
			err = errors.New("p must be in (0, 1]")
		}
		return err
	}
	return f.setAction(Action(k), v, hasV)
}

func (f *Fault) setAction(a Action, v string, hasV bool) error {
	if f.Action != "" {
		return fmt.Errorf("two actions (%s, %s)", f.Action, a)
	}
	f.Action = a
	var err error
	switch a {
	case Drop, Dup, Reorder, Cut, Corrupt, HalfOpen, SlowRead:
		if hasV {
			return fmt.Errorf("%s takes no value", a)
		}
	case Delay:
		err = f.setDelay(v)
	case Error:
		f.Code, err = strconv.ParseInt(v, 10, 64)
	case CutAfterBytes, SSECutAfter, Bandwidth:
		f.N, err = positive(v)
	default:
		return fmt.Errorf("unknown %q", a)
	}
	if err != nil {
		return fmt.Errorf("%s=%q: %w", a, v, err)
	}
	return nil
}

func (f *Fault) setDelay(v string) error {
	var err error
	if mean, ok := strings.CutPrefix(v, "exp:"); ok {
		f.DelayMean, err = time.ParseDuration(mean)
		return err
	}
	if lo, hi, ok := strings.Cut(v, ".."); ok {
		if f.Delay, err = time.ParseDuration(lo); err != nil {
			return err
		}
		if f.DelayMax, err = time.ParseDuration(hi); err == nil && f.DelayMax < f.Delay {
			err = errors.New("the high end is below the low end")
		}
		return err
	}
	f.Delay, err = time.ParseDuration(v)
	return err
}

func positive(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && n <= 0 {
		err = errors.New("must be positive")
	}
	return n, err
}

// String returns the fault as a spec ParseFault reads.
func (f *Fault) String() string {
	var parts []string
	if f.Method != "" {
		parts = append(parts, "method="+f.Method)
	}
	if f.Dir != Any {
		parts = append(parts, "dir="+f.Dir.String())
	}
	if f.Nth > 0 {
		parts = append(parts, "nth="+strconv.FormatInt(f.Nth, 10))
	}
	if f.P > 0 {
		parts = append(parts, "p="+strconv.FormatFloat(f.P, 'g', -1, 64))
	}
	return strings.Join(append(parts, f.actionString()), ",")
}

func (f *Fault) actionString() string {
	switch f.Action {
	case Delay:
		switch {
		case f.DelayMean > 0:
			return "delay=exp:" + f.DelayMean.String()
		case f.DelayMax > 0:
			return "delay=" + f.Delay.String() + ".." + f.DelayMax.String()
		}
		return "delay=" + f.Delay.String()
	case Error:
		return "error=" + strconv.FormatInt(f.Code, 10)
	case CutAfterBytes, SSECutAfter, Bandwidth:
		return string(f.Action) + "=" + strconv.FormatInt(f.N, 10)
	}
	return string(f.Action)
}

// dice is the seeded generator behind P, delays and corrupt positions.
type dice struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newDice(seed uint64) *dice {
	return &dice{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (d *dice) float() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Float64()
}

func (d *dice) intn(n int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.IntN(n)
}

// delay draws the fault's delay.
func (f *Fault) delay(d *dice) time.Duration {
	switch {
	case f.DelayMean > 0:
		d.mu.Lock()
		defer d.mu.Unlock()
		return time.Duration(d.r.ExpFloat64() * float64(f.DelayMean))
	case f.DelayMax > f.Delay:
		return f.Delay + time.Duration(d.float()*float64(f.DelayMax-f.Delay))
	}
	return f.Delay
}

// matches reports whether the fault acts on a message of method going in
// direction dir; it counts the message towards Nth when the rest matches.
func (f *Fault) matches(dir Dir, method string, d *dice) bool {
	if f.Dir != Any && f.Dir != dir {
		return false
	}
	if f.Method != "" && f.Method != method {
		return false
	}
	if f.Action == SSECutAfter {
		return false // matched against event streams only (matchStream)
	}
	return f.count(d)
}

// matchStream is matches for an event-stream answer to method.
func (f *Fault) matchStream(method string, d *dice) bool {
	if f.Action != SSECutAfter || f.Dir == In || (f.Method != "" && f.Method != method) {
		return false
	}
	return f.count(d)
}

func (f *Fault) count(d *dice) bool {
	n := f.seen.Add(1)
	if f.Nth > 0 && n != f.Nth {
		return false
	}
	return f.P <= 0 || d.float() < f.P
}
