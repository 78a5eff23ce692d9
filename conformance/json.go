package conformance

import (
	"bytes"
	"fmt"
	"math/big"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// loose reads whatever JSON a server sent: duplicate names and invalid
// UTF-8 are recorded by the checks, not refused by the reader.
var loose = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// reply is one message from the server, read as JSON: a single response,
// or a batch reply (an array).
type reply struct {
	raw     []byte
	batch   bool
	items   []*response // the response, or the array's elements
	invalid string      // why raw is not JSON at all, or not an object or array
	badUTF8 bool        // raw holds invalid UTF-8
	dupName bool        // an object of raw repeats a member name
}

// response is one object of a reply.
type response struct {
	raw     jsontext.Value
	members []member
	notObj  bool // an element of a batch reply that is not an object
}

type member struct {
	name  string
	value jsontext.Value
}

// parseReply reads b. It never fails: what is wrong is in the fields.
func parseReply(b []byte) *reply {
	r := &reply{raw: b}
	v := jsontext.Value(bytes.TrimSpace(b))
	c := v.Clone()
	if err := c.Compact(loose...); err != nil {
		r.invalid = "not JSON: " + err.Error()
		return r
	}
	r.badUTF8 = !v.IsValid(jsontext.AllowDuplicateNames(true))
	r.dupName = !v.IsValid(jsontext.AllowInvalidUTF8(true))
	switch v.Kind() {
	case '{':
		r.items = []*response{parseObject(v)}
	case '[':
		r.batch = true
		for _, e := range elements(v) {
			if e.Kind() != '{' {
				r.items = append(r.items, &response{raw: e, notObj: true})
				continue
			}
			r.items = append(r.items, parseObject(e))
		}
	default:
		r.invalid = "a JSON " + kindName(v.Kind()) + ", not a Response object or an array of them"
	}
	return r
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "value"
}

// elements returns the elements of a valid JSON array.
func elements(v jsontext.Value) []jsontext.Value {
	d := jsontext.NewDecoder(bytes.NewReader(v), loose...)
	d.ReadToken() // [
	var out []jsontext.Value
	for d.PeekKind() != ']' {
		e, err := d.ReadValue()
		if err != nil {
			break
		}
		out = append(out, e.Clone())
	}
	return out
}

// parseObject returns the members of a valid JSON object, in order.
func parseObject(v jsontext.Value) *response {
	r := &response{raw: v}
	d := jsontext.NewDecoder(bytes.NewReader(v), loose...)
	d.ReadToken() // {
	for d.PeekKind() != '}' {
		tok, err := d.ReadToken()
		if err != nil {
			break
		}
		name := tok.String()
		val, err := d.ReadValue()
		if err != nil {
			break
		}
		r.members = append(r.members, member{name, val.Clone()})
	}
	return r
}

// get returns the first member called name (names are case-sensitive).
func (r *response) get(name string) (jsontext.Value, bool) {
	for _, m := range r.members {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

func (r *response) has(name string) bool { _, ok := r.get(name); return ok }

// id returns the id member, or nil when there is none.
func (r *response) id() jsontext.Value { v, _ := r.get("id"); return v }

// isServerMessage reports whether r is a request or notification from the
// server (it has a method), not a response.
func (r *response) isServerMessage() bool {
	return r.has("method") && !r.has("result") && !r.has("error")
}

// code returns error.code when r is an error response whose code is a JSON
// integer.
func (r *response) code() (int64, bool) {
	e, ok := r.get("error")
	if !ok || e.Kind() != '{' {
		return 0, false
	}
	c, ok := parseObject(e).get("code")
	if !ok || c.Kind() != '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(c), 10, 64)
	return n, err == nil
}

// describe says what r is, in a few words: "error -32601", "result".
func (r *response) describe() string {
	if c, ok := r.code(); ok {
		return fmt.Sprintf("error %d", c)
	}
	if r.has("error") {
		return "an error without an integer code"
	}
	if r.has("result") {
		return "a result"
	}
	return "an object with neither result nor error"
}

// sameID compares an id echoed by the server with the one sent: same
// JSON type and value (strings after unescaping, numbers exactly, with no
// rounding), and whether the bytes are identical as well.
func sameID(sent, got jsontext.Value) (sameValue, sameBytes bool) {
	if got == nil {
		return false, false
	}
	if bytes.Equal(sent, got) {
		return true, true
	}
	if sent.Kind() != got.Kind() {
		return false, false
	}
	switch sent.Kind() {
	case '"':
		a, err1 := jsontext.AppendUnquote(nil, sent)
		b, err2 := jsontext.AppendUnquote(nil, got)
		return err1 == nil && err2 == nil && bytes.Equal(a, b), false
	case '0':
		return sameNumber(string(sent), string(got)), false
	case 'n':
		return true, false
	}
	return false, false
}

// sameNumber compares two JSON numbers exactly. Numbers too long to compare
// cheaply (a hostile server's) are compared as bytes.
func sameNumber(a, b string) bool {
	if len(a) > 400 || len(b) > 400 || bigExponent(a) || bigExponent(b) {
		return a == b
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

// jsonEqual reports whether two JSON values are equal as JSON: objects
// whatever their member order, numbers exactly.
func jsonEqual(a, b jsontext.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case '{':
		ma, mb := parseObject(a).members, parseObject(b).members
		if len(ma) != len(mb) {
			return false
		}
		for _, m := range ma {
			v, ok := (&response{members: mb}).get(m.name)
			if !ok || !jsonEqual(m.value, v) {
				return false
			}
		}
		return true
	case '[':
		ea, eb := elements(a), elements(b)
		if len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if !jsonEqual(ea[i], eb[i]) {
				return false
			}
		}
		return true
	}
	same, _ := sameID(a, b)
	return same || bytes.Equal(a, b)
}

// bigExponent reports whether the JSON number n has an exponent too large
// to expand.
func bigExponent(n string) bool {
	i := bytes.IndexAny([]byte(n), "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(n[i+1:])
	return err != nil || e > 1000 || e < -1000
}
