package jsonrpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// ErrEventTooLarge matches (errors.Is) the error of an event stream whose
// event is over the client's message size limit (WithMaxMessageSize,
// default 10 MiB); it also matches ErrMessageTooLarge. The stream is not
// read further.
var ErrEventTooLarge = sse.ErrEventTooLarge

// The client of Streamable HTTP (see streamable.go): a [Conn] whose Channel
// POSTs each message it sends and reads each answer, JSON or an event
// stream, as messages received. Calls are matched, batches answered and
// the server's requests served by the Conn, exactly as on a stream.

// WithStreamableHTTP makes Dial of an http:// or https:// URL return a
// Streamable HTTP client (see [DialStreamableHTTP]) instead of an
// [HTTPClient].
func WithStreamableHTTP() DialOption { return func(c *dialConfig) { c.streamable = true } }

// streamableCloseTimeout bounds the DELETE that ends a session at Close.
const streamableCloseTimeout = 5 * time.Second

// DialStreamableHTTP returns a client of the Streamable HTTP transport
// (MCP 2025-11-25) at url: a [Conn], so that Call, Notify, Batch, Subscribe
// and the server's calls work as on a stream. Nothing is sent before the
// first call (ctx is not used).
//
// Each message goes in a POST with "Accept: application/json,
// text/event-stream"; the answer is read as one JSON message or as an
// event stream whose "message" events are the server's messages:
// notifications and requests it sends during the call, served with the
// handler given with WithHandler (the answers are POSTed back; without
// one, requests get -32601 and notifications are dropped), then the
// response. A call returns once its response is read; its context ending
// abandons the POST. A reply due and missing (202, an empty body, a
// stream ended early) is an error saying so; a status other than 2xx is an
// *HTTPError.
//
// The Mcp-Session-Id header of the server's first answer carrying one is
// sent with every later request, and so is the protocolVersion of the
// result of an "initialize" call, as Mcp-Protocol-Version (unless
// WithHeader sets one); a 404 to a request carrying it forgets it
// (the server ended the session: the next initialization starts another).
// Close ends the session with DELETE (bounded by 5 s) and cancels the
// requests in flight.
//
// After the first successful POST the client opens the standalone GET
// stream once; a server that declines it (405, or any other status) is not
// asked again. The stream is reopened when it ends, with Last-Event-ID when
// the server sent event ids, after its retry: delay (default 1 s, doubling
// up to 30 s while the stream carries nothing). A POST's stream cut before
// its response is resumed the same way when it carried event ids (at most
// 3 attempts); without ids the call fails.
//
// With WithMCPVersion the client is an MCP client that finds the server's
// era (MCP 2026-07-28, stateless, or 2025-11-25 with the session above)
// and speaks it; see mcpclient.go and docs/mcp.md.
//
// Options: WithHeader, WithHTTPClient, WithTLSConfig, WithMCPVersion,
// WithMCPClientInfo, WithMCPCapabilities, WithMaxInputRounds, WithHandler (and the
// other options of the connection's handler: WithMaxConcurrency, WithAdmit,
// WithLogger, WithConvention, WithProgress),
// WithMaxMessageSize (the bound on a JSON answer and on one event, default
// 10 MiB; over it, the call fails with an error matching ErrMessageTooLarge).
func DialStreamableHTTP(ctx context.Context, url string, opts ...DialOption) (*Conn, error) {
	return dialStreamable(url, newDialConfig(opts))
}

func dialStreamable(rawURL string, cfg *dialConfig) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: invalid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("jsonrpc: Streamable HTTP needs an http:// or https:// URL, not " + rawURL)
	}
	srv := cfg.peer()
	hc := newHTTPClient(u.String(), cfg) // its HTTP settings: one place for them
	ch := &streamableChannel{url: hc.url, hc: hc.hc, own: hc.own, header: hc.header, limit: hc.maxSize, srv: srv, in: make(chan []byte, 16)}
	ch.ctx, ch.cancel = context.WithCancel(context.Background())
	c := newConn(ch, srv, nil)
	c.strictResults = cfg.strictResults
	c.inv = cfg.chain(connDirect{c})
	if cfg.mcpVersion != "" {
		m, err := newMCPClient(c, ch, cfg)
		if err != nil {
			c.Close()
			return nil, err
		}
		ch.mcp, ch.getHeld = m, true // no GET stream before the era is known
		c.inv = chain(m, cfg.interceptors)
	}
	return c, nil
}

// contextSender is implemented by a Channel whose Send can follow the
// context of the caller whose message it carries (Streamable HTTP: the
// POST of a call is abandoned when the call's context ends).
type contextSender interface {
	sendContext(ctx context.Context, msg []byte) error
}

// sendFor sends a message of ours (a call, a notification, a batch) for a
// caller whose context is ctx.
func (c *Conn) sendFor(ctx context.Context, msg []byte) error {
	if cs, ok := c.ch.(contextSender); ok {
		return cs.sendContext(ctx, msg)
	}
	return c.ch.Send(msg)
}

// streamableChannel is the Channel of a Streamable HTTP client. Send and
// sendContext may be called concurrently: each is a POST of its own.
type streamableChannel struct {
	url    string
	hc     *http.Client
	own    *http.Transport // our own transport, whose idle connections Close closes
	header http.Header
	limit  int64
	srv    *Server // for its logger

	ctx    context.Context // ends at Close, and with it every request
	cancel context.CancelFunc
	in     chan []byte // messages received, for Recv

	mu      sync.Mutex
	session string
	version string        // the protocolVersion the server's initialize result named (MCP)
	getDone chan struct{} // closed when the GET stream's goroutine ends; nil before it starts
	getHeld bool          // no GET stream (an MCP client before its era is known, or stateless)
	mcp     *mcpClient    // WithMCPVersion; nil for none
	closed  bool
	close   sync.Once
}

// Recv returns the next message the server sent, on any answer or stream.
func (c *streamableChannel) Recv() ([]byte, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
}

// Send POSTs a message the Conn sends on its own: a reply to one of the
// server's requests. A failure cannot be reported to anyone who could act
// on it and ends nothing: it is logged.
func (c *streamableChannel) Send(msg []byte) error {
	if err := c.sendContext(c.ctx, msg); err != nil {
		if c.ctx.Err() != nil {
			return ErrClosed
		}
		c.srv.logger().Warn("jsonrpc: could not POST a reply to the server", "error", err)
	}
	return nil
}

// SendQueued is Send: each reply is a POST of its own, so none waits for another.
func (c *streamableChannel) SendQueued(msg []byte, queued func()) error {
	if queued != nil {
		queued()
	}
	return c.Send(msg)
}

// sendContext POSTs msg and hands the messages of the answer to Recv. It
// returns once the responses msg calls for have been read.
func (c *streamableChannel) sendContext(ctx context.Context, msg []byte) error {
	due, _ := countMessages(msg)
	init := initializeID(msg)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	resp, err := c.do(rctx, http.MethodPost, msg, "")
	if err != nil {
		return c.failure(ctx, err)
	}
	defer c.startGET() // once the answer is read: with the session and version it set
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); mt == eventStream {
		// Not drained: a stream the server keeps open after the response
		// is closed.
		defer resp.Body.Close()
		return c.failure(ctx, c.readStream(rctx, sse.NewReader(resp.Body, int(min(c.limit, 1<<31-1))), due, init))
	}
	defer closeBody(resp.Body)
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent || resp.ContentLength == 0 {
		return missingReply(due, resp.StatusCode)
	}
	if resp.ContentLength > c.limit {
		return &responseTooLarge{size: resp.ContentLength, limit: c.limit}
	}
	body, err := readBody(nil, resp.Body, resp.ContentLength, c.limit)
	switch {
	case err != nil:
		return c.failure(ctx, fmt.Errorf("jsonrpc: reading the response: %w", err))
	case int64(len(body)) > c.limit:
		return &responseTooLarge{limit: c.limit}
	case len(bytes.TrimSpace(body)) == 0:
		return missingReply(due, resp.StatusCode)
	case !isJSONMediaType(ct, false):
		return errors.New("jsonrpc: the server answered with Content-Type " + strconv.Quote(ct) + ", neither application/json nor text/event-stream: " + truncate(string(bytes.TrimSpace(body)), 200))
	}
	return c.failure(ctx, c.received(rctx, body, init))
}

// missingReply is the outcome of an answer without a body to a message that
// called for due responses.
func missingReply(due, status int) error {
	if due == 0 {
		return nil
	}
	return errors.New("jsonrpc: the server sent no response (HTTP " + strconv.Itoa(status) + " with an empty body) where one was due")
}

// failure maps the error of an exchange for a caller whose context is ctx:
// the caller's own context ending, or Close, say so plainly.
func (c *streamableChannel) failure(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case c.ctx.Err() != nil:
		return ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}

// readStream hands the messages of an event stream to Recv until due
// responses have been read (due 0: until the stream ends). A stream cut
// before them is resumed with GET and Last-Event-ID when it carried event
// ids.
func (c *streamableChannel) readStream(ctx context.Context, r *sse.Reader, due int, init string) error {
	got, resumed := 0, 0
	for due == 0 || got < due {
		ev, err := r.Next()
		if err != nil {
			if due == 0 || errors.Is(err, ErrEventTooLarge) || ctx.Err() != nil {
				if due == 0 && !errors.Is(err, ErrEventTooLarge) {
					return nil
				}
				return err
			}
			if !r.HasID || resumed == 3 {
				return fmt.Errorf("%w (%d of %d responses read): %w", sse.ErrStreamCut, got, due, err)
			}
			resumed++
			wait := r.Retry
			if wait <= 0 {
				wait = time.Second
			}
			if !sleepCtx(ctx, wait) {
				return ctx.Err()
			}
			resp, gerr := c.do(ctx, http.MethodGet, nil, r.LastID)
			if gerr != nil {
				return fmt.Errorf("%w (%d of %d responses read); resuming it: %w", sse.ErrStreamCut, got, due, gerr)
			}
			defer resp.Body.Close()
			r = r.Resume(resp.Body)
			continue
		}
		if (ev.Type != "" && ev.Type != "message") || len(ev.Data) == 0 {
			continue // another kind of event, or MCP's priming event (an id, no message)
		}
		msg := bytes.Clone(ev.Data)
		_, responses := countMessages(msg)
		if err := c.received(ctx, msg, init); err != nil {
			return err
		}
		got += responses
	}
	return nil
}

// received hands a message received to Recv. When it answers our
// initialize request (init is its id), the protocolVersion of its result
// goes in the Mcp-Protocol-Version header of every later request, as MCP
// asks.
func (c *streamableChannel) received(ctx context.Context, msg []byte, init string) error {
	if init != "" {
		if v := initializedVersion(msg, init); v != "" {
			c.mu.Lock()
			c.version = v
			c.mu.Unlock()
		}
	}
	return c.push(ctx, msg)
}

// push hands a message received to Recv.
func (c *streamableChannel) push(ctx context.Context, msg []byte) error {
	select {
	case c.in <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do sends one request of the channel and returns its response when the
// status is 2xx, keeping the session the server names.
func (c *streamableChannel) do(ctx context.Context, method string, body []byte, lastEventID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: %w", err)
	}
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range headerFromContext(ctx) {
		req.Header[k] = v
	}
	switch method {
	case http.MethodPost:
		req.Header["Content-Type"] = jsonContentType
		req.Header["Accept"] = bothAccepted
	case http.MethodGet:
		req.Header["Accept"] = eventStreamAccepted
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	c.mu.Lock()
	session, version := c.session, c.version
	c.mu.Unlock()
	if session != "" {
		req.Header.Set(sessionHeader, session)
	}
	if version != "" && req.Header.Get(versionHeader) == "" {
		req.Header.Set(versionHeader, version)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if id := resp.Header.Get(sessionHeader); id != "" {
		c.mu.Lock()
		if c.session == "" {
			c.session = id
		}
		c.mu.Unlock()
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if resp.StatusCode == http.StatusNotFound && session != "" {
			c.mu.Lock()
			if c.session == session {
				c.session = "" // ended by the server: the next initialization starts a new one
			}
			c.mu.Unlock()
		}
		defer closeBody(resp.Body)
		return nil, newHTTPError(resp)
	}
	return resp, nil
}

var (
	bothAccepted        = []string{"application/json, text/event-stream"}
	eventStreamAccepted = []string{eventStream}
)

// startGET opens the standalone GET stream, once.
func (c *streamableChannel) startGET() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getDone != nil || c.closed || c.getHeld {
		return
	}
	c.getDone = make(chan struct{})
	go c.listen()
}

// holdGET says whether the GET stream is held back (a stateless MCP
// revision has none); released, it opens after the next POST.
func (c *streamableChannel) holdGET(held bool) {
	c.mu.Lock()
	c.getHeld = held
	c.mu.Unlock()
	if !held {
		c.startGET()
	}
}

// listen reads the standalone GET stream until Close, reopening it when it
// ends; it stops for good when the server declines it.
func (c *streamableChannel) listen() {
	defer close(c.getDone)
	r := &sse.Reader{Limit: int(min(c.limit, 1<<31-1))}
	delay := time.Second
	for {
		resp, err := c.do(c.ctx, http.MethodGet, nil, r.LastID)
		var he *HTTPError
		switch {
		case c.ctx.Err() != nil:
			return
		case errors.As(err, &he):
			if he.StatusCode != http.StatusMethodNotAllowed {
				c.srv.logger().Debug("jsonrpc: the server declined the GET stream", "error", err)
			}
			return
		case err != nil:
			c.srv.logger().Debug("jsonrpc: the GET stream failed; retrying", "error", err, "delay", delay)
		default:
			if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != eventStream {
				closeBody(resp.Body)
				return
			}
			r = r.Resume(resp.Body)
			err := c.readStream(c.ctx, r, 0, "")
			resp.Body.Close()
			if err != nil && c.ctx.Err() == nil {
				c.srv.logger().Warn("jsonrpc: the GET stream failed", "error", err)
			}
			if r.Retry > 0 {
				delay = r.Retry
			}
		}
		if !sleepCtx(c.ctx, delay) {
			return
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// sleepCtx waits for d or ctx's end, and reports whether d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close cancels the requests in flight, ends the session with DELETE and
// stops the GET stream.
func (c *streamableChannel) Close() error {
	c.close.Do(func() {
		c.mu.Lock()
		c.closed = true
		session, version, getDone := c.session, c.version, c.getDone
		c.mu.Unlock()
		c.cancel()
		if session != "" {
			ctx, cancel := context.WithTimeout(context.Background(), streamableCloseTimeout)
			if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil); err == nil {
				for k, v := range c.header {
					req.Header[k] = v
				}
				req.Header.Set(sessionHeader, session)
				if version != "" {
					req.Header.Set(versionHeader, version)
				}
				if resp, err := c.hc.Do(req); err == nil {
					closeBody(resp.Body)
				}
			}
			cancel()
		}
		if getDone != nil {
			<-getDone
		}
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
	})
	return nil
}

// countMessages counts the calls (requests with an id) and the responses
// in a message.
func countMessages(msg []byte) (calls, responses int) {
	r := scanPool.Get().(*scanState)
	defer func() { r.sc.Data = nil; scanPool.Put(r) }()
	r.m.Limit = 0
	if r.sc.Parse(msg, DefaultMaxDepth, &r.m) != nil {
		return 0, 0
	}
	for i := range r.m.Elems {
		switch e := &r.m.Elems[i]; e.Kind {
		case wire.KindRequest:
			if e.ID.Present() {
				calls++
			}
		case wire.KindResponse, wire.KindBadResponse:
			responses++
		}
	}
	return calls, responses
}

// initializeID returns the id of msg when it is a single "initialize"
// request, else "".
func initializeID(msg []byte) string {
	r := scanPool.Get().(*scanState)
	defer func() { r.sc.Data = nil; scanPool.Put(r) }()
	r.m.Limit = 0
	if r.sc.Parse(msg, DefaultMaxDepth, &r.m) != nil || r.m.Batch {
		return ""
	}
	if e := &r.m.Elems[0]; e.Kind == wire.KindRequest && e.ID.Present() && string(e.MethodName(msg)) == "initialize" {
		return string(e.ID.Of(msg))
	}
	return ""
}

// initializedVersion returns the protocolVersion of msg's result when msg
// is the successful response with id, and the version is a plausible
// header value (visible ASCII, at most 64 bytes); else "".
func initializedVersion(msg []byte, id string) string {
	r := scanPool.Get().(*scanState)
	defer func() { r.sc.Data = nil; scanPool.Put(r) }()
	r.m.Limit = 0
	if r.sc.Parse(msg, DefaultMaxDepth, &r.m) != nil || r.m.Batch {
		return ""
	}
	e := &r.m.Elems[0]
	if e.Kind != wire.KindResponse || string(e.ID.Of(msg)) != id || !e.Result.Present() {
		return ""
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if unmarshalLoose(e.Result.Of(msg), &res) != nil || len(res.ProtocolVersion) > 64 {
		return ""
	}
	for _, b := range []byte(res.ProtocolVersion) {
		if b <= ' ' || b > '~' {
			return ""
		}
	}
	return res.ProtocolVersion
}
