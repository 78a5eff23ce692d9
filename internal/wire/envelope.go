package wire

import "strconv"

// bom is the UTF-8 encoding of U+FEFF, the byte-order mark, and errBOM
// what a message that starts with one is told.
const (
	BOM    = "\xef\xbb\xbf"
	ErrBOM = "byte-order mark (U+FEFF) before the JSON text"
)

// Kind classifies one element of an incoming message.
type Kind uint8

const (
	KindInvalid     Kind = iota // not a valid request or response: answer with err
	KindRequest                 // a call or a notification
	KindResponse                // a response to one of our calls
	KindBadResponse             // looked like a response but was malformed
)

// Envelope is one scanned message object: spans of its members, plus what was wrong with it.
type Envelope struct {
	Kind    Kind
	ID      Span
	method  Span
	Params  Span
	Result  Span
	ErrObj  Span
	jsonrpc Span

	ParamsDup bool     // params holds a duplicate object name
	Err       *Invalid // what makes it an invalid request (KindInvalid)
}

// Message is the result of scanning one message: a single envelope or a batch.
type Message struct {
	Batch bool
	Elems []Envelope
	// limit, when positive, bounds the elements of a batch recorded in
	// elems: past limit+1 the rest are only scanned (and counted in n), so a
	// huge batch costs no memory per element before it is rejected.
	Limit int
	N     int // elements of the batch
}

// Parse scans data strictly. A syntax error, bad UTF-8 or excessive
// nesting returns an error for the whole message; everything else is
// reported per element in the envelopes. A byte-order mark before the
// text is a syntax error like any other byte that cannot begin JSON (RFC
// 8259 §8.1 forbids sending one), named as such, on every transport alike.
func (s *Scanner) Parse(data []byte, maxDepth int, m *Message) error {
	s.Reset(data, maxDepth)
	if len(data) >= len(BOM) && string(data[:len(BOM)]) == BOM {
		s.fail(ErrBOM)
		return s.Err
	}
	m.Batch, m.Elems, m.N = s.Peek() == '[', m.Elems[:0], 0
	var ok bool
	if m.Batch {
		ok = s.Array(func() bool {
			if m.N++; m.Limit > 0 && len(m.Elems) > m.Limit {
				_, ok := s.Value()
				return ok
			}
			return s.element(m)
		})
	} else {
		ok = s.element(m)
	}
	if !ok || !s.End() {
		return s.Err
	}
	if s.tooDeep {
		return &DepthError{Limit: s.maxDepth}
	}
	return nil
}

// element scans one message object, or a value that is not one, into m.
func (s *Scanner) element(m *Message) bool {
	if s.Peek() == '{' {
		m.Elems = append(m.Elems, Envelope{})
		return s.Envelope(&m.Elems[len(m.Elems)-1])
	}
	_, ok := s.Value()
	m.Elems = append(m.Elems, Envelope{Kind: KindInvalid, Err: errNotObject})
	return ok
}

// Invalid says what makes an element an invalid request. (A pointer keeps
// an Envelope small: a batch holds one per element.)
type Invalid struct{ Msg string }

// errNotObject is the problem of a batch element or message that is not an object.
var errNotObject = &Invalid{Msg: "invalid request: not a JSON object"}

// envSink records the members of an envelope while the scanner reads it.
type envSink struct {
	e       *Envelope
	unknown Span // the first unknown member name
	dup     bool // a duplicate name outside params
	idDup   bool // "id" given more than once: no id can be trusted
	last    int  // s.dups after the previous member
}

func (k *envSink) member(s *Scanner, n Name, v Span, dupsBefore int) {
	k.dup = k.dup || dupsBefore > k.last // a repeated member name of the envelope itself
	k.last = s.dups
	e := k.e
	switch string(s.decodedName(n)) {
	case "jsonrpc":
		e.jsonrpc = v
	case "method":
		e.method = v
	case "params":
		e.Params, e.ParamsDup = v, s.dups > dupsBefore
		return
	case "id":
		k.idDup = k.idDup || e.ID.Present()
		e.ID = v
	case "result":
		e.Result = v
	case "error":
		e.ErrObj = v
	default:
		if !k.unknown.Present() {
			k.unknown = n.Span
		}
	}
	k.dup = k.dup || s.dups > dupsBefore
}

// Envelope scans the object at s.pos into e and classifies it.
func (s *Scanner) Envelope(e *Envelope) bool {
	sink := envSink{e: e, last: s.dups}
	if !s.Object(&sink) {
		return false
	}
	if sink.idDup {
		e.ID = Span{} // answered with id null, like any id that cannot be read
	}
	e.classify(s.Data, sink.unknown, sink.dup)
	return true
}

func (e *Envelope) classify(data []byte, unknown Span, dup bool) {
	idOK := !e.ID.Present() || IsIDValue(data[e.ID.Start])
	// With a result or an error and no method it is a response, a bad one
	// if problem finds one: it fails its call, and no one answers it.
	switch msg := e.problem(data, unknown, dup, idOK); {
	case msg != "" && (e.method.Present() || !e.Result.Present() && !e.ErrObj.Present()):
		e.Kind = KindInvalid
		e.Err = &Invalid{Msg: "invalid request: " + msg}
		if !idOK {
			e.ID = Span{}
		}
	case !e.method.Present():
		e.Kind = KindResponse
		if msg != "" || !e.ID.Present() || (e.Result.Present() && e.ErrObj.Present()) || e.Params.Present() {
			e.Kind = KindBadResponse
		}
	default:
		e.Kind = KindRequest
	}
}

// problem returns why the object is neither a request nor a response, or
// "" when it is one of them.
func (e *Envelope) problem(data []byte, unknown Span, dup, idOK bool) string {
	switch {
	case dup:
		return "duplicate member name"
	case !e.jsonrpc.Present():
		return `missing "jsonrpc":"2.0"`
	case !isVersion2(e.jsonrpc.Of(data)):
		return `"jsonrpc" must be exactly "2.0"`
	case unknown.Present():
		return "unknown member " + strconv.Quote(string(unknown.Of(data)))
	case !idOK:
		return "id must be a string, number or null"
	case e.method.Present():
		return e.requestProblem(data)
	case !e.Result.Present() && !e.ErrObj.Present():
		return `missing "method"`
	}
	return ""
}

// requestProblem returns why an object with a method is not a request, or "".
func (e *Envelope) requestProblem(data []byte) string {
	switch {
	case data[e.method.Start] != '"':
		return `"method" must be a string`
	case e.Result.Present() || e.ErrObj.Present():
		return `a request must not have "result" or "error"`
	case e.Params.Present() && data[e.Params.Start] != '[' && data[e.Params.Start] != '{':
		return `"params" must be an array or an object`
	}
	return ""
}

// IsIDValue reports whether c begins a JSON string, number or null.
func IsIDValue(c byte) bool { return c == '"' || c == 'n' || c == '-' || (c >= '0' && c <= '9') }

func isVersion2(v []byte) bool {
	return string(v) == `"2.0"` || (v[0] == '"' && string(Unquote(v[1:len(v)-1])) == "2.0")
}

// HasMethod reports whether the object has a "method" member.
func (e *Envelope) HasMethod() bool { return e.method.Present() }

// MethodName returns the decoded method name bytes (of a request's).
func (e *Envelope) MethodName(data []byte) []byte {
	return Unquote(data[e.method.Start+1 : e.method.End-1])
}
