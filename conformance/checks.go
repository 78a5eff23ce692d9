package conformance

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
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
				return fmt.Errorf("sent id %s, the response has %s", clip([]byte(c.id)), idText(resp))
			}
			if !exact {
				r.respelled = append(r.respelled, fmt.Sprintf("%s echoed as %s", clip([]byte(c.id)), clip(resp.id())))
			}
			return nil
		}})
	}
	for _, c := range []struct{ name, id string }{{"invalid-object", `{"a":1}`}, {"invalid-array", `[1]`}, {"invalid-bool", `true`}} {
		// The method does not exist either: a server may say so first
		// (-32601), hence SHOULD.
		cs = append(cs, errorCase{name: "id/" + c.name, spec: specRequest + " (id: a String, Number, or NULL); " + specError, level: SHOULD,
			msg: string(request(c.id)), codes: []int64{codeInvalidRequest}}.check())
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
			return errors.New("it was answered")
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
		return fmt.Errorf("want error %s, got %s", codeList(codes), resp.describe())
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

// errorCases are the messages that are not valid JSON (-32700) or not a
// valid Request (-32600); the id of their error is null when it could not
// be read (§5).
func errorCases() []check {
	m := `"method":"` + unknownMethod + `"`
	parse := func(name, msg string) errorCase {
		return errorCase{name: "parse/" + name, spec: specError + " -32700 Parse error; " + specResponse + " (id Null)", msg: msg, codes: []int64{codeParse}, mayClose: true}
	}
	invalid := func(name, msg string) errorCase {
		return errorCase{name: "request/" + name, spec: specRequest + "; " + specError + " -32600 Invalid Request", msg: msg, codes: []int64{codeInvalidRequest}}
	}
	withID := func(e errorCase) errorCase { e.id, e.idOrNull = "1", true; return e }
	delimited := func(e errorCase) errorCase { e.delimited = true; return e }
	// The method does not exist either: a server may say so first
	// (-32601), hence SHOULD.
	badParams := func(e errorCase) errorCase {
		e.spec = specParams + " (a Structured value); " + specError
		e.codes = []int64{codeInvalidRequest, codeInvalidParams}
		e.level = SHOULD
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

func batchChecks() []check {
	all := []want{{`"a"`, codeMethodNotFound}, {`7`, codeMethodNotFound}, {`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}}
	n := `{"jsonrpc":"2.0","method":"` + unknownMethod + `"}`
	return []check{
		{name: "batch/mixed", level: SHOULD, spec: specBatch + " (a Response for each Request, in any order)", run: func(r *runner) error {
			return r.batchOf(batchMixed, all)
		}},
		{name: "batch/notification-not-answered", level: MUST, spec: specNotification + " (also within a batch)", run: (*runner).batchNotificationNotAnswered},
		{name: "batch/response-ids", level: MUST, spec: specResponse + " (id MUST be the same as the request's)", run: (*runner).batchResponseIDs},
		{name: "batch/invalid-element-code", level: MUST, spec: specBatch + " (rpc call with an invalid Batch); " + specError + " -32600", run: (*runner).batchInvalidElementCode},
		{name: "batch/invalid-elements", level: SHOULD, spec: specBatch + " (a Response for each element)", run: func(r *runner) error {
			return r.batchOf(`[1,2,3]`, []want{{`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}, {`null`, codeInvalidRequest}})
		}},
		errorCase{name: "batch/empty", spec: specBatch + " (an Array with at least one value, else a single Response object); " + specError, msg: `[]`, codes: []int64{codeInvalidRequest}}.check(),
		errorCase{name: "batch/invalid-json", spec: specBatch + " (invalid JSON: a single Response object); " + specError, msg: `[{"jsonrpc":"2.0","method":"` + unknownMethod + `","id":1},{"jsonrpc":"2.0","method"]`, codes: []int64{codeParse}, mayClose: true}.check(),
		{name: "batch/all-notifications", level: MUST, spec: specBatch + " (MUST NOT return an empty Array); " + specNotification, run: (*runner).batchAllNotifications},
		silentCheck("batch/all-notifications-silent", SHOULD, specBatch+" (should return nothing at all)", `[`+n+`,{"jsonrpc":"2.0","method":"rpc.conformance_no_such_method","params":{}}]`),
		{name: "batch/single-element", level: SHOULD, spec: specBatch + " (the Server should respond with an Array)", run: func(r *runner) error {
			return r.batchOf(`[`+string(request(`"one"`))+`]`, []want{{`"one"`, codeMethodNotFound}})
		}},
		{name: "batch/duplicate-ids", level: SHOULD, spec: specBatch + " (a Response for each Request)", run: (*runner).batchDuplicateIDs},
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

func (r *runner) batchInvalidElementCode() error {
	rep, err := r.call([]byte(`[1,2,3]`))
	if err != nil {
		return err
	}
	if rep.invalid != "" {
		return fmt.Errorf("the reply is %s", rep.invalid)
	}
	for _, it := range rep.items {
		if err := expectError(it, "null", false, []int64{codeInvalidRequest}); err != nil {
			return err
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

func (r *runner) batchDuplicateIDs() error {
	// The server may refuse an id already in use: any two
	// responses with the id will do.
	rep, err := r.call([]byte(`[` + string(request(`1`)) + `,` + string(request(`1`)) + `]`))
	if err != nil {
		return err
	}
	n := 0
	for _, it := range rep.items {
		if string(it.id()) == "1" {
			n++
		}
	}
	if !rep.batch || n != 2 {
		return fmt.Errorf("want an Array of 2 responses with id 1")
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
		return fmt.Errorf("the reply is a single %s, not an Array", rep.items[0].describe())
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
