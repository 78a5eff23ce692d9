package jsonrpc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// The HTTP transport: one JSON-RPC message (a request, a notification or a
// batch) per POST body, its reply in the response body.

// httpState is the per-request decoding state, pooled across requests.
type httpState struct {
	exchange // the sink of its messages (dispatch.go): data holds the request body, out the reply

	// The request being served, for late (answerLate, made once per state).
	w        http.ResponseWriter
	pi       *peerInfo
	answered bool // by late, at the handler timeout
}

// answerLate writes the reply sent at the handler timeout, while the
// handler still runs: complete once flushed, and with Connection: close,
// since the handler still holds the connection.
func (st *httpState) answerLate(reply []byte) {
	h := st.w.Header()
	h.Set("Content-Length", strconv.Itoa(len(reply)))
	h.Set("Connection", "close")
	st.srv.writeHTTPReply(st.w, st.pi, reply)
	http.NewResponseController(st.w).Flush()
	st.answered = true
}

// httpRequest is what serving one HTTP request allocates, in one piece:
// the peer, and the handlers' context (which carries it) with the state of
// the handler timeout.
type httpRequest struct {
	ts     timedServe
	pi     peerInfo
	stream *streamSlot // a Stream the handler returned (stream.go); nil: none
}

var httpStatePool = sync.Pool{New: func() any {
	st := new(httpState)
	st.late = st.answerLate
	return st
}}

// maxPooledBody bounds the request buffers kept in the pool, so that one
// large body does not pin its memory.
const maxPooledBody = 64 << 10

// ServeHTTP serves JSON-RPC over HTTP, so a Server can be mounted on any
// http.ServeMux or router:
//
//   - only POST is served; other methods get 405 Method Not Allowed with
//     "Allow: POST";
//   - the Content-Type must be application/json (a charset parameter, if
//     any, must be utf-8); otherwise 415 Unsupported Media Type;
//   - a body over MaxMessageSize gets 413 Request Entity Too Large, decided
//     from Content-Length before reading or, for a chunked body, as soon as
//     the limit is passed;
//   - the reply, including every JSON-RPC error (a parse error too), goes
//     with 200 OK and Content-Type application/json;
//   - a message that needs no reply (a notification, or a batch of
//     notifications) gets NotificationStatus (default 204) and no body.
//
// The handler's context is the request's: it is cancelled when the client
// goes away. ConnFromContext returns nil: an HTTP server cannot call back.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.checkOrigin(w, r) || !httpx.OnlyPOST(w, r) {
		return
	}
	s.life.Enter() // Shutdown answers it first
	defer s.life.Leave()
	st := httpStatePool.Get().(*httpState)
	defer func() {
		if cap(st.data) > maxPooledBody {
			st.data = nil
		}
		st.w, st.pi, st.answered, st.ts = nil, nil, false, nil
		st.sc.Data, st.reply, st.refused = nil, nil, nil // do not pin a large body or the reply
		httpStatePool.Put(st)
	}()
	var read bool
	if st.data, read = s.readPOST(w, r, st.data[:0]); !read {
		return
	}
	hr := &httpRequest{pi: peerInfo{peer: s.httpPeer(r, "http"), srv: s}}
	pi, ctx := &hr.pi, &hr.ts.ctx
	ctx.Init(r.Context(), pi)
	st.srv, st.w, st.pi = s, w, pi
	hr.ts.req.stream = &hr.stream
	st.ts, st.d, st.out = &hr.ts, s.handlerTimeout(true), st.out[:0]
	if e, batch, ok := s.dispatch(ctx, &st.inbound, st); ok {
		st.serve(ctx, e, batch)
	}
	reply := st.reply
	if st.answered {
		return
	}
	if st.refused != nil {
		tooManyRequests(w, st.refused)
		return
	}
	if hr.stream != nil {
		s.serveHTTPStream(w, pi, hr.stream, reply)
		return
	}
	if cap(reply) > 0 && cap(reply) <= maxPooledBody {
		st.out = reply[:0] // reused for the next request once this one is written
	}
	s.writeHTTPReply(w, pi, reply)
}

// readPOST is httpx.ReadPOST under s's MaxMessageSize and HTTPBodyTimeout,
// with a body too large logged. When it reports false it has answered.
func (s *Server) readPOST(w http.ResponseWriter, r *http.Request, buf []byte) ([]byte, bool) {
	limit := s.maxMessageSize()
	buf, err := httpx.ReadPOST(w, r, buf, limit, s.httpBodyTimeout())
	if err == httpx.ErrTooLarge {
		ctx := withPeer(r.Context(), s, s.httpPeer(r, "http"))
		s.logProtocol(ctx, "jsonrpc: message too large", errMessageTooLarge(limit), nil)
	}
	return buf, err == nil
}

// writeHTTPReply writes the reply to a POST: 200 with the JSON body, or
// NotificationStatus (204) when there is none.
func (s *Server) writeHTTPReply(w http.ResponseWriter, pi *peerInfo, reply []byte) {
	pi.ReplyHeader(w.Header())
	if len(reply) == 0 {
		w.WriteHeader(cmp.Or(s.NotificationStatus, http.StatusNoContent))
		return
	}
	s.writeJSON(w, pi.peer.Header, reply)
}

// tooManyRequests answers a message that Server.Admit refused: 429 with
// Retry-After (a LimitError's RetryAfter rounded up to whole seconds, at
// least 1), and a JSON-RPC error (id null) as the body.
func tooManyRequests(w http.ResponseWriter, refused error) {
	h := w.Header()
	h.Set("Retry-After", "1")
	if le := (*LimitError)(nil); errors.As(refused, &le) && le.RetryAfter > time.Second {
		h.Set("Retry-After", strconv.FormatInt(int64((le.RetryAfter+time.Second-1)/time.Second), 10))
	}
	h["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(appendResponse(nil, NullID, nil, &Error{Code: CodeLimitExceeded, Message: "limit exceeded"}))
}

// jsonContentType is the header value every request and reply carries,
// shared rather than allocated each time (nothing modifies it).
var jsonContentType = []string{"application/json"}

// HTTPError is returned by HTTPClient when the server answers with a status
// other than 2xx. When the body is a JSON-RPC error response (some servers
// send errors with 4xx or 5xx statuses), that *Error is wrapped too, so
// errors.As finds either.
type HTTPError struct {
	StatusCode int
	Header     http.Header
	Body       string // the start of the response body (at most 4 KiB)

	rpc *Error
}

// Unwrap returns the JSON-RPC error carried by the body, if any.
func (e *HTTPError) Unwrap() error {
	if e.rpc == nil {
		return nil
	}
	return e.rpc
}

func (e *HTTPError) Error() string {
	msg := "jsonrpc: HTTP " + strconv.Itoa(e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		msg += " " + t
	}
	if b := strings.TrimSpace(e.Body); b != "" {
		msg += ": " + httpx.Excerpt(b)
	}
	return msg
}

// HTTPClient is a JSON-RPC client over HTTP: each call, notification or
// batch is one POST. It reuses connections (keep-alive) and is safe for
// concurrent use. HTTP cannot carry calls from the server to the client.
//
// Failures map to errors as follows: a JSON-RPC error response is an
// *Error; a status other than 2xx is an *HTTPError; a reply that is not
// JSON, empty where a response was due, over the size limit, or not a valid
// response to the request (wrong id) is a plain error saying so.
type HTTPClient struct {
	url      string
	hc       *http.Client
	own      *http.Transport // our own transport, whose idle connections Close closes
	header   http.Header
	maxSize  int64
	compress bool // gzip requests (WithCompression)
	seq      atomic.Uint64
	closed   atomic.Bool

	paramsSize atomic.Int64 // size of the last large params sent (see growFor)

	strictResults bool    // WithStrictResults
	inv           Invoker // WithInterceptors (nil: none)

	send Exchange // NewMessageClient: carries the messages instead of HTTP
}

// NewHTTPClient returns a client that posts to url, with the options the
// package doc's table lists; Dial returns the same for http(s):// URLs.
func NewHTTPClient(url string, opts ...DialOption) *HTTPClient {
	return newHTTPClient(url, newDialConfig(opts))
}

func newHTTPClient(url string, cfg *dialConfig) *HTTPClient {
	c := &HTTPClient{url: url, header: cfg.header.Clone(), maxSize: orDefault(cfg.maxMessageSize, DefaultMaxMessageSize), strictResults: cfg.strictResults, compress: cfg.compress}
	c.inv = cfg.chain(direct{c})
	c.hc = cfg.httpClient
	if c.hc == nil {
		c.own = httpx.NewTransport(cfg.tlsConfig)
		c.hc = &http.Client{Transport: c.own}
	}
	return c
}

// Call posts a request and decodes the result into result (a pointer, or nil
// to discard it). See HTTPClient for the errors.
func (c *HTTPClient) Call(ctx context.Context, method string, params, result any) error {
	if c.inv != nil {
		return c.inv.Call(ctx, method, params, result)
	}
	return c.callDirect(ctx, method, params, result)
}

func (c *HTTPClient) callDirect(ctx context.Context, method string, params, result any) error {
	if r, ok := result.(*iterResult); ok && c.send == nil {
		return c.callIter(ctx, method, params, r) // CallIter: the body is read as it arrives
	}
	id := c.seq.Add(1)
	var idBuf [20]byte
	idText := strconv.AppendUint(idBuf[:0], id, 10)
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	var err error
	if *buf, err = codec.AppendRequest(*buf, idText, method, params, &c.paramsSize); err != nil {
		return err
	}
	into := wire.GetBuf() // the response body
	defer wire.PutBuf(into)
	body, err := c.post(ctx, *buf, (*into)[:0], true)
	if err != nil {
		return err
	}
	*into = body[:0]
	r := scanPool.Get().(*scanState)
	defer func() { r.sc.Data = nil; scanPool.Put(r) }()
	sc, m := &r.sc, &r.m
	if err := sc.Parse(body, DefaultMaxDepth, m); err != nil {
		return invalidHTTPResponse("not valid JSON ("+err.Error()+")", body)
	}
	if m.Batch {
		return invalidHTTPResponse("an array in reply to a single call", body)
	}
	e := &m.Elems[0]
	if e.Kind != wire.KindResponse {
		return invalidHTTPResponse("not a JSON-RPC response", body)
	}
	if n, ok := parseOurID(e.ID.Of(body)); !ok || n != id {
		// A server that could not read the request answers with id null:
		// its error is still the most useful thing to return.
		if rpcErr := nullIDError(body, e); rpcErr != nil {
			return rpcErr
		}
		return invalidHTTPResponse("id "+idOf(e, body).String()+" does not match the request's id "+string(idText), body)
	}
	out := outcome(body, e)
	if out.err != nil {
		return out.err
	}
	return decodeResult(method, out.result, result, c.strictResults)
}

// Notify posts a notification. The server must answer 2xx with an empty
// body (204 or 202 usually); a JSON-RPC error in reply is returned as *Error.
func (c *HTTPClient) Notify(ctx context.Context, method string, params any) error {
	if c.inv != nil {
		return c.inv.Notify(ctx, method, params)
	}
	return c.notifyDirect(ctx, method, params)
}

func (c *HTTPClient) notifyDirect(ctx context.Context, method string, params any) error {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	var err error
	if *buf, err = codec.AppendRequest(*buf, nil, method, params, &c.paramsSize); err != nil {
		return err
	}
	body, err := c.post(ctx, *buf, nil, false)
	if err != nil {
		return err
	}
	return notificationReply(body)
}

// notificationReply checks the body sent in reply to notifications only.
func notificationReply(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	// A server may answer a message it could not read with an error.
	var sc wire.Scanner
	var m wire.Message
	if sc.Parse(body, DefaultMaxDepth, &m) == nil && !m.Batch && m.Elems[0].Kind == wire.KindResponse {
		if e := &m.Elems[0]; e.ErrObj.Present() {
			if rpcErr, ok := parseErrorObject(e.ErrObj.Of(body)); ok {
				return rpcErr
			}
		}
		return nil // a (needless) success response: the notification was delivered
	}
	return invalidHTTPResponse("a body in reply to a notification", body)
}

// Batch posts the calls and notifications of b as one JSON array and
// matches the responses to the calls by id. It returns an error when the
// exchange failed as a whole (transport, HTTP status, invalid reply); each
// call's own outcome is in its Err field. A single error object in reply
// (say, the batch is too long) becomes the Err of every call; a call
// without a response gets an error saying so.
func (c *HTTPClient) Batch(ctx context.Context, b *Batch) error {
	if c.inv != nil {
		return c.inv.Batch(ctx, b)
	}
	return c.batchDirect(ctx, b)
}

func (c *HTTPClient) batchDirect(ctx context.Context, b *Batch) error {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	msg, sb, err := encodeBatch((*buf)[:0], b, &c.seq)
	*buf = msg
	if err != nil {
		return err
	}
	defer sb.release()
	calls := sb.calls
	body, err := c.post(ctx, msg, nil, len(calls) > 0)
	if err != nil {
		return err
	}
	if len(calls) == 0 {
		return notificationReply(body)
	}
	var sc wire.Scanner
	var m wire.Message
	if err := sc.Parse(body, DefaultMaxDepth, &m); err != nil {
		return invalidHTTPResponse("not valid JSON ("+err.Error()+")", body)
	}
	if !m.Batch && (m.Elems[0].Kind != wire.KindResponse || !m.Elems[0].ErrObj.Present()) {
		return invalidHTTPResponse("a single object that is not an error in reply to a batch", body)
	}
	for i := range m.Elems {
		if m.Elems[i].Kind != wire.KindResponse {
			return invalidHTTPResponse("an element of the reply is not a JSON-RPC response", body)
		}
	}
	var set pendingSet
	for _, w := range calls {
		set.Add(w.id, w.p.group, w.p)
	}
	// The reply answers this batch even when it is one object (an error
	// for the whole batch, say it is too long): no call is left waiting.
	if unmatched, id, _ := set.answer(body, m.Elems, true); unmatched > 0 {
		return invalidHTTPResponse("a response with id "+id+" that matches no call", body)
	}
	for _, p := range set.TakeAll() {
		p.ch <- callResult{err: ErrNoResponse} // a single error object with an id of ours
	}
	return wait(ctx, sb, c.strictResults)
}

// Close closes the idle connections of the client's own transport. Calls
// after Close fail with ErrClosed.
func (c *HTTPClient) Close() error {
	c.closed.Store(true)
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return nil
}

// post sends one message and returns the response body: nil when the server
// sent none. It maps HTTP-level failures to errors.
func (c *HTTPClient) post(ctx context.Context, msg, into []byte, wantReply bool) ([]byte, error) {
	if c.closed.Load() {
		return nil, errNotSent // matches ErrClosed; nothing left (a FailoverClient sends it elsewhere)
	}
	if c.send != nil {
		return c.exchange(ctx, msg, wantReply)
	}
	resp, zmsg, err := c.do(ctx, msg)
	defer wire.PutBuf(zmsg)
	if err != nil {
		return nil, err
	}
	defer httpx.DrainClose(resp.Body)
	return c.readReply(resp, into, wantReply)
}

// exchange is post for NewMessageClient: the Exchange carries the message.
func (c *HTTPClient) exchange(ctx context.Context, msg []byte, wantReply bool) ([]byte, error) {
	body, err := c.send(ctx, msg, wantReply)
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > c.maxSize {
		return nil, &responseTooLarge{size: int64(len(body)), limit: c.maxSize}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if wantReply {
			return nil, errors.New("jsonrpc: the server sent an empty reply where a response was due")
		}
		return nil, nil
	}
	return body, nil
}

// do POSTs msg, gzipped (into a buffer the caller gives back with
// wire.PutBuf once the response is read) when WithCompression asks for it,
// and returns the response, whatever its status.
func (c *HTTPClient) do(ctx context.Context, msg []byte) (*http.Response, *[]byte, error) {
	var zmsg *[]byte
	if c.compress && len(msg) >= DefaultHTTPCompressMinSize {
		zmsg = wire.GetBuf()
		*zmsg = httpx.Append((*zmsg)[:0], msg)
		msg = *zmsg
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return nil, zmsg, fmt.Errorf("jsonrpc: %w", err)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range headerFromContext(ctx) {
		req.Header[k] = v
	}
	req.Header["Content-Type"] = jsonContentType
	req.Header["Accept"] = jsonContentType
	req.Header["Accept-Encoding"] = httpx.Encoding // decompressed by readReply, under the size limit
	if zmsg != nil {
		req.Header["Content-Encoding"] = httpx.Encoding
	}
	resp, err := c.hc.Do(req)
	return resp, zmsg, err
}

// readReply reads the body of the response to a POST into into,
// decompressed, under the client's size limit.
func (c *HTTPClient) readReply(resp *http.Response, into []byte, wantReply bool) ([]byte, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newHTTPError(resp)
	}
	return httpx.ReadReply(resp, into, c.maxSize, wantReply, func(size int64) error {
		return &responseTooLarge{size: size, limit: c.maxSize}
	})
}

// newHTTPError reads the start of the body of a response whose status is
// not 2xx, and the JSON-RPC error it may carry.
func newHTTPError(resp *http.Response) *HTTPError {
	b := httpx.ErrorBody(resp)
	rpcErr, _ := notificationReply(b).(*Error) // the error of a single error response, read as a notification's reply is
	return &HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: string(b), rpc: rpcErr}
}

func invalidHTTPResponse(what string, body []byte) error {
	return fmt.Errorf("%w from the server: %s: %s", ErrInvalidResponse, what, httpx.Excerpt(string(body)))
}
