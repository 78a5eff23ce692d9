package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/resultstream"
	"github.com/seedhq/jsonrpc/internal/streamable"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// CallIter calls method and yields its result, a JSON array, one element
// at a time, decoded into T as Call decodes. The call is made when the
// sequence is ranged over; an error (the call's, an error response as
// *Error, a result that is not an array, an element that does not decode)
// is yielded once, last. Breaking out of the loop ends the call, and so does
// ctx ending while the response is read (on a WebSocket client that closes
// the socket: docs/streaming.md).
//
// The call goes through c's Call, so interceptors see it as any call, with
// a result of CallIter's own to pass on (see [Interceptor]).
//
// On an [HTTPClient], a [Conn] over a stream (tcp, tls, unix, stdio,
// DialCommand), a WebSocket client and a Streamable HTTP client answered
// with JSON, the response is decoded as it arrives, in the memory of one
// element: WithMaxMessageSize bounds each element, not the whole. On a
// stream or a WebSocket the connection's reader is lent to the loop until
// the response ends, so a Call on that connection from inside the loop
// waits for the loop to end. Otherwise (an event stream, another client)
// the response is read whole first, under that limit. Either way any array
// result reads the same, streamed by the server or not (see [Stream]).
func CallIter[T any](ctx context.Context, c Client, method string, params any) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		r := &iterResult{Method: method}
		r.Each = func(elem []byte) (bool, error) {
			var v T
			if err := decodeResult(method, elem, &v, r.Strict); err != nil {
				return false, err
			}
			return yield(v, nil), nil
		}
		if err := c.Call(ctx, method, params, r); err != nil && !r.Stopped {
			var zero T
			yield(zero, err)
		}
	}
}

// iterResult is the result CallIter passes to a client's Call: whoever
// decodes the result into it hands it the array's elements, for the loop.
type iterResult = resultstream.Result

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
	if *buf, err = codec.AppendRequest(*buf, []byte(id), method, params, &c.paramsSize); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // a loop that breaks off ends the request
	resp, zmsg, err := c.do(ctx, *buf)
	defer wire.PutBuf(zmsg)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	decoded, release, err := streamBody(resp)
	if err != nil {
		return err
	}
	defer release()
	return readStreamed(decoded, id, c.maxSize, c.strictResults, r)
}

// readStreamed decodes a response read from body as it arrives into r,
// each element bounded by limit (a larger one fails as a response would).
func readStreamed(body io.Reader, id string, limit int64, strict bool, r *iterResult) error {
	lr := &resultstream.LimitReader{R: body, Limit: limit, Err: &responseTooLarge{limit: limit}}
	return resultstream.ReadResponse(jsontext.NewDecoder(lr), id, func(dec *jsontext.Decoder) error {
		return r.Read(dec, strict, lr.Reset) // the limit is per element
	}, func(v []byte) error {
		if e, ok := parseErrorObject(v); ok {
			return e
		}
		return nil // not a valid error object
	})
}

// streamBody checks the response to CallIter's POST and returns its body,
// decompressed, and release, which gives the decompressor back.
func streamBody(resp *http.Response) (body io.Reader, release func(), err error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, newHTTPError(resp)
	}
	if ct := resp.Header.Get("Content-Type"); !httpx.IsJSON(ct, false) {
		return nil, nil, errors.New("jsonrpc: the server answered with Content-Type " + strconv.Quote(ct) + ", not application/json")
	}
	gzipped, err := httpx.ContentEncoding(resp.Header)
	if err != nil {
		return nil, nil, fmt.Errorf("jsonrpc: the server's reply: %w", err)
	}
	if !gzipped {
		return resp.Body, func() {}, nil
	}
	zr, err := httpx.NewReader(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("jsonrpc: reading the response: gzip: %w", err)
	}
	return zr, func() { httpx.PutReader(zr) }, nil
}

// lineLender is a channel whose reader can be lent (the stream of
// NewStream: internal/framing).
type lineLender interface {
	SetLendCheck(framing.LendCheck)
	Lent() io.Reader
	Discard() error
	CancelLent()
	ResumeLent()
	InterruptsWhileLent() int
}

// lendsResponses reports whether ch may lend a CallIter call its response
// as it arrives: a stream's or a WebSocket's reader, or a Streamable HTTP
// client's JSON answer (streamable_client.go).
func lendsResponses(ch Channel) bool {
	switch ch.(type) {
	case lineLender, *streamable.Client:
		return true
	}
	return false
}

// lentMessage is a response lent to the call it answers.
type lentMessage struct {
	id     uint64
	l      lineLender
	done   chan struct{} // closed when the call is done with it
	reader bool          // lent by the connection's reader, which discards what is left after done
}

// abandon gives the message back unread (the call's context ended): the
// connection's reader discards the rest, not the caller, who returns.
func (m *lentMessage) abandon() {
	if !m.reader {
		m.l.Discard()
	}
	close(m.done)
}

// readLent decodes a lent response into r, each element bounded by the
// size limit, and gives the reader back. When ctx ends meanwhile the read
// is cancelled (CancelLent) and the call returns ctx's error.
func (c *Conn) readLent(ctx context.Context, m *lentMessage, r *iterResult) error {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { m.l.CancelLent(); close(fired) })
	err := readStreamed(m.l.Lent(), strconv.FormatUint(m.id, 10), c.srv.maxMessageSize(), c.strictResults, r)
	if !stop() {
		<-fired
		m.l.ResumeLent()
		if err != nil {
			m.abandon()
			return ctx.Err()
		}
	}
	derr := m.l.Discard() // what the call did not read
	close(m.done)         // the reader goes back
	if err == nil && derr != nil {
		err = resultstream.Invalid(derr)
	}
	return err
}

// lendCheck decides, from the start of a line, whether it is lent: a
// response to a waiting CallIter call whose id comes before its result, an
// array (the contract: doc.go). It runs on the reading goroutine.
func (c *Conn) lendCheck(head []byte) framing.Lend {
	if c.iterCalls.Load() == 0 {
		return framing.LendNo
	}
	id, lend := resultstream.ResponseID(head, parseOurID)
	if lend != framing.LendYes {
		return lend
	}
	c.mu.Lock()
	p, ok := c.pending.Get(id)
	c.mu.Unlock()
	if !ok || !p.iter {
		return framing.LendNo
	}
	c.rd.lendID = id
	return framing.LendYes
}
