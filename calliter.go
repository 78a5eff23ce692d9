package jsonrpc

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/httpgzip"
	"github.com/seedhq/jsonrpc/internal/params"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// CallIter calls method and yields its result, a JSON array, one element
// at a time, decoded into T (leniently, as Call decodes, or strictly with
// WithStrictResults). The call is made when the sequence is ranged over;
// an error (the call's, an error response as *Error, a result that is not
// an array, an element that does not decode) is yielded once, last.
// Breaking out of the loop ends the call.
//
// The call goes through c's Call, so its interceptors (WithInterceptors,
// Intercept) see it as any call: its result is a value of CallIter's own
// that they pass on to the next Invoker, and the loop's body runs while
// that Call runs (see [Interceptor]).
//
// On an [HTTPClient], and on a [Conn] with newline framing (tcp, tls,
// unix, stdio, DialCommand) or a WebSocket client's, the response is
// decoded as it arrives, so a
// result of any size is read in the memory of one element: the response's
// size limit (WithMaxMessageSize) bounds each element rather than the
// whole. On a Conn the connection's reader is lent to the loop until the
// response ends: nothing else is read from that connection meanwhile, so
// a Call on the same connection from inside the loop waits for the loop
// to end (docs/streaming.md). On other clients the response is read whole
// first, under that limit, and its elements decoded one by one. Either way
// the server need not stream: any array result reads the same (see [Stream]).
func CallIter[T any](ctx context.Context, c Client, method string, params any) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		r := &iterResult{method: method}
		r.each = func(elem []byte) (bool, error) {
			var v T
			if err := decodeResult(method, elem, &v, r.strict); err != nil {
				return false, err
			}
			return yield(v, nil), nil
		}
		if err := c.Call(ctx, method, params, r); err != nil && !r.stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// iterResult is the result CallIter passes to a client's Call: whoever
// decodes the result into it (an HTTPClient as the body arrives, any other
// client once it has the response) hands it the array's elements, which
// go to the loop.
type iterResult struct {
	method  string
	each    func(elem []byte) (bool, error) // decodes an element and yields it
	strict  bool                            // WithStrictResults, of the client that decodes
	begun   bool                            // an element went to the loop
	stopped bool                            // the loop broke off
}

// errStopped: the loop over CallIter's sequence broke off.
var errStopped = errors.New("jsonrpc: stopped by the caller")

// errCalledTwice: an interceptor retried a CallIter call whose elements
// had begun to reach the loop; the loop cannot take them twice.
var errCalledTwice = errors.New("jsonrpc: a CallIter call was made again after its elements had begun (an interceptor retried it)")

// element hands one element to the loop.
func (r *iterResult) element(elem []byte) (bool, error) {
	r.begun = true
	more, err := r.each(elem)
	if err == nil && !more {
		r.stopped = true
		err = errStopped
	}
	return more, err
}

// read reads the result, a JSON array, from dec and hands its elements to
// the loop; strict is the decoding client's WithStrictResults. next, if
// not nil, is called before each element is handed out.
func (r *iterResult) read(dec *jsontext.Decoder, strict bool, next func()) error {
	if r.begun {
		return errCalledTwice
	}
	r.strict = strict
	each := r.element
	if next != nil {
		each = func(elem []byte) (bool, error) {
			next()
			return r.element(elem)
		}
	}
	return eachElement(dec, r.method, each)
}

// decode hands the elements of a whole result to the loop.
func (r *iterResult) decode(result []byte, strict bool) error {
	return r.read(jsontext.NewDecoder(bytes.NewReader(result)), strict, nil)
}

// UnmarshalJSON lets a Client of another package (which decodes results
// with encoding/json or go-json-experiment) serve CallIter too.
func (r *iterResult) UnmarshalJSON(result []byte) error { return r.decode(result, false) }

// eachElement reads a JSON array from dec and hands each element to each.
func eachElement(dec *jsontext.Decoder, method string, each func([]byte) (bool, error)) error {
	if k := dec.PeekKind(); k != '[' {
		if _, err := dec.ReadToken(); err != nil {
			return invalidStream(err)
		}
		return fmt.Errorf("%w: the result of %s is %s, not an array", ErrInvalidResponse, method, params.KindName(k))
	}
	if _, err := dec.ReadToken(); err != nil {
		return invalidStream(err)
	}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return invalidStream(err)
		}
		more, err := each(v)
		if err != nil {
			return err
		}
		if !more {
			return errStopped
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return invalidStream(err)
	}
	return nil
}

func invalidStream(err error) error {
	return fmt.Errorf("%w from the server: %w", ErrInvalidResponse, err)
}

// callIter posts the request and decodes the response from the body as it
// arrives, handing each element of the result to each.
func (c *HTTPClient) callIter(ctx context.Context, method string, params any, r *iterResult) error {
	if c.closed.Load() {
		return errNotSent // matches ErrClosed, as post's
	}
	id := strconv.FormatUint(c.seq.Add(1), 10)
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	var err error
	if *buf, err = wire.AppendRequest(*buf, []byte(id), method, params, &c.paramsSize); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a loop that breaks off ends the request
	req, zmsg, err := c.newPOST(ctx, *buf)
	if zmsg != nil {
		defer wire.PutBuf(zmsg)
	}
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := c.streamBody(resp)
	if err != nil {
		return err
	}
	defer body.release()
	return readStreamedResponse(jsontext.NewDecoder(body), id, func(dec *jsontext.Decoder) error {
		return r.read(dec, c.strictResults, func() { body.n = 0 }) // the limit is per element
	})
}

// streamBody checks the response to a CallIter POST and returns its body,
// decompressed, each element of it bounded by the client's size limit.
func (c *HTTPClient) streamBody(resp *http.Response) (*elemLimitReader, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newHTTPError(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !isJSONMediaType(ct, false) {
		return nil, errors.New("jsonrpc: the server answered with Content-Type " + strconv.Quote(ct) + ", not application/json")
	}
	gzipped, err := httpgzip.ContentEncoding(resp.Header)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: the server's reply: %w", err)
	}
	body := &elemLimitReader{r: resp.Body, limit: c.maxSize}
	if gzipped {
		zr, err := httpgzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: reading the response: gzip: %w", err)
		}
		body.r, body.zr = zr, zr
	}
	return body, nil
}

// readStreamedResponse reads a response object from dec: its result is
// read by readResult as it arrives; an error object is returned as *Error.
func readStreamedResponse(dec *jsontext.Decoder, id string, readResult func(*jsontext.Decoder) error) error {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return invalidStream(errors.New("the response is not a JSON object"))
	}
	var sawResult bool
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return invalidStream(err)
		}
		name := tok.String() // before the next read voids tok
		if name == "result" {
			if err := readResult(dec); err != nil {
				return err
			}
			sawResult = true
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return invalidStream(err)
		}
		if err := checkResponseMember(name, v, id); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return invalidStream(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return invalidStream(errors.New("more data after the response"))
	}
	if !sawResult {
		return invalidStream(errors.New("the response has neither result nor error"))
	}
	return nil
}

// checkResponseMember checks a member of a streamed response other than
// its result; an error member is returned as the call's *Error.
func checkResponseMember(name string, v jsontext.Value, id string) error {
	switch name {
	case "jsonrpc":
		if string(v) != `"2.0"` {
			return invalidStream(errors.New(`"jsonrpc" is not "2.0"`))
		}
	case "id":
		if string(v) != id && string(v) != "null" {
			return invalidStream(errors.New("id " + string(v) + " does not match the request's id " + id))
		}
	case "error":
		e, ok := parseErrorObject(v)
		if !ok {
			return invalidStream(errors.New("the error member is not a valid error object"))
		}
		return e
	default:
		return invalidStream(errors.New("unknown member " + strconv.Quote(name)))
	}
	return nil
}

// elemLimitReader bounds the bytes read between two elements of a
// streamed result (reset), so that one element cannot exceed the
// client's size limit even though the whole may.
type elemLimitReader struct {
	r     io.Reader
	n     int64 // read since the last reset
	limit int64
	zr    *gzip.Reader // decompressing r, from httpgzip.NewReader (nil: not gzipped)
}

// release gives the decompressor back.
func (l *elemLimitReader) release() {
	if l.zr != nil {
		httpgzip.PutReader(l.zr)
		l.zr = nil
	}
}

func (l *elemLimitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, &responseTooLarge{limit: l.limit}
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

// Lending a connection's reader to CallIter (newline framing: tcp, tls,
// unix, stdio, a command; a WebSocket client: websocket_lend.go). When the reader of a connection meets a line
// that begins as a response to a waiting CallIter call ({"jsonrpc", "id",
// then "result": [ — the order we, go-ethereum and most servers write), it
// lends itself to that call until the line ends: the call decodes the
// result element by element from the connection, in the memory of one
// element and the read buffer, and the reader reads on once the call has
// read the line to its end (or discarded the rest, when the loop broke
// off). Meanwhile nothing else is read from the connection: responses to
// other calls and the peer's requests wait behind the stream, so a Call
// on the same connection from inside the loop waits for the loop to end.
// A response whose result comes before its id, or with Content-Length
// framing, is read whole, under the size limit, as any response.

// lineLender is a channel whose reader can be lent (the stream of
// NewStream: internal/framing).
type lineLender interface {
	SetLendCheck(framing.LendCheck)
	Lent() io.Reader
	Discard() error
	InterruptsWhileLent() int
}

// lentMessage is a response lent to the call it answers.
type lentMessage struct {
	id   uint64
	l    lineLender
	done chan struct{} // closed when the call is done with it
}

// end discards what the call did not read and gives the reader back.
func (m *lentMessage) end() error {
	err := m.l.Discard()
	close(m.done)
	return err
}

// readLent decodes a lent response into r, each element bounded by the
// size limit, and gives the reader back.
func (c *Conn) readLent(m *lentMessage, r *iterResult) error {
	body := &elemLimitReader{r: m.l.Lent(), limit: c.srv.maxMessageSize()}
	err := readStreamedResponse(jsontext.NewDecoder(body), strconv.FormatUint(m.id, 10), func(dec *jsontext.Decoder) error {
		return r.read(dec, c.strictResults, func() { body.n = 0 }) // the limit is per element
	})
	if derr := m.end(); err == nil && derr != nil {
		err = invalidStream(derr)
	}
	return err
}

// lendCheck decides, from the start of a line, whether it is lent: a
// response to a waiting CallIter call whose id comes before its result,
// and whose result is an array. It runs on the reading goroutine.
func (c *Conn) lendCheck(head []byte) framing.Lend {
	if c.iterCalls.Load() == 0 {
		return framing.LendNo
	}
	id, lend := iterResponseID(head)
	if lend != framing.LendYes {
		return lend
	}
	c.mu.Lock()
	p := c.pending.m[id]
	c.mu.Unlock()
	if p == nil || !p.iter {
		return framing.LendNo
	}
	c.rd.lendID = id
	return framing.LendYes
}

// iterResponseID reads the members of a response that come before its
// result, from head (the start of a message): LendYes with the id when
// "jsonrpc" and an id of ours come first and the result is an array,
// LendUndecided when head ends before that is known.
func iterResponseID(head []byte) (uint64, framing.Lend) {
	switch first := bytes.TrimLeft(head, " \t\r\n"); {
	case len(first) == 0:
		return 0, framing.LendUndecided
	case first[0] != '{':
		return 0, framing.LendNo // not an object (a batch, or not JSON): read whole
	}
	h := responseHead{dec: jsontext.NewDecoder(bytes.NewReader(head)), head: head}
	if _, err := h.dec.ReadToken(); err != nil { // '{'
		return 0, undecidedOrNo(err)
	}
	var id uint64
	sawID := false
	for {
		name, lend := h.name()
		if lend != framing.LendYes {
			return 0, lend
		}
		switch name {
		case "jsonrpc", "id":
			v, lend := h.value()
			if lend != framing.LendYes {
				return 0, lend
			}
			if name == "id" {
				if id, sawID = parseOurID(v); !sawID {
					return 0, framing.LendNo
				}
			}
		case "result":
			if !sawID {
				return 0, framing.LendNo // the result before the id: read whole
			}
			return id, h.array()
		default:
			return 0, framing.LendNo // an error response, or a member we do not know
		}
	}
}

// responseHead reads the start of a response for iterResponseID. Each
// read returns LendYes when it read what it was asked for.
type responseHead struct {
	dec  *jsontext.Decoder
	head []byte
}

// atEnd reports whether the last read ended where head does: a number
// there may go on in the next bytes.
func (h *responseHead) atEnd() bool { return h.dec.InputOffset() == int64(len(h.head)) }

// name reads the next member's name (after a comma); anything else is not lent.
func (h *responseHead) name() (string, framing.Lend) {
	switch rest := bytes.TrimLeft(h.head[h.dec.InputOffset():], " \t\r\n,"); {
	case len(rest) == 0:
		return "", framing.LendUndecided
	case rest[0] != '"':
		return "", framing.LendNo
	}
	tok, err := h.dec.ReadToken()
	if err != nil || h.atEnd() {
		return "", undecidedOrNo(err)
	}
	return tok.String(), framing.LendYes
}

// value reads a member's value.
func (h *responseHead) value() (jsontext.Value, framing.Lend) {
	v, err := h.dec.ReadValue()
	if err != nil || h.atEnd() {
		return nil, undecidedOrNo(err)
	}
	return v, framing.LendYes
}

// array reports whether the value next (the result) is an array.
func (h *responseHead) array() framing.Lend {
	switch h.dec.PeekKind() {
	case '[':
		return framing.LendYes
	case 0:
		return framing.LendUndecided
	}
	return framing.LendNo
}

// undecidedOrNo: head ended too soon (undecided: no error, or an end of
// input), or is not JSON we lend.
func undecidedOrNo(err error) framing.Lend {
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return framing.LendUndecided
	}
	return framing.LendNo
}
