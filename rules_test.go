package jsonrpc

// Table tests of every rule of the JSON-RPC 2.0 specification (and of our
// stricter wire rules), run through the shared dispatcher (Server.process)
// and through a Conn over an in-memory pipe, so that both paths agree.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// quietLogger discards the server's logs (panics are logged on purpose here).
var quietLogger = slog.New(slog.DiscardHandler)

type subParams struct {
	Minuend    float64 `json:"minuend"`
	Subtrahend float64 `json:"subtrahend"`
}

type optParams struct {
	Name  string  `json:"name"`
	Count *int    `json:"count"`
	Tag   string  `json:"tag,omitempty"`
	Ratio float64 `json:"ratio,omitzero"`
}

var errSecret = errors.New("secret database password in error text")

// rulesMux returns the methods the rule tables call.
func rulesMux() *Mux {
	mux := NewMux()
	Register(mux, "echo", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) {
		if p == nil {
			return json.RawMessage("null"), nil
		}
		return bytes.Clone(p), nil
	})
	Register(mux, "subtract", func(_ context.Context, p subParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	Register(mux, "opt", func(_ context.Context, p optParams) (string, error) {
		c := "nil"
		if p.Count != nil {
			c = strconv.Itoa(*p.Count)
		}
		return p.Name + "/" + c + "/" + p.Tag, nil
	})
	Register(mux, "optptr", func(_ context.Context, p *optParams) (string, error) {
		if p == nil {
			return "nil", nil
		}
		return p.Name, nil
	})
	Register(mux, "square", func(_ context.Context, n int) (int, error) { return n * n, nil })
	Register(mux, "sum", func(_ context.Context, xs []int) (int, error) {
		t := 0
		for _, x := range xs {
			t += x
		}
		return t, nil
	})
	Register(mux, "keys", func(_ context.Context, m map[string]int) (int, error) { return len(m), nil })
	Register(mux, "null", func(_ context.Context, _ json.RawMessage) (any, error) { return nil, nil })
	Register(mux, "rpcerr", func(_ context.Context, _ json.RawMessage) (any, error) {
		return nil, (&Error{Code: -32050, Message: "custom"}).WithData(map[string]int{"k": 1})
	})
	Register(mux, "wrapped", func(_ context.Context, _ json.RawMessage) (any, error) {
		return nil, fmt.Errorf("layer: %w", &Error{Code: 42, Message: "inner", Data: json.RawMessage(`[1,2]`)})
	})
	Register(mux, "plain", func(_ context.Context, _ json.RawMessage) (any, error) { return nil, errSecret })
	Register(mux, "typednil", func(_ context.Context, _ json.RawMessage) (any, error) {
		var e *Error
		return nil, e // a non-nil error interface holding a nil *Error
	})
	Register(mux, "panic", func(_ context.Context, _ json.RawMessage) (any, error) { panic("boom") })
	Register(mux, "panicnil", func(_ context.Context, _ json.RawMessage) (any, error) { panic(nil) })
	Register(mux, "bad_result", func(_ context.Context, _ json.RawMessage) (any, error) { return func() {}, nil })
	Register(mux, "bad_raw", func(_ context.Context, _ json.RawMessage) (any, error) {
		return json.RawMessage(`{"a":`), nil
	})
	Register(mux, "nan", func(_ context.Context, _ json.RawMessage) (float64, error) {
		var zero float64
		return zero / zero, nil
	})
	Register(mux, "panic_marshal", func(_ context.Context, _ json.RawMessage) (panicMarshaler, error) { return panicMarshaler{}, nil })
	Register(mux, "panic_stream", func(_ context.Context, _ json.RawMessage) (Stream[int], error) {
		return func(yield func(int, error) bool) { panic("boom in the sequence") }, nil
	})
	Register(mux, "panic_elem", func(_ context.Context, _ json.RawMessage) (Stream[panicMarshaler], error) {
		return func(yield func(panicMarshaler, error) bool) { yield(panicMarshaler{}, nil) }, nil
	})
	return mux
}

// panicMarshaler is a result whose encoding panics (a bug in a user's
// MarshalJSON): the request gets -32603, the server goes on.
type panicMarshaler struct{}

func (panicMarshaler) MarshalJSON() ([]byte, error) { panic("boom in MarshalJSON") }

func rulesServer() *Server {
	return &Server{Handler: rulesMux(), MaxConcurrency: 1, MaxBatchLen: 10, Logger: quietLogger}
}

// dispatchOnce runs one message through the shared dispatcher.
func dispatchOnce(srv *Server, msg string) []byte {
	return srv.Process(context.Background(), []byte(msg))
}

// pipeRT is a round trip over a Conn on a net.Pipe with line framing: it
// sends the message then a sentinel, and returns what came before the
// sentinel's reply (nil for nothing). The server must run with MaxConcurrency 1.
type pipeRT struct {
	t    *testing.T
	nc   net.Conn
	br   *bufio.Reader
	conn *Conn
}

const rulesSentinel = `{"jsonrpc":"2.0","method":"echo","params":["sentinel"],"id":"sentinel-id"}`

func newPipeRT(t *testing.T, srv *Server) *pipeRT {
	a, b := net.Pipe()
	conn := NewConn(NewStream(a, StreamOptions{}), srv)
	t.Cleanup(func() { b.Close(); conn.Close() })
	return &pipeRT{t: t, nc: b, br: bufio.NewReader(b), conn: conn}
}

func (p *pipeRT) roundTrip(msg string) []byte {
	p.t.Helper()
	p.nc.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { io.WriteString(p.nc, msg+"\n"+rulesSentinel+"\n") }()
	var replies [][]byte
	for {
		line, err := p.br.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("read: %v (got %q)", err, replies)
		}
		if bytes.Contains(line, []byte(`"sentinel-id"`)) {
			break
		}
		replies = append(replies, bytes.TrimRight(line, "\n"))
	}
	switch len(replies) {
	case 0:
		return nil
	case 1:
		return replies[0]
	}
	p.t.Fatalf("more than one reply: %q", replies)
	return nil
}

// resp is a response decoded with its members kept raw.
type resp struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

// checkInvariants decodes one response object and checks what every
// response must satisfy. It returns the decoded response.
func checkInvariants(t testing.TB, b []byte) resp {
	t.Helper()
	if err := validResponseObject(b); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	var r resp
	jsonv2.Unmarshal(b, &r, jsonv2.RejectUnknownMembers(true))
	return r
}

// validResponseObject checks a response object strictly: valid JSON (no
// duplicate names, valid UTF-8), exactly jsonrpc "2.0", an id that is a
// string, number or null, and exactly one of result and error, an error
// having an integer code and a string message.
func validResponseObject(b []byte) error {
	if !jsontext.Value(b).IsValid() {
		return errors.New("response is not valid JSON")
	}
	var r resp
	if err := jsonv2.Unmarshal(b, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
		return fmt.Errorf("response does not decode: %v", err)
	}
	if r.JSONRPC != "2.0" {
		return errors.New(`"jsonrpc" is not "2.0"`)
	}
	if r.ID == nil {
		return errors.New("no id")
	}
	if k := r.ID.Kind(); k != '"' && k != '0' && k != 'n' {
		return errors.New("id is not a string, number or null")
	}
	if (r.Result == nil) == (r.Error == nil) {
		return errors.New("not exactly one of result and error")
	}
	if r.Error != nil {
		// The code must be an integer in the JSON text.
		var raw struct {
			Error struct {
				Code    jsontext.Value `json:"code"`
				Message jsontext.Value `json:"message"`
			} `json:"error"`
		}
		jsonv2.Unmarshal(b, &raw, jsonv2.RejectUnknownMembers(false))
		if _, err := strconv.ParseInt(string(raw.Error.Code), 10, 64); err != nil {
			return fmt.Errorf("error code %s is not an integer", raw.Error.Code)
		}
		if raw.Error.Message.Kind() != '"' {
			return errors.New("error message is not a string")
		}
	}
	return nil
}

// want is the expected reply to one message: none, or a response with the
// given raw id and either a result (exact JSON text) or an error code.
type want struct {
	none   bool
	id     string
	code   int64  // 0: a result is expected
	result string // exact text of the result when code is 0 ("" = any)
	msg    string // a substring of the error message
	notMsg string // text the error message must not hold
	data   string // exact text of error.data, when set
}

func checkWant(t testing.TB, reply []byte, w want) {
	t.Helper()
	if w.none {
		if reply != nil {
			t.Fatalf("expected no reply, got %s", reply)
		}
		return
	}
	if reply == nil {
		t.Fatal("expected a reply, got none")
	}
	r := checkInvariants(t, reply)
	if string(r.ID) != w.id {
		t.Fatalf("id %s, want %s (byte for byte): %s", r.ID, w.id, reply)
	}
	if w.code == 0 {
		if r.Error != nil {
			t.Fatalf("unexpected error: %s", reply)
		}
		if w.result != "" && string(r.Result) != w.result {
			t.Fatalf("result %s, want %s", r.Result, w.result)
		}
		return
	}
	if r.Error == nil || r.Error.Code != w.code {
		t.Fatalf("want error %d, got %s", w.code, reply)
	}
	if w.msg != "" && !strings.Contains(r.Error.Message, w.msg) {
		t.Fatalf("error message %q does not mention %q", r.Error.Message, w.msg)
	}
	if w.notMsg != "" && strings.Contains(r.Error.Message, w.notMsg) {
		t.Fatalf("error message %q leaks %q", r.Error.Message, w.notMsg)
	}
	if w.data != "" && string(r.Error.Data) != w.data {
		t.Fatalf("error data %s, want %s", r.Error.Data, w.data)
	}
}

type rule struct {
	name string
	req  string
	want want
}

func ok(id, result string) want       { return want{id: id, result: result} }
func fail(id string, code int64) want { return want{id: id, code: code} }
func failMsg(id string, code int64, msg string) want {
	return want{id: id, code: code, msg: msg}
}

var noReply = want{none: true}

// req builds a request with the given raw id and params ("" omits them).
func req(method, params, id string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	b.WriteString(strconv.Quote(method))
	if params != "" {
		b.WriteString(`,"params":` + params)
	}
	if id != "" {
		b.WriteString(`,"id":` + id)
	}
	b.WriteString("}")
	return b.String()
}

func idRules() []rule {
	ids := []string{
		`"abc"`, `""`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"é中😀"`,
		`"\u0000"`, `"` + strings.Repeat("x", 4000) + `"`,
		`0`, `-0`, `1`, `-1`, `1.0`, `1e3`, `1E+3`, `-1.5e-7`, `0.000001`,
		`9007199254740993`, `18446744073709551616`, `18446744073709551617`,
		`123456789012345678901234567890`, `-123456789012345678901234567890.123456789e-300`,
		strings.Repeat("9", 1000),
	}
	var rs []rule
	for _, id := range ids {
		rs = append(rs, rule{"id " + truncate(id, 40), req("echo", `[1]`, id), ok(id, `[1]`)})
		// the same id where the id comes first and the request is invalid
		rs = append(rs, rule{"id on invalid " + truncate(id, 40),
			`{"id":` + id + `,"jsonrpc":"2.0","method":"echo","params":"x"}`, fail(id, CodeInvalidRequest)})
	}
	rs = append(rs,
		rule{"id null is a request", req("echo", `[1]`, `null`), ok(`null`, `[1]`)},
		rule{"id null with spaces", `{ "jsonrpc" : "2.0" , "method" : "echo" , "id" : null }`, ok(`null`, `null`)},
		rule{"id object", req("echo", `[1]`, `{"a":1}`), fail(`null`, CodeInvalidRequest)},
		rule{"id array", req("echo", `[1]`, `[1]`), fail(`null`, CodeInvalidRequest)},
		rule{"id empty array", req("echo", `[1]`, `[]`), fail(`null`, CodeInvalidRequest)},
		rule{"id true", req("echo", `[1]`, `true`), fail(`null`, CodeInvalidRequest)},
		rule{"id false", req("echo", `[1]`, `false`), fail(`null`, CodeInvalidRequest)},
		rule{"id twice", `{"jsonrpc":"2.0","method":"echo","id":1,"id":2}`, fail(`null`, CodeInvalidRequest)},
		rule{"id twice same", `{"jsonrpc":"2.0","method":"echo","id":1,"id":1}`, fail(`null`, CodeInvalidRequest)},
	)
	return rs
}

func paramsRules() []rule {
	return []rule{
		{"params absent", req("echo", "", "1"), ok("1", "null")},
		{"params empty array", req("echo", "[]", "1"), ok("1", "[]")},
		{"params empty object", req("echo", "{}", "1"), ok("1", "{}")},
		{"params nested", req("echo", `{"a":[1,{"b":null}],"c":"\u00e9"}`, "1"), ok("1", `{"a":[1,{"b":null}],"c":"\u00e9"}`)},
		{"params null", req("echo", "null", "1"), fail("1", CodeInvalidRequest)},
		{"params string", req("echo", `"x"`, "1"), fail("1", CodeInvalidRequest)},
		{"params number", req("echo", `5`, "1"), fail("1", CodeInvalidRequest)},
		{"params true", req("echo", `true`, "1"), fail("1", CodeInvalidRequest)},
		{"params false", req("echo", `false`, "1"), fail("1", CodeInvalidRequest)},
	}
}

func envelopeRules() []rule {
	return []rule{
		{"jsonrpc missing", `{"method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc number", `{"jsonrpc":2.0,"method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc number 2", `{"jsonrpc":2,"method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc trailing space", `{"jsonrpc":"2.0 ","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc 2", `{"jsonrpc":"2","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc 2.00", `{"jsonrpc":"2.00","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc null", `{"jsonrpc":null,"method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"jsonrpc escaped is valid", `{"jsonrpc":"\u0032.0","method":"echo","id":1}`, ok("1", "null")},
		{"jsonrpc escaped dot is valid", `{"jsonrpc":"2\u002e0","method":"echo","id":1}`, ok("1", "null")},
		{"jsonrpc last", `{"method":"echo","id":1,"jsonrpc":"2.0"}`, ok("1", "null")},
		{"method missing", `{"jsonrpc":"2.0","id":1}`, fail("1", CodeInvalidRequest)},
		{"method number", `{"jsonrpc":"2.0","method":1,"id":1}`, fail("1", CodeInvalidRequest)},
		{"method null", `{"jsonrpc":"2.0","method":null,"id":1}`, fail("1", CodeInvalidRequest)},
		{"method array", `{"jsonrpc":"2.0","method":["echo"],"id":1}`, fail("1", CodeInvalidRequest)},
		{"method empty", `{"jsonrpc":"2.0","method":"","id":1}`, fail("1", CodeMethodNotFound)},
		{"method escaped", `{"jsonrpc":"2.0","method":"\u0065cho","params":[2],"id":1}`, ok("1", "[2]")},
		{"method unknown", req("nope", "", "1"), failMsg("1", CodeMethodNotFound, "nope")},
		{"method case differs", req("Echo", "", "1"), fail("1", CodeMethodNotFound)},
		{"method with NUL", `{"jsonrpc":"2.0","method":"echo\u0000","id":1}`, fail("1", CodeMethodNotFound)},
		{"method too long", req(strings.Repeat("m", 257), "", "1"), fail("1", CodeInvalidRequest)},
		{"rpc reserved", req("rpc.discover", "", "1"), fail("1", CodeMethodNotFound)},
		{"rpc reserved any", req("rpc.echo", "[1]", "1"), fail("1", CodeMethodNotFound)},
		{"unknown member", `{"jsonrpc":"2.0","method":"echo","id":1,"foo":1}`, failMsg("1", CodeInvalidRequest, "foo")},
		{"unknown member null", `{"jsonrpc":"2.0","method":"echo","id":1,"extra":null}`, fail("1", CodeInvalidRequest)},
		{"Method variant", `{"jsonrpc":"2.0","Method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"Method variant with method", `{"jsonrpc":"2.0","method":"echo","Method":"panic","id":1}`, fail("1", CodeInvalidRequest)},
		{"ID variant", `{"jsonrpc":"2.0","method":"echo","ID":1}`, fail("null", CodeInvalidRequest)},
		{"JSONRPC variant", `{"JSONRPC":"2.0","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"Params variant", `{"jsonrpc":"2.0","method":"echo","Params":[1],"id":1}`, fail("1", CodeInvalidRequest)},
		{"result in request", `{"jsonrpc":"2.0","method":"echo","result":1,"id":1}`, fail("1", CodeInvalidRequest)},
		{"error in request", `{"jsonrpc":"2.0","method":"echo","error":{"code":1,"message":"x"},"id":1}`, fail("1", CodeInvalidRequest)},
		{"duplicate method", `{"jsonrpc":"2.0","method":"echo","method":"panic","id":1}`, fail("1", CodeInvalidRequest)},
		{"duplicate method escaped", `{"jsonrpc":"2.0","method":"echo","m\u0065thod":"panic","id":1}`, fail("1", CodeInvalidRequest)},
		{"duplicate jsonrpc", `{"jsonrpc":"2.0","jsonrpc":"2.0","method":"echo","id":1}`, fail("1", CodeInvalidRequest)},
		{"duplicate params", `{"jsonrpc":"2.0","method":"echo","params":[1],"params":[2],"id":1}`, fail("1", CodeInvalidRequest)},
		{"duplicate in params", req("echo", `{"a":1,"a":2}`, "1"), fail("1", CodeInvalidParams)},
		{"duplicate in params escaped", req("echo", `{"a":1,"\u0061":2}`, "1"), fail("1", CodeInvalidParams)},
		{"duplicate deep in params", req("echo", `[{"x":[{"b":1,"b":2}]}]`, "1"), fail("1", CodeInvalidParams)},
		{"same name at two levels is fine", req("echo", `{"a":{"a":1}}`, "1"), ok("1", `{"a":{"a":1}}`)},
		{"many distinct names", req("echo", manyNames(200, false), "1"), ok("1", manyNames(200, false))},
		{"many names one duplicate", req("echo", manyNames(200, true), "1"), fail("1", CodeInvalidParams)},
		{"not an object: number", `1`, fail("null", CodeInvalidRequest)},
		{"not an object: string", `"x"`, fail("null", CodeInvalidRequest)},
		{"not an object: null", `null`, fail("null", CodeInvalidRequest)},
		{"not an object: true", `true`, fail("null", CodeInvalidRequest)},
		{"empty object", `{}`, fail("null", CodeInvalidRequest)},
		{"spec invalid request", `{"jsonrpc": "2.0", "method": 1, "params": "bar"}`, fail("null", CodeInvalidRequest)},
		{"whitespace around", " \t\r {\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1} \t\r ", ok("1", "null")},
		{"response sent to server", `{"jsonrpc":"2.0","result":1,"id":1}`, fail("1", CodeInvalidRequest)},
	}
}

// manyNames returns an object with n distinct names (the last one repeated when dup).
func manyNames(n int, dup bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k := i
		if dup && i == n-1 {
			k = n / 2
		}
		fmt.Fprintf(&b, `"k%d":%d`, k, i)
	}
	b.WriteByte('}')
	return b.String()
}

func parseRules() []rule {
	pe := fail("null", CodeParseError)
	return []rule{
		{"invalid utf8 in string", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xff\"],\"id\":1}", pe},
		{"invalid utf8 in name", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"\xfe\":1},\"id\":1}", pe},
		{"invalid utf8 in method", "{\"jsonrpc\":\"2.0\",\"method\":\"ech\xc3\",\"id\":1}", pe},
		{"invalid utf8 in id", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":\"\x80\"}", pe},
		{"overlong slash", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xc0\xaf\"],\"id\":1}", pe},
		{"overlong NUL", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xc0\x80\"],\"id\":1}", pe},
		{"overlong 3 byte", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xe0\x80\xaf\"],\"id\":1}", pe},
		{"overlong 4 byte", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xf0\x80\x80\xaf\"],\"id\":1}", pe},
		{"utf8 surrogate", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xed\xa0\x80\"],\"id\":1}", pe},
		{"utf8 above U+10FFFF", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xf4\x90\x80\x80\"],\"id\":1}", pe},
		{"truncated utf8", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xe2\x82\"],\"id\":1}", pe},
		{"utf8 outside string", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1}\xc3\xa9", pe},
		{"BOM", "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"id\":1}", pe},
		{"lone high surrogate", req("echo", `["\ud800"]`, "1"), pe},
		{"lone low surrogate", req("echo", `["\udc00"]`, "1"), pe},
		{"high then not low", req("echo", `["\ud800\u0041"]`, "1"), pe},
		{"high then high", req("echo", `["\ud800\ud800"]`, "1"), pe},
		{"high then text", req("echo", `["\ud83dx"]`, "1"), pe},
		{"lone surrogate in id", req("echo", "", `"\udfff"`), pe},
		{"surrogate pair ok", req("echo", `["\ud83d\ude00"]`, "1"), ok("1", `["\ud83d\ude00"]`)},
		{"trailing garbage", req("echo", "", "1") + "x", pe},
		{"trailing object", req("echo", "", "1") + req("echo", "", "2"), pe},
		{"trailing comma outside", req("echo", "", "1") + ",", pe},
		{"trailing NUL", req("echo", "", "1") + "\x00", pe},
		{"spec invalid json", `{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`, pe},
		{"truncated", `{"jsonrpc":"2.0","method":"echo"`, pe},
		{"trailing comma object", `{"jsonrpc":"2.0","method":"echo","id":1,}`, pe},
		{"trailing comma array", req("echo", `[1,]`, "1"), pe},
		{"single quotes", `{'jsonrpc':'2.0','method':'echo','id':1}`, pe},
		{"comment", `{"jsonrpc":"2.0",/*x*/"method":"echo","id":1}`, pe},
		{"control char in string", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"a\x01b\"],\"id\":1}", pe},
		{"tab in string", "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"a\tb\"],\"id\":1}", pe},
		{"bad escape", req("echo", `["\x"]`, "1"), pe},
		{"short unicode escape", req("echo", `["\u12"]`, "1"), pe},
		{"non-hex unicode escape", req("echo", `["\u12G4"]`, "1"), pe},
		{"leading zero", req("echo", `[01]`, "1"), pe},
		{"leading zero id", req("echo", "", "01"), pe},
		{"plus sign", req("echo", `[+1]`, "1"), pe},
		{"bare dot", req("echo", `[.5]`, "1"), pe},
		{"no fraction digits", req("echo", `[1.]`, "1"), pe},
		{"no exponent digits", req("echo", `[1e]`, "1"), pe},
		{"minus alone", req("echo", `[-]`, "1"), pe},
		{"NaN", req("echo", `[NaN]`, "1"), pe},
		{"Infinity", req("echo", `[Infinity]`, "1"), pe},
		{"hex number", req("echo", `[0x10]`, "1"), pe},
		{"bad literal", req("echo", `[tru]`, "1"), pe},
		{"capital literal", req("echo", `[True]`, "1"), pe},
		{"missing colon", `{"jsonrpc" "2.0"}`, pe},
		{"unquoted name", `{jsonrpc:"2.0"}`, pe},
		{"empty message", ``, pe},
		{"only spaces", "   ", pe},
		{"lone bracket", `[`, pe},
		{"lone brace", `}`, pe},
		{"form feed is not space", "\f" + req("echo", "", "1"), pe},
	}
}

func notificationRules() []rule {
	return []rule{
		{"notification", req("echo", "[1]", ""), noReply},
		{"notification unknown method", req("nope", "[1]", ""), noReply},
		{"notification wrong params", req("subtract", `{"x":1}`, ""), noReply},
		{"notification too few params", req("subtract", `[1]`, ""), noReply},
		{"notification wrong scalar", req("square", `["x"]`, ""), noReply},
		{"notification dup in params", req("echo", `{"a":1,"a":2}`, ""), noReply},
		{"notification panics", req("panic", "", ""), noReply},
		{"notification error", req("rpcerr", "", ""), noReply},
		{"notification plain error", req("plain", "", ""), noReply},
		{"notification bad result", req("bad_result", "", ""), noReply},
		{"notification rpc reserved", req("rpc.nope", "", ""), noReply},
		// An invalid request is answered even without an id (the spec's own example).
		{"invalid without id", `{"jsonrpc":"2.0","method":"echo","params":"bar"}`, fail("null", CodeInvalidRequest)},
	}
}

func typedRules() []rule {
	ip := int64(CodeInvalidParams)
	return []rule{
		{"struct by name", req("subtract", `{"minuend":42,"subtrahend":23}`, "1"), ok("1", "19")},
		{"struct by name reordered", req("subtract", `{"subtrahend":23,"minuend":42}`, "1"), ok("1", "19")},
		{"struct by position", req("subtract", `[42,23]`, "1"), ok("1", "19")},
		{"struct too many", req("subtract", `[42,23,1]`, "1"), failMsg("1", ip, "too many")},
		{"struct too few", req("subtract", `[42]`, "1"), failMsg("1", ip, "subtrahend")},
		{"struct none positional", req("subtract", `[]`, "1"), failMsg("1", ip, "minuend")},
		{"struct absent", req("subtract", ``, "1"), fail("1", ip)},
		{"struct unknown member", req("subtract", `{"minuend":1,"subtrahend":2,"extra":3}`, "1"), failMsg("1", ip, "extra")},
		{"struct case variant member", req("subtract", `{"Minuend":1,"subtrahend":2}`, "1"), fail("1", ip)},
		{"struct wrong type by name", req("subtract", `{"minuend":"x","subtrahend":2}`, "1"), failMsg("1", ip, "minuend")},
		{"struct wrong type by position", req("subtract", `[1,"x"]`, "1"), failMsg("1", ip, "/1")},
		{"struct null member", req("subtract", `{"minuend":null,"subtrahend":2}`, "1"), ok("1", "-2")},
		{"struct missing required", req("subtract", `{"minuend":1}`, "1"), failMsg("1", ip, "subtrahend")},
		{"struct number too big", req("subtract", `{"minuend":1e999,"subtrahend":2}`, "1"), failMsg("1", ip, "minuend")},
		{"optional all given", req("opt", `{"name":"a","count":2,"tag":"t","ratio":0.5}`, "1"), ok("1", `"a/2/t"`)},
		{"optional omitted", req("opt", `{"name":"a"}`, "1"), ok("1", `"a/nil/"`)},
		{"optional positional", req("opt", `["a"]`, "1"), ok("1", `"a/nil/"`)},
		{"optional positional more", req("opt", `["a",3,"t"]`, "1"), ok("1", `"a/3/t"`)},
		{"required missing with optional", req("opt", `{"count":1}`, "1"), failMsg("1", ip, "name")},
		{"optional wrong type", req("opt", `{"name":"a","count":"x"}`, "1"), failMsg("1", ip, "count")},
		{"pointer struct", req("optptr", `{"name":"p"}`, "1"), ok("1", `"p"`)},
		{"pointer struct absent", req("optptr", ``, "1"), fail("1", ip)},
		{"scalar from array", req("square", `[7]`, "1"), ok("1", "49")},
		{"scalar two elements", req("square", `[7,8]`, "1"), fail("1", ip)},
		{"scalar empty array", req("square", `[]`, "1"), fail("1", ip)},
		{"scalar object", req("square", `{"n":7}`, "1"), fail("1", ip)},
		{"scalar wrong type", req("square", `["7"]`, "1"), fail("1", ip)},
		{"scalar fraction", req("square", `[7.5]`, "1"), fail("1", ip)},
		{"scalar absent", req("square", ``, "1"), fail("1", ip)},
		{"slice", req("sum", `[1,2,3]`, "1"), ok("1", "6")},
		{"slice empty", req("sum", `[]`, "1"), ok("1", "0")},
		{"slice absent", req("sum", ``, "1"), ok("1", "0")},
		{"slice object", req("sum", `{"a":1}`, "1"), fail("1", ip)},
		{"slice wrong element", req("sum", `[1,"x"]`, "1"), failMsg("1", ip, "/1")},
		{"map", req("keys", `{"a":1,"b":2}`, "1"), ok("1", "2")},
		{"map array", req("keys", `[1]`, "1"), fail("1", ip)},
		{"result null kept", req("null", "", "1"), ok("1", "null")},
	}
}

func errorRules() []rule {
	return []rule{
		{"*Error as is", req("rpcerr", "", "1"), want{id: "1", code: -32050, msg: "custom", data: `{"k":1}`}},
		{"wrapped *Error", req("wrapped", "", "1"), want{id: "1", code: 42, msg: "inner", data: `[1,2]`}},
		{"plain error hidden", req("plain", "", "1"), want{id: "1", code: CodeInternalError, notMsg: "secret"}},
		{"typed nil error", req("typednil", "", "1"), fail("1", CodeInternalError)},
		{"panic", req("panic", "", "1"), fail("1", CodeInternalError)},
		{"panic nil", req("panicnil", "", "1"), fail("1", CodeInternalError)},
		{"served after panic", req("echo", "[1]", "1"), ok("1", "[1]")},
		{"bad result", req("bad_result", "", "1"), fail("1", CodeInternalError)},
		{"bad raw result", req("bad_raw", "", "1"), fail("1", CodeInternalError)},
		{"NaN result", req("nan", "", "1"), fail("1", CodeInternalError)},
		{"result's MarshalJSON panics", req("panic_marshal", "", "1"), fail("1", CodeInternalError)},
		{"stream's sequence panics", req("panic_stream", "", "1"), fail("1", CodeInternalError)},
		{"stream element's MarshalJSON panics", req("panic_elem", "", "1"), fail("1", CodeInternalError)},
		{"served after a panicking result", req("echo", "[1]", "1"), ok("1", "[1]")},
	}
}

func allRules() map[string][]rule {
	return map[string][]rule{
		"id": idRules(), "params": paramsRules(), "envelope": envelopeRules(), "parse": parseRules(),
		"notification": notificationRules(), "typed": typedRules(), "errors": errorRules(),
	}
}

func TestRulesDispatcher(t *testing.T) {
	srv := rulesServer()
	for group, rules := range allRules() {
		t.Run(group, func(t *testing.T) {
			for _, r := range rules {
				t.Run(r.name, func(t *testing.T) { checkWant(t, dispatchOnce(srv, r.req), r.want) })
			}
		})
	}
}

func TestRulesPipe(t *testing.T) {
	for group, rules := range allRules() {
		t.Run(group, func(t *testing.T) {
			p := newPipeRT(t, rulesServer())
			for _, r := range rules {
				if strings.ContainsAny(r.req, "\n") || r.req == "" || strings.TrimSpace(r.req) == "" ||
					strings.HasPrefix(r.req, "\f") {
					continue // not one line of a stream (blank lines are skipped by the framing)
				}
				w := r.want
				if r.name == "response sent to server" {
					w = noReply // a Conn takes it as a response to a call it never made, and drops it
				}
				t.Run(r.name, func(t *testing.T) { checkWant(t, p.roundTrip(r.req), w) })
			}
		})
	}
}

func TestExposeInternalErrors(t *testing.T) {
	srv := rulesServer()
	srv.ExposeInternalErrors = true
	checkWant(t, dispatchOnce(srv, req("plain", "", "7")), want{id: "7", code: CodeInternalError, msg: "secret"})
}

// batchItem is one expected element of a batch reply.
type batchRule struct {
	name  string
	req   string
	none  bool   // no reply at all
	one   *want  // a single object (not an array)
	items []want // any order
}

func batchRules() []batchRule {
	ir := int64(CodeInvalidRequest)
	return []batchRule{
		{name: "empty", req: `[]`, one: &want{id: "null", code: ir}},
		{name: "empty with spaces", req: ` [ ] `, one: &want{id: "null", code: ir}},
		{name: "one number", req: `[1]`, items: []want{fail("null", ir)}},
		{name: "three numbers", req: `[1,2,3]`, items: []want{fail("null", ir), fail("null", ir), fail("null", ir)}},
		{name: "nested batch", req: `[[]]`, items: []want{fail("null", ir)}},
		{name: "nested batch with request", req: `[[` + req("echo", "[1]", "1") + `]]`, items: []want{fail("null", ir)}},
		{name: "null element", req: `[null]`, items: []want{fail("null", ir)}},
		{name: "one request", req: `[` + req("echo", "[1]", "1") + `]`, items: []want{ok("1", "[1]")}},
		{name: "mixed", req: `[` + strings.Join([]string{
			req("sum", "[1,2,4]", `"1"`),
			req("echo", "[7]", ""),
			req("subtract", "[42,23]", `"2"`),
			`{"foo":"boo"}`,
			req("foo.get", `{"name":"myself"}`, `"5"`),
			req("null", "", `"9"`),
			`1`,
			req("panic", "", `"p"`),
			req("nope", "", ""),
		}, ",") + `]`, items: []want{
			ok(`"1"`, "7"), ok(`"2"`, "19"), fail("null", ir), fail(`"5"`, CodeMethodNotFound),
			ok(`"9"`, "null"), fail("null", ir), fail(`"p"`, CodeInternalError),
		}},
		{name: "all notifications", req: `[` + req("echo", "[1]", "") + `,` + req("nope", "", "") + `,` + req("panic", "", "") + `]`, none: true},
		{name: "invalid notification in batch", req: `[` + req("echo", "[1]", "") + `,{"jsonrpc":"2.0","method":1}]`, items: []want{fail("null", ir)}},
		{name: "ids kept in batch", req: `[` + req("echo", "[1]", "18446744073709551617") + `,` + req("echo", "[2]", "1.0") + `]`,
			items: []want{ok("18446744073709551617", "[1]"), ok("1.0", "[2]")}},
		{name: "at the limit", req: `[` + strings.Repeat(`1,`, 9) + `1]`, items: repeatWant(fail("null", ir), 10)},
		{name: "over the limit", req: `[` + strings.Repeat(req("echo", "[1]", "1")+`,`, 10) + `1]`,
			one: &want{id: "null", code: ir, msg: "batch too long"}},
		{name: "over the limit notifications", req: `[` + strings.Repeat(req("panic", "", "")+`,`, 10) + req("panic", "", "") + `]`,
			one: &want{id: "null", code: ir, msg: "batch too long"}},
		{name: "parse error in element", req: `[` + req("echo", "[1]", "1") + `,{"jsonrpc":"2.0","method"]`, one: &want{id: "null", code: CodeParseError}},
		{name: "trailing garbage after batch", req: `[` + req("echo", "[1]", "1") + `]]`, one: &want{id: "null", code: CodeParseError}},
	}
}

func repeatWant(w want, n int) []want {
	out := make([]want, n)
	for i := range out {
		out[i] = w
	}
	return out
}

func checkBatch(t *testing.T, reply []byte, b batchRule) {
	t.Helper()
	switch {
	case b.none:
		if reply != nil {
			t.Fatalf("expected no reply, got %s", reply)
		}
		return
	case b.one != nil:
		if len(reply) == 0 || reply[0] != '{' {
			t.Fatalf("expected one response object, got %s", reply)
		}
		checkWant(t, reply, *b.one)
		return
	}
	var items []jsontext.Value
	if err := jsonv2.Unmarshal(reply, &items); err != nil {
		t.Fatalf("expected an array, got %s", reply)
	}
	if len(items) != len(b.items) {
		t.Fatalf("got %d responses, want %d: %s", len(items), len(b.items), reply)
	}
	used := make([]bool, len(items))
next:
	for _, w := range b.items {
		for i, it := range items {
			if !used[i] && matchesWant(it, w) {
				used[i] = true
				continue next
			}
		}
		t.Fatalf("no response matches %+v in %s", w, reply)
	}
}

// matchesWant reports whether checkWant would pass, without failing.
func matchesWant(b []byte, w want) bool {
	ft := &fakeTB{}
	func() {
		defer func() { recover() }()
		checkWant(ft, b, w)
	}()
	return !ft.failed
}

type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fail")
}
func (f *fakeTB) Fatal(...any) {
	f.failed = true
	panic("fail")
}

func TestRulesBatch(t *testing.T) {
	srv := rulesServer()
	p := newPipeRT(t, rulesServer())
	for _, b := range batchRules() {
		t.Run("dispatcher/"+b.name, func(t *testing.T) { checkBatch(t, dispatchOnce(srv, b.req), b) })
		t.Run("pipe/"+b.name, func(t *testing.T) { checkBatch(t, p.roundTrip(b.req), b) })
	}
}

// TestRulesBatchConcurrent runs a mixed batch with spare capacity, so that
// its elements run on several goroutines.
func TestRulesBatchConcurrent(t *testing.T) {
	srv := rulesServer()
	srv.MaxConcurrency = 8
	srv.MaxBatchLen = 100
	var parts []string
	var items []want
	for i := range 50 {
		id := strconv.Itoa(i)
		parts = append(parts, req("square", "["+id+"]", id))
		items = append(items, ok(id, strconv.Itoa(i*i)))
	}
	b := batchRule{name: "concurrent", req: "[" + strings.Join(parts, ",") + "]", items: items}
	checkBatch(t, dispatchOnce(srv, b.req), b)
	a, c := net.Pipe()
	conn := NewConn(NewStream(a, StreamOptions{}), srv)
	defer conn.Close()
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, b.req+"\n")
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, bytes.TrimSpace(line), b)
}

func TestReservedNamesPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"Handle":   func() { NewMux().HandleFunc("rpc.x", func(context.Context, *Request) (any, error) { return nil, nil }) },
		"Register": func() { Register(NewMux(), "rpc.x", func(context.Context, int) (int, error) { return 0, nil }) },
		"Extension": func() {
			NewMux().HandleExtension("x", HandlerFunc(func(context.Context, *Request) (any, error) { return nil, nil }))
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
	// HandleExtension serves an rpc. method.
	mux := NewMux()
	mux.HandleExtension("rpc.ping", HandlerFunc(func(context.Context, *Request) (any, error) { return "pong", nil }))
	checkWant(t, dispatchOnce(&Server{Handler: mux}, req("rpc.ping", "", "1")), ok("1", `"pong"`))
}

// TestIDKeyCanonical checks how ids match responses to calls.
func TestIDKeyCanonical(t *testing.T) {
	same := [][2]string{{`"a"`, `"\u0061"`}, {`1`, `1`}, {`"é"`, `"\u00e9"`}}
	for _, p := range same {
		if (ID{raw: p[0]}).key() != (ID{raw: p[1]}).key() {
			t.Errorf("%s and %s should match", p[0], p[1])
		}
	}
	differ := [][2]string{{`1`, `"1"`}, {`18446744073709551616`, `18446744073709551617`},
		{`9007199254740993`, `9007199254740992`}, {`null`, `"null"`}, {`1`, `2`}}
	for _, p := range differ {
		if (ID{raw: p[0]}).key() == (ID{raw: p[1]}).key() {
			t.Errorf("%s and %s must not match", p[0], p[1])
		}
	}
}

// ---- Conn behaviour ----

// connPair returns two Conns joined by a pipe: a serves with srvA, b with srvB.
func connPair(t *testing.T, srvA, srvB *Server) (a, b *Conn) {
	x, y := net.Pipe()
	a = NewConn(NewStream(x, StreamOptions{}), srvA)
	b = NewConn(NewStream(y, StreamOptions{}), srvB)
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestConnBidirectional(t *testing.T) {
	for _, conc := range []int{1, 4} {
		t.Run("MaxConcurrency="+strconv.Itoa(conc), func(t *testing.T) {
			clientMux := NewMux()
			Register(clientMux, "client.double", func(ctx context.Context, n int) (int, error) {
				// A nested callback: the client calls the server back from its handler.
				var base int
				if err := ConnFromContext(ctx).Call(ctx, "server.base", nil, &base); err != nil {
					return 0, err
				}
				return base + 2*n, nil
			})
			serverMux := NewMux()
			Register(serverMux, "server.base", func(context.Context, json.RawMessage) (int, error) { return 1000, nil })
			Register(serverMux, "server.work", func(ctx context.Context, n int) (int, error) {
				c := ConnFromContext(ctx)
				var d int
				if err := c.Call(ctx, "client.double", []int{n}, &d); err != nil {
					return 0, err
				}
				return d + 1, nil
			})
			client, _ := connPair(t,
				&Server{Handler: clientMux, MaxConcurrency: conc, Logger: quietLogger},
				&Server{Handler: serverMux, MaxConcurrency: conc, Logger: quietLogger})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Go(func() {
					var got int
					if err := client.Call(ctx, "server.work", []int{i}, &got); err != nil {
						t.Errorf("call %d: %v", i, err)
						return
					}
					if want := 1000 + 2*i + 1; got != want {
						t.Errorf("call %d: got %d, want %d", i, got, want)
					}
				})
			}
			wg.Wait()
		})
	}
}

// TestConnNotifyFromHandlers: handlers on both sides send notifications
// (progress) to each other before calling back, with MaxConcurrency 1.
// Before the fix it deadlocked: a notifying handler held its slot while
// blocked writing to a peer whose read loop waited for its own slot.
func TestConnNotifyFromHandlers(t *testing.T) {
	clientMux := NewMux()
	Register(clientMux, "progress", func(ctx context.Context, _ json.RawMessage) (any, error) { return nil, nil })
	Register(clientMux, "client.double", func(ctx context.Context, n int) (int, error) {
		c := ConnFromContext(ctx)
		for range 3 {
			if err := c.Notify(ctx, "progress", []int{n}); err != nil {
				return 0, err
			}
		}
		var base int
		if err := c.Call(ctx, "server.base", nil, &base); err != nil {
			return 0, err
		}
		return base + 2*n, nil
	})
	serverMux := NewMux()
	Register(serverMux, "progress", func(ctx context.Context, _ json.RawMessage) (any, error) { return nil, nil })
	Register(serverMux, "server.base", func(context.Context, json.RawMessage) (int, error) { return 1000, nil })
	Register(serverMux, "server.work", func(ctx context.Context, n int) (int, error) {
		c := ConnFromContext(ctx)
		for range 3 {
			if err := c.Notify(ctx, "progress", []int{n}); err != nil {
				return 0, err
			}
		}
		var d int
		if err := c.Call(ctx, "client.double", []int{n}, &d); err != nil {
			return 0, err
		}
		return d + 1, nil
	})
	client, _ := connPair(t, &Server{Handler: clientMux, MaxConcurrency: 1, Logger: quietLogger}, &Server{Handler: serverMux, MaxConcurrency: 1, Logger: quietLogger})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			var got int
			if err := client.Call(ctx, "server.work", []int{i}, &got); err != nil {
				t.Errorf("call %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}

// blocker is a method that blocks until released or cancelled, and reports both.
type blocker struct {
	started  chan struct{}
	release  chan struct{}
	canceled atomic.Int32
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blocker) register(mux *Mux) {
	Register(mux, "block", func(ctx context.Context, _ json.RawMessage) (string, error) {
		b.started <- struct{}{}
		select {
		case <-b.release:
			return "released", nil
		case <-ctx.Done():
			b.canceled.Add(1)
			return "", ctx.Err()
		}
	})
}

func waitStarted(t *testing.T, b *blocker, n int) {
	t.Helper()
	for range n {
		select {
		case <-b.started:
		case <-time.After(5 * time.Second):
			t.Fatal("handler did not start")
		}
	}
}

func TestConnCallCanceledByContext(t *testing.T) {
	bl := newBlocker()
	mux := rulesMux()
	bl.register(mux)
	client, _ := connPair(t, nil, &Server{Handler: mux, Logger: quietLogger})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := client.Call(ctx, "block", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	client.mu.Lock()
	n := client.pending.Len()
	client.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d pending calls left after cancellation", n)
	}
	close(bl.release) // the late response is dropped; the conn keeps working
	var got json.RawMessage
	if err := client.Call(context.Background(), "echo", []int{5}, &got); err != nil || string(got) != "[5]" {
		t.Fatalf("after cancel: %s %v", got, err)
	}
	// A context already cancelled fails at once.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := client.Call(ctx2, "echo", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want Canceled", err)
	}
}

func TestConnCloseFailsPendingAndCancelsHandlers(t *testing.T) {
	bl := newBlocker()
	mux := NewMux()
	bl.register(mux)
	client, server := connPair(t, nil, &Server{Handler: mux, Logger: quietLogger})
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- client.Call(context.Background(), "block", nil, nil) }()
	}
	waitStarted(t, bl, 3)
	// Closing the server cancels its running handlers...
	server.Close()
	if n := bl.canceled.Load(); n != 3 {
		t.Fatalf("%d handlers saw their context cancelled, want 3", n)
	}
	// ...and the client's pending calls fail with ErrClosed.
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("pending call: %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("pending call not failed")
		}
	}
	if err := client.Call(context.Background(), "block", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on closed conn: %v", err)
	}
	if err := client.Notify(context.Background(), "block", nil); err == nil {
		t.Fatal("notify on closed conn succeeded")
	}
}

func TestConnCloseLocalPending(t *testing.T) {
	bl := newBlocker()
	mux := NewMux()
	bl.register(mux)
	client, _ := connPair(t, nil, &Server{Handler: mux, Logger: quietLogger})
	errc := make(chan error, 1)
	go func() { errc <- client.Call(context.Background(), "block", nil, nil) }()
	waitStarted(t, bl, 1)
	client.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("got %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not fail the pending call")
	}
}

func TestConnDuplicateInflightID(t *testing.T) {
	bl := newBlocker()
	mux := rulesMux()
	bl.register(mux)
	srv := &Server{Handler: mux, MaxConcurrency: 4, Logger: quietLogger}
	a, b := net.Pipe()
	conn := NewConn(NewStream(a, StreamOptions{}), srv)
	defer conn.Close()
	defer b.Close()
	b.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(b)
	go io.WriteString(b, req("block", "", `"x"`)+"\n")
	waitStarted(t, bl, 1)
	// The same id, spelled differently, while the first is in flight: served
	// and answered like any request (the id is the client's to choose).
	for _, id := range []string{`"x"`, `"\u0078"`} {
		go io.WriteString(b, req("echo", "[1]", id)+"\n")
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		checkWant(t, bytes.TrimSpace(line), ok(id, `[1]`))
	}
	close(bl.release)
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, bytes.TrimSpace(line), ok(`"x"`, `"released"`))
	// Once answered, the id may be used again.
	go io.WriteString(b, req("echo", "[2]", `"x"`)+"\n")
	line, err = br.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	checkWant(t, bytes.TrimSpace(line), ok(`"x"`, `[2]`))
}

func TestConnBatch(t *testing.T) {
	client, _ := connPair(t, nil, &Server{Handler: rulesMux(), Logger: quietLogger})
	var b Batch
	var diff float64
	var sq int
	c1 := b.Call("subtract", []int{42, 23}, &diff)
	c2 := b.Call("square", []int{9}, &sq)
	b.Notify("echo", []int{1})
	c3 := b.Call("nope", nil, nil)
	c4 := b.Call("rpcerr", nil, nil)
	if b.Len() != 5 {
		t.Fatalf("Len %d", b.Len())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || diff != 19 || c2.Err != nil || sq != 81 {
		t.Fatalf("results: %v %v %v %v", diff, c1.Err, sq, c2.Err)
	}
	var e *Error
	if !errors.As(c3.Err, &e) || e.Code != CodeMethodNotFound {
		t.Fatalf("c3: %v", c3.Err)
	}
	if !errors.As(c4.Err, &e) || e.Code != -32050 || string(e.Data) != `{"k":1}` {
		t.Fatalf("c4: %v", c4.Err)
	}
	if err := client.Batch(ctx, &Batch{}); err == nil {
		t.Fatal("empty batch accepted")
	}
	// A batch of notifications only returns once sent.
	var n Batch
	n.Notify("echo", nil)
	n.Notify("nope", nil)
	if err := client.Batch(ctx, &n); err != nil {
		t.Fatal(err)
	}
}

// TestConnErrorsAs checks that error responses come back as *Error on the client.
func TestConnErrorsAs(t *testing.T) {
	client, _ := connPair(t, nil, &Server{Handler: rulesMux(), Logger: quietLogger})
	ctx := context.Background()
	err := client.Call(ctx, "wrapped", nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != 42 || e.Message != "inner" || string(e.Data) != "[1,2]" {
		t.Fatalf("got %v", err)
	}
	if !errors.Is(err, &Error{Code: 42}) {
		t.Fatal("errors.Is by code failed")
	}
	err = client.Call(ctx, "plain", nil, nil)
	if !errors.As(err, &e) || e.Code != CodeInternalError || strings.Contains(e.Message, "secret") {
		t.Fatalf("got %v", err)
	}
	var out int
	if err := client.Call(ctx, "echo", []string{"x"}, &out); err == nil || errors.As(err, &e) {
		t.Fatalf("undecodable result: %v", err)
	}
}

// TestConnShutdownAnswersEverything proves that Shutdown leaves no request
// that was read unanswered: requests are queued behind a busy handler with
// MaxConcurrency 1, Shutdown starts, the handlers are released, and every
// request sent before gets a response (a result or CodeRequestCanceled).
func TestConnShutdownAnswersEverything(t *testing.T) {
	for round := range 20 {
		bl := newBlocker()
		mux := rulesMux()
		bl.register(mux)
		srv := &Server{Handler: mux, MaxConcurrency: 1, Logger: quietLogger}
		a, b := net.Pipe()
		conn := NewConn(NewStream(a, StreamOptions{}), srv)
		b.SetDeadline(time.Now().Add(10 * time.Second))
		const n = 6
		var msgs strings.Builder
		for i := range n {
			m := "echo"
			if i == 0 {
				m = "block"
			}
			msgs.WriteString(req(m, "", strconv.Itoa(i)) + "\n")
		}
		go io.WriteString(b, msgs.String())
		waitStarted(t, bl, 1)
		answered := make(map[string]bool)
		var mu sync.Mutex
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			br := bufio.NewReader(b)
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					return
				}
				r := checkInvariants(t, bytes.TrimSpace(line))
				mu.Lock()
				answered[string(r.ID)] = true
				mu.Unlock()
			}
		}()
		shut := make(chan error, 1)
		go func() { shut <- conn.Shutdown(context.Background()) }()
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		close(bl.release)
		if err := <-shut; err != nil {
			t.Fatal(err)
		}
		b.Close()
		<-readDone
		// The stream may hold messages it had read ahead but not yet
		// returned; every message the Conn received must be answered.
		recv := conn.taken.Load()
		mu.Lock()
		got := len(answered)
		mu.Unlock()
		if int64(got) != recv {
			t.Fatalf("round %d: %d messages received, %d answered (%v)", round, recv, got, answered)
		}
		if !answered["0"] {
			t.Fatalf("round %d: the running request was not answered", round)
		}
	}
}

// eofRWC reads its input then EOF, and records what is written.
type eofRWC struct {
	r      io.Reader
	mu     sync.Mutex
	out    bytes.Buffer
	closed atomic.Bool
}

func (e *eofRWC) Read(p []byte) (int, error) { return e.r.Read(p) }
func (e *eofRWC) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.out.Write(p)
}
func (e *eofRWC) Close() error { e.closed.Store(true); return nil }

func TestConnEOFAnswersInFlight(t *testing.T) {
	mux := rulesMux()
	Register(mux, "slow", func(ctx context.Context, n int) (int, error) {
		select {
		case <-time.After(time.Duration(n) * time.Millisecond):
			return n, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	var in strings.Builder
	for i := range 10 {
		in.WriteString(req("slow", "["+strconv.Itoa(10+i*5)+"]", strconv.Itoa(i)) + "\n")
	}
	in.WriteString(req("echo", "", "") + "\n") // a notification: no answer
	rwc := &eofRWC{r: strings.NewReader(in.String())}
	conn := NewConn(NewStream(rwc, StreamOptions{}), &Server{Handler: mux, Logger: quietLogger})
	select {
	case <-conn.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("conn did not end after EOF")
	}
	if err := conn.Err(); err != io.EOF {
		t.Fatalf("Err = %v, want io.EOF", err)
	}
	if !rwc.closed.Load() {
		t.Fatal("stream not closed")
	}
	lines := strings.Split(strings.TrimSpace(rwc.out.String()), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d answers, want 10: %q", len(lines), lines)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		r := checkInvariants(t, []byte(l))
		if r.Error != nil {
			t.Fatalf("error answer %s", l)
		}
		seen[string(r.ID)] = true
	}
	if len(seen) != 10 {
		t.Fatalf("ids: %v", seen)
	}
}
