package conformance

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc"
)

// The specification's sections, as the checks cite them
// (https://www.jsonrpc.org/specification).
const (
	specRequest      = "§4 Request object"
	specNotification = "§4.1 Notification"
	specParams       = "§4.2 Parameter Structures"
	specResponse     = "§5 Response object"
	specError        = "§5.1 Error object"
	specBatch        = "§6 Batch"
	specRFC8259      = "RFC 8259 §8.1 (JSON text MUST be UTF-8)"
	specHTTP         = "no HTTP binding in the spec; RFC 8259 §11 media type, JSON-RPC over HTTP draft"
)

// The error codes of §5.1.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// unknownMethod is a method no server has.
const unknownMethod = "conformance.no_such_method"

// request returns a request for unknownMethod with the id given as JSON
// text.
func request(id string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"` + unknownMethod + `","id":` + id + `}`)
}

// protocolChecks are the checks that need no knowledge of the server's
// methods.
func protocolChecks() []check {
	var cs []check
	cs = append(cs, idChecks()...)
	cs = append(cs, notificationChecks()...)
	cs = append(cs, errorCases()...)
	cs = append(cs, framingChecks()...)
	cs = append(cs, batchChecks()...)
	cs = append(cs, httpChecks()...)
	return cs
}

// idCases are ids of every JSON type and size a Request may carry (§4: a
// String, Number, or Null).
var idCases = []struct{ name, id string }{
	{"string", `"abc"`},
	{"string-numeric", `"1"`},
	{"string-empty", `""`},
	{"string-unicode", `"héllo wörld ☃ 😀"`},
	{"string-escaped", `"\u00e9\n\"\\\/\ud83d\ude00"`},
	{"string-long", `"` + strings.Repeat("x", 1000) + `"`},
	{"int", `1`},
	{"int-zero", `0`},
	{"int-negative", `-1`},
	{"int-2^53+1", `9007199254740993`},
	{"int-2^63", `9223372036854775808`},
	{"int-2^64+1", `18446744073709551617`},
	{"int-negative-2^63-1", `-9223372036854775809`},
	{"fraction", `1.5`},
	{"fraction-long", `3.14159265358979323846264338327950288`},
	{"exponent", `1e3`},
	{"exponent-negative", `25E-1`},
	{"negative-zero", `-0`},
	{"null", `null`},
}

func idChecks() []check {
	var cs []check
	for _, c := range idCases {
		cs = append(cs, check{name: "id/" + c.name, level: MUST, spec: specResponse + " (id MUST be the same as the request's)", run: func(r *runner) error {
			resp, err := r.single(request(c.id))
			if err != nil {
				return err
			}
			r.idChecks++
			same, exact := sameID(jsontext.Value(c.id), resp.id())
			if !same {
				return because(idCause(jsontext.Value(c.id), resp.id()), "sent id %s, the response has %s", clip([]byte(c.id)), idText(resp))
			}
			if !exact {
				r.respelled = append(r.respelled, fmt.Sprintf("%s echoed as %s", clip([]byte(c.id)), clip(resp.id())))
			}
			return nil
		}})
	}
	for _, c := range []struct{ name, id string }{{"invalid-object", `{"a":1}`}, {"invalid-array", `[1]`}, {"invalid-bool", `true`}} {
		// An invalid Request object, graded by its family's rule (see
		// invalidRequest).
		cs = append(cs, invalidRequest("id/"+c.name, specRequest+" (id MUST contain a String, Number, or NULL value if included)", string(request(c.id))).check())
	}
	cs = append(cs, check{name: "id/byte-for-byte", level: SHOULD, spec: specResponse + " (same value; the same bytes leave no doubt)", run: func(r *runner) error {
		switch {
		case r.idChecks == 0:
			return skip("no id check ran")
		case len(r.respelled) > 0:
			return fmt.Errorf("ids echoed with the same value but other bytes: %s", strings.Join(r.respelled, "; "))
		}
		return nil
	}})
	return cs
}

// idCause says how an id came back changed.
func idCause(sent, got jsontext.Value) string {
	switch {
	case got == nil:
		return "responses have no id member"
	case sent.Kind() != got.Kind():
		return "ids come back as another JSON type"
	case sent.Kind() == '0':
		a, errA := strconv.ParseFloat(string(sent), 64)
		b, errB := strconv.ParseFloat(string(got), 64)
		if errA == nil && errB == nil && a == b {
			return "numbers are rounded (read as 64-bit floats)"
		}
		return "numeric ids come back with another value"
	}
	return "ids come back with another value"
}

func idText(resp *response) string {
	id := resp.id()
	if id == nil {
		return "no id member"
	}
	return clip(id)
}

// notificationChecks send notifications of every shape: none may be
// answered, whether its method exists or not.
func notificationChecks() []check {
	n := `{"jsonrpc":"2.0","method":"` + unknownMethod + `"`
	cases := []struct{ name, msg string }{
		{"no-params", n + `}`},
		{"params-array", n + `,"params":[1,2,3]}`},
		{"params-empty-array", n + `,"params":[]}`},
		{"params-object", n + `,"params":{"a":1}}`},
		{"rpc-reserved", `{"jsonrpc":"2.0","method":"rpc.conformance_no_such_method"}`},
		{"members-reordered", `{"params":[1],"method":"` + unknownMethod + `","jsonrpc":"2.0"}`},
	}
	var cs []check
	for _, c := range cases {
		cs = append(cs, silentCheck("notification/"+c.name, MUST, specNotification+" (the Server MUST NOT reply)", c.msg))
	}
	return cs
}

// silentCheck checks that msg gets no reply at all.
func silentCheck(name string, level Level, spec, msg string) check {
	return check{name: name, level: level, spec: spec, run: func(r *runner) error {
		rep, err := r.silent([]byte(msg))
		if err != nil {
			return err
		}
		if rep != nil {
			return because("notifications are answered", "it was answered")
		}
		return nil
	}}
}

// errorCase is a message that must get one Response object with an error.
type errorCase struct {
	name, spec string
	level      Level // default MUST
	msg        string
	codes      []int64 // the codes accepted
	id         string  // the id the response must have, as JSON; "" is null
	idOrNull   bool    // null is accepted as well as id (the server may not have read it)
	mayClose   bool    // bad input: a stream may be closed after the reply
	delimited  bool    // only where messages are delimited (not newline-delimited streams: a server reading JSON values one after another waits for the rest)
}

func (e errorCase) check() check {
	if e.level == "" {
		e.level = MUST
	}
	id := e.id
	if id == "" {
		id = "null"
	}
	return check{name: e.name, level: e.level, spec: e.spec, mayClose: e.mayClose, run: func(r *runner) error {
		if e.delimited && !delimits(r.conn) {
			return skip("newline-delimited: a server that reads one JSON value after another rightly waits for the rest")
		}
		resp, err := r.single([]byte(e.msg))
		if err != nil {
			return err
		}
		return expectError(resp, id, e.idOrNull, e.codes)
	}}
}

// delimits reports whether conn delimits each message (HTTP, WebSocket,
// Content-Length framing), so that the server knows where a truncated or
// padded message ends.
func delimits(conn Conn) bool {
	if sc, ok := conn.(*streamConn); ok {
		return sc.framing == jsonrpc.FramingHeader
	}
	_, stream := conn.(RawConn)
	return !stream
}

// expectError checks an error response's code and id.
func expectError(resp *response, id string, idOrNull bool, codes []int64) error {
	code, ok := resp.code()
	if !ok || !slices.Contains(codes, code) {
		return because(fmt.Sprintf("%s where §5.1 gives %s", resp.describe(), codeList(codes)), "want error %s, got %s", codeList(codes), resp.describe())
	}
	same, _ := sameID(jsontext.Value(id), resp.id())
	if !same && !(idOrNull && string(resp.id()) == "null") {
		want := id
		if idOrNull {
			want += " (or null)"
		}
		return fmt.Errorf("want id %s, got %s", clip([]byte(want)), idText(resp))
	}
	return nil
}

func codeList(codes []int64) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, " or ")
}

// invalidRequest is a message that is valid JSON but not a valid Request
// object. One rule grades the whole family, MUST: a call was made, so the
// Server MUST reply (§5), and the reply is the error whose meaning §5.1
// gives as "The JSON sent is not a valid Request object" (-32600), with id
// Null when the id could not be read (§5). Whether another member is wrong
// too (these messages call a method no server has) does not lower it: the
// Request is invalid before its method is looked up.
func invalidRequest(name, spec, msg string) errorCase {
	return errorCase{name: name, level: MUST, spec: spec + "; " + specError + " -32600 Invalid Request", msg: msg, codes: []int64{codeInvalidRequest}}
}

// errorCases are the messages that are not valid JSON (-32700) or not a
// valid Request (-32600); the id of their error is null when it could not
// be read (§5).
func errorCases() []check {
	m := `"method":"` + unknownMethod + `"`
	parse := func(name, msg string) errorCase {
		return errorCase{name: "parse/" + name, spec: specError + " -32700 Parse error; " + specResponse + " (id Null)", msg: msg, codes: []int64{codeParse}, mayClose: true}
	}
	invalid := func(name, msg string) errorCase {
		return invalidRequest("request/"+name, specRequest, msg)
	}
	withID := func(e errorCase) errorCase { e.id, e.idOrNull = "1", true; return e }
	delimited := func(e errorCase) errorCase { e.delimited = true; return e }
	// params that are not a Structured value: §5.1 has a code for them
	// too (-32602 Invalid params).
	badParams := func(e errorCase) errorCase {
		e.spec = specParams + " (MUST be provided as a Structured value); " + specError + " -32600 Invalid Request or -32602 Invalid params"
		e.codes = []int64{codeInvalidRequest, codeInvalidParams}
		return withID(e)
	}
	cases := []errorCase{
		{name: "method-not-found", spec: specError + " -32601 Method not found", msg: `{"jsonrpc":"2.0",` + m + `,"params":[],"id":1}`, codes: []int64{codeMethodNotFound}, id: "1"},
		{name: "method-not-found/rpc-reserved", spec: specError + " -32601 Method not found", msg: `{"jsonrpc":"2.0","method":"rpc.conformance_no_such_method","id":2}`, codes: []int64{codeMethodNotFound}, id: "2"},
		delimited(parse("truncated", `{"jsonrpc":"2.0",`+m+`,"id":1`)),
		parse("single-quotes", `{'jsonrpc':'2.0','method':'x','id':1}`),
		parse("trailing-comma", `{"jsonrpc":"2.0",`+m+`,"id":1,}`),
		parse("unquoted-key", `{jsonrpc:"2.0",`+m+`,"id":1}`),
		parse("nan", `{"jsonrpc":"2.0",`+m+`,"params":[NaN],"id":1}`),
		parse("hex-number", `{"jsonrpc":"2.0",`+m+`,"id":0x1}`),
		parse("leading-zero", `{"jsonrpc":"2.0",`+m+`,"id":01}`),
		parse("bare-word", `hello`),
		delimited(parse("unterminated-string", `{"jsonrpc":"2.0","method":"x`)),
		parse("bad-escape", `{"jsonrpc":"2.0","method":"a\x41","id":1}`),
		func() errorCase {
			e := parse("control-character", "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\",\"id\":1}")
			e.level, e.spec = SHOULD, "RFC 8259 §7 (control characters MUST be escaped); "+e.spec
			return e
		}(),
		func() errorCase {
			e := parse("invalid-utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"a\xff\xfeb\",\"id\":1}")
			e.level, e.spec = SHOULD, specRFC8259+"; "+e.spec
			return e
		}(),
		delimited(parse("trailing-garbage", `{"jsonrpc":"2.0",`+m+`,"id":1} x`)),
		func() errorCase {
			e := delimited(parse("empty", ``))
			e.level = SHOULD
			return e
		}(),
		invalid("scalar-number", `1`),
		invalid("scalar-string", `"x"`),
		invalid("scalar-null", `null`),
		invalid("scalar-true", `true`),
		invalid("empty-object", `{}`),
		invalid("no-id-invalid", `{"jsonrpc":"2.0","method":1}`),
		invalid("keys-case", `{"JSONRPC":"2.0","METHOD":"`+unknownMethod+`","ID":1}`),
		withID(invalid("no-jsonrpc", `{`+m+`,"id":1}`)),
		withID(invalid("jsonrpc-1.0", `{"jsonrpc":"1.0",`+m+`,"id":1}`)),
		withID(invalid("jsonrpc-2", `{"jsonrpc":"2",`+m+`,"id":1}`)),
		withID(invalid("jsonrpc-number", `{"jsonrpc":2.0,`+m+`,"id":1}`)),
		withID(invalid("jsonrpc-space", `{"jsonrpc":"2.0 ",`+m+`,"id":1}`)),
		withID(invalid("jsonrpc-null", `{"jsonrpc":null,`+m+`,"id":1}`)),
		withID(invalid("no-method", `{"jsonrpc":"2.0","id":1}`)),
		withID(invalid("method-number", `{"jsonrpc":"2.0","method":1,"id":1}`)),
		withID(invalid("method-null", `{"jsonrpc":"2.0","method":null,"id":1}`)),
		withID(invalid("method-array", `{"jsonrpc":"2.0","method":["x"],"id":1}`)),
		withID(invalid("method-object", `{"jsonrpc":"2.0","method":{},"id":1}`)),
		badParams(invalid("params-string", `{"jsonrpc":"2.0",`+m+`,"params":"bar","id":1}`)),
		badParams(invalid("params-number", `{"jsonrpc":"2.0",`+m+`,"params":1,"id":1}`)),
		badParams(invalid("params-true", `{"jsonrpc":"2.0",`+m+`,"params":true,"id":1}`)),
		badParams(invalid("params-null", `{"jsonrpc":"2.0",`+m+`,"params":null,"id":1}`)),
	}
	cs := make([]check, len(cases))
	for i, e := range cases {
		cs[i] = e.check()
	}
	return cs
}

// batchMixed is a batch of two requests (ids "a" and 7), a notification
// and two elements that are not Requests.
var batchMixed = `[{"jsonrpc":"2.0","method":"` + unknownMethod + `","id":"a"},{"jsonrpc":"2.0","method":"` + unknownMethod + `","params":[1]},{"foo":"boo"},{"jsonrpc":"2.0","method":"` + unknownMethod + `","id":7},1]`

// want is one Response a batch must hold.
type want struct {
	id   string // JSON
	code int64
}

// batchChecks grade a batch by one rule. Every element that is not a
// Notification is a call, and "When a rpc call is made, the Server MUST
// reply with a Response" (§5) holds inside a batch too: each MUST get a
// Response under its id (an element that is not a Request at all: -32600,
// id Null, as outside a batch). No Notification may be answered (§4.1,
// MUST, "including those that are within a batch request"). §6's own
// MUSTs stand (invalid JSON or an empty Array: a single Response object;
// never an empty Array). What §6 says only SHOULD is graded SHOULD: that
// the Responses come back as one Array, exactly one for each Request, and
// nothing at all for a batch of Notifications.
func batchChecks() []check {
	all := []want{{`"a"`, codeMethodNotFound}, {`7`, codeMethodNotFound}, {`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}}
	n := `{"jsonrpc":"2.0","method":"` + unknownMethod + `"}`
	answered := specResponse + " (the Server MUST reply to each call, also within a batch)"
	return []check{
		{name: "batch/mixed", level: SHOULD, spec: specBatch + " (an Array with a Response for each Request, in any order)", run: func(r *runner) error {
			return r.batchOf(batchMixed, all)
		}},
		{name: "batch/calls-answered", level: MUST, spec: answered, run: func(r *runner) error {
			// Answered at all: the codes are the other checks' concern.
			return r.batchAnswered(batchMixed, []want{{`"a"`, 0}, {`7`, 0}, {`null`, 0}, {`null`, 0}})
		}},
		{name: "batch/notification-not-answered", level: MUST, spec: specNotification + " (also within a batch)", run: (*runner).batchNotificationNotAnswered},
		{name: "batch/response-ids", level: MUST, spec: specResponse + " (id MUST be the same as the request's)", run: (*runner).batchResponseIDs},
		{name: "batch/invalid-element-code", level: MUST, spec: answered + "; " + specError + " -32600", run: func(r *runner) error {
			return r.batchAnswered(`[1,2,3]`, []want{{`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}})
		}},
		{name: "batch/invalid-elements", level: SHOULD, spec: specBatch + " (an Array with a Response for each element)", run: func(r *runner) error {
			return r.batchOf(`[1,2,3]`, []want{{`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}})
		}},
		errorCase{name: "batch/empty", spec: specBatch + " (an Array with at least one value, else a single Response object); " + specError, msg: `[]`, codes: []int64{codeInvalidRequest}}.check(),
		errorCase{name: "batch/invalid-json", spec: specBatch + " (invalid JSON: a single Response object); " + specError, msg: `[{"jsonrpc":"2.0","method":"` + unknownMethod + `","id":1},{"jsonrpc":"2.0","method"]`, codes: []int64{codeParse}, mayClose: true}.check(),
		{name: "batch/all-notifications", level: MUST, spec: specBatch + " (MUST NOT return an empty Array); " + specNotification, run: (*runner).batchAllNotifications},
		silentCheck("batch/all-notifications-silent", SHOULD, specBatch+" (should return nothing at all)", `[`+n+`,{"jsonrpc":"2.0","method":"rpc.conformance_no_such_method","params":{}}]`),
		{name: "batch/single-element", level: SHOULD, spec: specBatch + " (the Server should respond with an Array)", run: func(r *runner) error {
			return r.batchOf(`[`+string(request(`"one"`))+`]`, []want{{`"one"`, codeMethodNotFound}})
		}},
		{name: "batch/duplicate-ids", level: MUST, spec: answered + " (two calls, two Responses, whatever their ids)", run: func(r *runner) error {
			// The server may refuse an id already in use: any error will do.
			return r.batchAnswered(`[`+string(request(`1`))+`,`+string(request(`1`))+`]`, []want{{`1`, 0}, {`1`, 0}})
		}},
	}
}

func (r *runner) batchNotificationNotAnswered() error {
	rep, err := r.call([]byte(batchMixed))
	if err != nil {
		return err
	}
	anon := 0
	for _, it := range rep.items {
		if id := it.id(); id == nil || string(id) == "null" {
			anon++
		}
	}
	if anon > 2 {
		return fmt.Errorf("%d responses without an id for the 2 elements that are not Requests: the notification was answered", anon)
	}
	return nil
}

func (r *runner) batchResponseIDs() error {
	rep, err := r.call([]byte(batchMixed))
	if err != nil {
		return err
	}
	for _, it := range rep.items {
		id := it.id()
		a, _ := sameID(jsontext.Value(`"a"`), id)
		b, _ := sameID(jsontext.Value(`7`), id)
		if !a && !b && string(id) != "null" {
			return fmt.Errorf("a response has id %s; the batch's ids are \"a\" and 7", idText(it))
		}
	}
	return nil
}

func (r *runner) batchAllNotifications() error {
	n := `{"jsonrpc":"2.0","method":"` + unknownMethod + `"}`
	rep, err := r.silent([]byte(`[` + n + `,` + n + `]`))
	if err != nil || rep == nil {
		return err
	}
	if rep.batch && len(rep.items) == 0 {
		return errors.New("the reply is an empty Array")
	}
	if len(rep.items) > 0 {
		return errors.New("the notifications were answered")
	}
	return nil
}

// batchOf sends msg, whose reply must be an array holding exactly the
// responses wanted, in any order.
func (r *runner) batchOf(msg string, wants []want) error {
	rep, err := r.call([]byte(msg))
	if err != nil {
		return err
	}
	switch {
	case rep.invalid != "":
		return fmt.Errorf("the reply is %s", rep.invalid)
	case !rep.batch:
		return because("a batch is answered with a single object, not an Array", "the reply is a single %s, not an Array", rep.items[0].describe())
	case len(rep.items) != len(wants):
		return fmt.Errorf("%d responses, want %d", len(rep.items), len(wants))
	}
	left := slices.Clone(rep.items)
	for _, w := range wants {
		i := slices.IndexFunc(left, func(it *response) bool { return expectError(it, w.id, false, []int64{w.code}) == nil })
		if i < 0 {
			return fmt.Errorf("no response with id %s and error %d", w.id, w.code)
		}
		left = slices.Delete(left, i, i+1)
	}
	return nil
}

// batchAnswered sends msg, a batch, and checks that each Response wanted
// came back under its id (code 0: any error or result), wherever the reply
// puts it: in an Array or, against §6's SHOULD, as a single object. A
// missing one is a call left unanswered.
func (r *runner) batchAnswered(msg string, wants []want) error {
	rep, err := r.call([]byte(msg))
	if err != nil {
		return err
	}
	if rep.invalid != "" {
		return fmt.Errorf("the reply is %s", rep.invalid)
	}
	left := slices.Clone(rep.items)
	var missing []string
	for _, w := range wants {
		i := slices.IndexFunc(left, func(it *response) bool {
			if w.code == 0 {
				same, _ := sameID(jsontext.Value(w.id), it.id())
				return same && (it.has("result") || it.has("error"))
			}
			return expectError(it, w.id, false, []int64{w.code}) == nil
		})
		if i < 0 {
			what := "a Response"
			if w.code != 0 {
				what = fmt.Sprintf("error %d", w.code)
			}
			missing = append(missing, fmt.Sprintf("%s with id %s", what, w.id))
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	if len(missing) > 0 {
		return because("calls of a batch are left unanswered", "%d of the %d calls got no Response (no %s)", len(missing), len(wants), strings.Join(missing, ", no "))
	}
	return nil
}

// httpChecks are the HTTP rules peers disagree on: none is in the
// specification, which has no HTTP binding.
func httpChecks() []check {
	onHTTP := func(r *runner) (HTTPConn, error) {
		h, ok := r.conn.(HTTPConn)
		if !ok {
			return nil, skip("not HTTP")
		}
		return h, nil
	}
	notify := []byte(`{"jsonrpc":"2.0","method":"` + unknownMethod + `"}`)
	return []check{
		{name: "http/content-type", level: SHOULD, spec: specHTTP, run: func(r *runner) error {
			h, err := onHTTP(r)
			if err != nil {
				return err
			}
			if _, err := r.single(request("1")); err != nil {
				return err
			}
			status, hd := h.LastResponse()
			if mt, _, _ := mime.ParseMediaType(hd.Get("Content-Type")); mt != "application/json" {
				return fmt.Errorf("HTTP %d with Content-Type %q, want application/json", status, hd.Get("Content-Type"))
			}
			return nil
		}},
		{name: "http/notification-status", level: SHOULD, spec: specHTTP + " (2xx, empty body)", run: func(r *runner) error {
			h, err := onHTTP(r)
			if err != nil {
				return err
			}
			if _, err := r.silent(notify); err != nil {
				return err
			}
			if status, _ := h.LastResponse(); status/100 != 2 {
				return fmt.Errorf("a notification got HTTP %d %s", status, http.StatusText(status))
			}
			return nil
		}},
		{name: "http/notification-204", level: MAY, spec: specHTTP + " (204 No Content)", run: func(r *runner) error {
			h, err := onHTTP(r)
			if err != nil {
				return err
			}
			if _, err := r.silent(notify); err != nil {
				return err
			}
			if status, _ := h.LastResponse(); status != http.StatusNoContent {
				return fmt.Errorf("a notification got HTTP %d %s (202 and 200 are common too)", status, http.StatusText(status))
			}
			return nil
		}},
	}
}
