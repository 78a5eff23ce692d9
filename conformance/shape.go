package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// shapeChecks look at every reply of the run: each Response object must
// have the members §5 and §5.1 give it, of the types they give.
func shapeChecks() []check {
	return slices.Concat(replyShapeChecks(), objectShapeChecks(), nameChecks())
}

// replyShapeChecks look at each reply of the run as a whole.
func replyShapeChecks() []check {
	return []check{
		replyCheck("response/json", MUST, specRFC8259+"; "+specResponse, func(rep *reply) error {
			if strings.HasPrefix(rep.invalid, "not JSON") {
				return errors.New(rep.invalid)
			}
			if rep.badUTF8 {
				return errors.New("invalid UTF-8")
			}
			return nil
		}),
		replyCheck("response/object", MUST, specResponse+" (a Response is an Object; a batch's, an Array of them)", func(rep *reply) error {
			if rep.invalid != "" && !strings.HasPrefix(rep.invalid, "not JSON") {
				return errors.New(rep.invalid)
			}
			for _, it := range rep.items {
				if it.notObj {
					return fmt.Errorf("an element of the Array is %s", clip(it.raw))
				}
			}
			return nil
		}),
	}
}

// objectShapeChecks look at each Response object of the run's replies.
func objectShapeChecks() []check {
	return []check{
		objectCheck("response/jsonrpc", MUST, specResponse+` (jsonrpc MUST be exactly "2.0")`, func(r *response) error {
			if v, _ := r.get("jsonrpc"); string(v) != `"2.0"` {
				return fmt.Errorf("jsonrpc is %s", orMissing(v))
			}
			return nil
		}),
		objectCheck("response/result-xor-error", MUST, specResponse+" (result or error MUST be included, not both)", func(r *response) error {
			if r.has("result") == r.has("error") {
				return errors.New("not exactly one of result and error")
			}
			return nil
		}),
		objectCheck("response/id-member", MUST, specResponse+" (id is REQUIRED)", func(r *response) error {
			if !r.has("id") {
				return errors.New("no id member")
			}
			return nil
		}),
		objectCheck("response/error-object", MUST, specError+" (code MUST be an integer; message a String)", func(r *response) error {
			e, ok := r.get("error")
			if !ok {
				return nil
			}
			if e.Kind() != '{' {
				return fmt.Errorf("error is %s, not an Object", clip(e))
			}
			if _, ok := r.code(); !ok {
				c, _ := parseObject(e).get("code")
				return fmt.Errorf("error.code is %s, not an integer", orMissing(c))
			}
			if m, _ := parseObject(e).get("message"); m.Kind() != '"' {
				return fmt.Errorf("error.message is %s, not a String", orMissing(m))
			}
			return nil
		}),
		objectCheck("response/no-extra-members", SHOULD, specResponse+" (the members are jsonrpc, result or error, id)", func(r *response) error {
			for _, m := range r.members {
				if !slices.Contains([]string{"jsonrpc", "result", "error", "id"}, m.name) {
					return fmt.Errorf("member %q", m.name)
				}
			}
			return nil
		}),
	}
}

// nameChecks look at the member names of the run's replies.
func nameChecks() []check {
	return []check{
		replyCheck("response/unique-names", SHOULD, "RFC 8259 §4 (names SHOULD be unique)", func(rep *reply) error {
			if rep.dupName {
				return errors.New("a member name is repeated")
			}
			return nil
		}),
	}
}

func orMissing(v []byte) string {
	if v == nil {
		return "missing"
	}
	return clip(v)
}

// replyCheck applies f to each reply of the run; the check fails on the
// first violation.
func replyCheck(name string, level Level, spec string, f func(rep *reply) error) check {
	return check{name: name, level: level, spec: spec, run: func(run *runner) error {
		if len(run.seen) == 0 {
			return skip("no reply was seen")
		}
		for _, s := range run.seen {
			if err := f(s.reply); err != nil {
				return fmt.Errorf("%v; sent: %s; got: %s", err, clip(s.sent), clip(s.reply.raw))
			}
		}
		return nil
	}}
}

// objectCheck applies f to each Response object of the run's replies.
func objectCheck(name string, level Level, spec string, f func(r *response) error) check {
	return replyCheck(name, level, spec, func(rep *reply) error {
		for _, it := range rep.items {
			if it.notObj {
				continue
			}
			if err := f(it); err != nil {
				return err
			}
		}
		return nil
	})
}
