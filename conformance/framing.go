package conformance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// specFraming is what the framing checks are written from: the
// specification has no framing, so a line-framed stream's rule follows from
// §5 and §5.1 once a line is known to be one message.
const specFraming = specError + " -32700 Parse error (a line is one message: text after the JSON makes it invalid JSON); " + specResponse + " (each call is answered)"

// framingChecks cover on line-framed streams what HTTP, WebSocket and
// Content-Length framing cover with delimited messages (parse/trailing-garbage
// and the like): what a line holds besides one message. One rule grades
// them, MUST: nothing on a line may be silently dropped. A server that
// reads lines answers the line -32700 (§5.1: it is not valid JSON); a
// server that reads one JSON value after another answers each value (§5)
// and the text that is not JSON -32700. Either way something is said about
// every part; a server that answers the first message and ignores the rest
// fails.
func framingChecks() []check {
	req := func(id string) string { return string(request(`"` + id + `"`)) }
	return []check{
		{name: "framing/text-after-message", level: MUST, spec: specFraming, mayClose: true, run: func(r *runner) error {
			return r.lineHolds(req("f-1")+` x`, []string{`"f-1"`}, true)
		}},
		{name: "framing/two-messages-one-line", level: MUST, spec: specFraming, mayClose: true, run: func(r *runner) error {
			return r.lineHolds(req("f-2")+req("f-3"), []string{`"f-2"`, `"f-3"`}, false)
		}},
		{name: "framing/not-json-then-valid", level: MUST, spec: specFraming + "; the next line is a message of its own", mayClose: true, run: func(r *runner) error {
			return r.notJSONThenValid(req("f-4"))
		}},
	}
}

// lineFramed returns a skip unless the connection is a newline-delimited
// stream.
func (r *runner) lineFramed() error {
	if delimits(r.conn) {
		return skip("messages are delimited by the transport (parse/trailing-garbage covers it)")
	}
	return nil
}

// lineHolds sends line, which holds the calls ids (and, when garbage, text
// that is not JSON after them), and collects what comes back before the
// reply to a request sent on the next line. It passes when the line was
// answered -32700 with id Null, or each part was answered: every call
// under its id, and any garbage -32700.
func (r *runner) lineHolds(line string, ids []string, garbage bool) error {
	if err := r.lineFramed(); err != nil {
		return err
	}
	reps, err := r.collect([]byte(line), func(reps []*reply) bool {
		parse, answered := tally(reps, ids)
		return len(answered) == len(ids) || parse > 0 && len(answered) == 0
	})
	if err != nil {
		return err
	}
	parse, answered := tally(reps, ids)
	switch {
	case parse > 0 && len(answered) == 0:
		return nil // the line, as one invalid message
	case len(answered) == len(ids) && (!garbage || parse > 0):
		return nil // one JSON value after another
	case len(answered) == 0:
		return fmt.Errorf("nothing came back for the line before the reply to the next one")
	}
	return because("the rest of a line is dropped silently", "only %s answered; the rest of the line was dropped silently (no -32700, no Response)", strings.Join(answered, ", "))
}

// notJSONThenValid sends a line that is not JSON and a call on the next
// line: the first is answered -32700, the second under its id.
func (r *runner) notJSONThenValid(call string) error {
	if err := r.lineFramed(); err != nil {
		return err
	}
	ids := []string{`"f-4"`}
	reps, err := r.collect([]byte("hello\n"+call), func(reps []*reply) bool {
		parse, answered := tally(reps, ids)
		return parse > 0 && len(answered) == 1
	})
	if err != nil {
		return err
	}
	parse, answered := tally(reps, ids)
	switch {
	case parse == 0:
		return errors.New("the line that is not JSON got no -32700")
	case len(answered) == 0:
		return errors.New("the call on the next line got no Response")
	}
	return nil
}

// tally counts the -32700 errors with id Null among reps and lists the ids
// of ids that were answered.
func tally(reps []*reply, ids []string) (parse int, answered []string) {
	for _, rep := range reps {
		for _, it := range rep.items {
			if expectError(it, "null", false, []int64{codeParse}) == nil {
				parse++
			}
			for _, id := range ids {
				if same, _ := sameID(jsontext.Value(id), it.id()); same {
					answered = append(answered, id)
				}
			}
		}
	}
	return parse, answered
}

// collect sends msg and a request behind it, and returns the replies other
// than the request's. A server may answer the calls of msg after that
// request (it may serve them concurrently: a stream does not order
// responses), so once the request's reply is in, collect reads on, up to
// the timeout, until complete says nothing more is awaited.
func (r *runner) collect(msg []byte, complete func([]*reply) bool) ([]*reply, error) {
	if err := r.send(msg); err != nil {
		return nil, err
	}
	sent := r.sent
	s := r.sentinel()
	if err := r.send(s); err != nil {
		return nil, err
	}
	r.sent = sent
	want := sentinelID(s)
	var reps []*reply
	var got []string
	answered := false // the request behind msg
	for !answered || !complete(reps) {
		rep, err := r.next(r.s.Timeout)
		var none *errNoReply
		switch {
		case answered && errors.As(err, &none):
			r.got = []byte(strings.Join(got, " "))
			return reps, nil // nothing more came: the verdict is the caller's
		case errors.As(err, &none):
			return nil, fmt.Errorf("the request sent on the next line (id %s) got no reply within %v", want, r.s.Timeout)
		case err != nil:
			return nil, err
		case len(rep.items) == 1 && !rep.batch && string(rep.items[0].id()) == want:
			answered = true
		default:
			reps = append(reps, rep)
			got = append(got, clip(rep.raw))
		}
	}
	r.got = []byte(strings.Join(got, " "))
	return reps, nil
}
