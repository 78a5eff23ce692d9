package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
)

// closeTimeout bounds the DELETE that ends a session at Close.
const closeTimeout = 5 * time.Second

// ClientConfig is what a Client needs: its endpoint and HTTP settings, and
// the few things it asks of the package that uses it.
type ClientConfig struct {
	URL    string
	HTTP   *http.Client
	Own    *http.Transport // the client's own transport, whose idle connections Close closes (nil: none)
	Header http.Header     // sent with every request
	Limit  int64           // the bound on a JSON answer and on one event

	// ReadReply reads a JSON answer (a 2xx response that is no event
	// stream) under Limit and closes its body; wantReply says that a
	// response is due (an answer without one is then an error).
	ReadReply func(resp *http.Response, wantReply bool) ([]byte, error)
	// LendReply is offered the JSON answer (2xx, no event stream) to a
	// POST that carried one call, id (as sent), before anything of it is
	// read. When it takes it (true) the response is its own: it reads the
	// body as it arrives, closes it, then calls end, which ends the request.
	LendReply func(resp *http.Response, id []byte, end func()) bool
	// Failed returns the error of a response whose status is not 2xx; the
	// Client closes its body after.
	Failed func(resp *http.Response) error
	// ContextHeader returns the headers the context of a call adds to its
	// request (nil: none).
	ContextHeader func(ctx context.Context) http.Header
	// Logger returns the logger of what cannot be reported to a caller.
	Logger func() *slog.Logger
	// Closed is the error of Recv, and of sends, once the Client is closed.
	Closed error
}

// Client is the Channel of a Streamable HTTP client: each message it sends
// is a POST of its own, whose answer (one JSON message or an event stream)
// it hands, message by message, to Recv. It keeps the session the server
// names (Mcp-Session-Id) and the protocol version of the result of an
// initialize call (Mcp-Protocol-Version), reads the standalone GET stream
// once a POST succeeded, resumes a stream cut off when its events carry
// ids, and ends the session with DELETE at Close. Send, SendQueued and
// SendContext may be called concurrently with each other and with Recv.
type Client struct {
	cfg ClientConfig

	ctx    context.Context // ends at Close, and with it every request
	cancel context.CancelFunc
	in     chan []byte // messages received, for Recv

	mu      sync.Mutex
	session string
	version string        // the protocolVersion the server's initialize result named (MCP)
	getDone chan struct{} // closed when the GET stream's goroutine ends; nil before it starts
	getHeld bool          // no GET stream (see HoldGET)
	closed  bool
	close   sync.Once
}

// NewClient returns the Client of cfg; nothing is sent before the first
// message. held holds the GET stream back until HoldGET(false).
func NewClient(cfg ClientConfig, held bool) *Client {
	c := &Client{cfg: cfg, in: make(chan []byte, 16), getHeld: held}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c
}

// Recv returns the next message the server sent, on any answer or stream.
func (c *Client) Recv() ([]byte, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.ctx.Done():
		return nil, c.cfg.Closed
	}
}

// Send POSTs a message the connection sends on its own: a reply to one of
// the server's requests. A failure cannot be reported to anyone who could
// act on it and ends nothing: it is logged.
func (c *Client) Send(msg []byte) error {
	if err := c.SendContext(c.ctx, msg); err != nil {
		if c.ctx.Err() != nil {
			return c.cfg.Closed
		}
		c.cfg.Logger().Warn("jsonrpc: could not POST a reply to the server", "error", err)
	}
	return nil
}

// SendQueued is Send: each reply is a POST of its own, so none waits for another.
func (c *Client) SendQueued(msg []byte, queued func()) error {
	if queued != nil {
		queued()
	}
	return c.Send(msg)
}

// SendContext POSTs msg for a caller whose context is ctx (its end
// abandons the POST) and hands the messages of the answer to Recv. It
// returns once the responses msg calls for have been read.
func (c *Client) SendContext(ctx context.Context, msg []byte) error {
	out := outline(msg)
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	end := func() { stop(); cancel() }
	lent := false
	defer func() {
		if !lent {
			end()
		}
	}()
	resp, err := c.do(rctx, http.MethodPost, msg, "")
	if err != nil {
		return c.failure(ctx, err)
	}
	defer c.startGET() // once the answer is read: with the session and version it set
	if isEventStream(resp.Header.Get("Content-Type")) {
		// Not drained: a stream the server keeps open after the response
		// is closed.
		defer resp.Body.Close()
		return c.failure(ctx, c.readStream(rctx, sse.NewReader(resp.Body, int(min(c.cfg.Limit, 1<<31-1))), out.calls, out.init))
	}
	if resp.StatusCode == http.StatusAccepted {
		resp.ContentLength = 0 // accepted: no reply, whatever the body
	}
	// Lent to its one call, which reads it as it arrives; not an
	// initialize's answer, read here for its version.
	if out.lone != nil && out.init == "" && resp.ContentLength != 0 {
		if lent = c.cfg.LendReply(resp, out.lone, end); lent {
			return nil
		}
	}
	body, err := c.cfg.ReadReply(resp, out.calls > 0)
	if err != nil || len(body) == 0 {
		return c.failure(ctx, err)
	}
	return c.failure(ctx, c.received(rctx, body, out.init))
}

// failure maps the error of an exchange for a caller whose context is ctx:
// the caller's own context ending, or Close, say so plainly.
func (c *Client) failure(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case c.ctx.Err() != nil:
		return c.cfg.Closed
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}

// readStream hands the messages of an event stream to Recv until due
// responses have been read (due 0: until the stream ends). A stream cut
// before them is resumed (see resume).
func (c *Client) readStream(ctx context.Context, r *sse.Reader, due int, init string) error {
	got, resumed := 0, 0
	for due == 0 || got < due {
		ev, err := r.Next()
		if err != nil {
			switch {
			case errors.Is(err, sse.ErrEventTooLarge) || ctx.Err() != nil:
				return err
			case due == 0:
				return nil // the GET stream ended
			}
			resp, err := c.resume(ctx, r, resumed, fmt.Sprintf("%d of %d responses read", got, due), err)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			r = r.Resume(resp.Body)
			resumed++
			continue
		}
		if (ev.Type != "" && ev.Type != "message") || len(ev.Data) == 0 {
			continue // another kind of event, or MCP's priming event (an id, no message)
		}
		msg := bytes.Clone(ev.Data)
		if err := c.received(ctx, msg, init); err != nil {
			return err
		}
		got += outline(msg).responses
	}
	return nil
}

// resume reopens a POST's stream that cut (an error) ended before its
// responses were read (progress says how many were): with GET and
// Last-Event-ID after the stream's retry delay (default 1 s), when its
// events carried ids, at most 3 times (resumed so far).
func (c *Client) resume(ctx context.Context, r *sse.Reader, resumed int, progress string, cut error) (*http.Response, error) {
	if !r.HasID || resumed == 3 {
		return nil, fmt.Errorf("%w (%s): %w", sse.ErrStreamCut, progress, cut)
	}
	wait := r.Retry
	if wait <= 0 {
		wait = time.Second
	}
	if !sleepCtx(ctx, wait) {
		return nil, ctx.Err()
	}
	resp, err := c.do(ctx, http.MethodGet, nil, r.LastID)
	if err != nil {
		return nil, fmt.Errorf("%w (%s); resuming it: %w", sse.ErrStreamCut, progress, err)
	}
	return resp, nil
}

// received hands a message received to Recv. When it answers our
// initialize request (init is its id), the protocolVersion of its result
// goes in the Mcp-Protocol-Version header of every later request, as MCP
// asks.
func (c *Client) received(ctx context.Context, msg []byte, init string) error {
	if init != "" {
		if v := initializedVersion(msg, init); v != "" {
			c.mu.Lock()
			c.version = v
			c.mu.Unlock()
		}
	}
	select {
	case c.in <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// do sends one request of the client and returns its response when the
// status is 2xx, keeping the session the server names.
func (c *Client) do(ctx context.Context, method string, body []byte, lastEventID string) (*http.Response, error) {
	resp, session, err := c.roundTrip(ctx, method, body, lastEventID)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if resp.StatusCode == http.StatusNotFound && session != "" {
			c.mu.Lock()
			if c.session == session {
				c.session = "" // ended by the server: the next initialization starts a new one
			}
			c.mu.Unlock()
		}
		defer resp.Body.Close()
		return nil, c.cfg.Failed(resp)
	}
	return resp, nil
}

// roundTrip sends one request of the client, with the session it sent.
func (c *Client) roundTrip(ctx context.Context, method string, body []byte, lastEventID string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("jsonrpc: %w", err)
	}
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	}
	maps.Copy(req.Header, c.cfg.Header)
	maps.Copy(req.Header, c.cfg.ContextHeader(ctx))
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
		req.Header.Set(mcp.SessionHeader, session)
	}
	if version != "" && req.Header.Get(mcp.VersionHeader) == "" {
		req.Header.Set(mcp.VersionHeader, version)
	}
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return nil, session, err
	}
	if id := resp.Header.Get(mcp.SessionHeader); id != "" {
		c.mu.Lock()
		if c.session == "" {
			c.session = id
		}
		c.mu.Unlock()
	}
	return resp, session, nil
}

var (
	jsonContentType     = []string{"application/json"}
	bothAccepted        = []string{"application/json, text/event-stream"}
	eventStreamAccepted = []string{sse.ContentType}
)

// startGET opens the standalone GET stream, once.
func (c *Client) startGET() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.getDone != nil || c.closed || c.getHeld {
		return
	}
	c.getDone = make(chan struct{})
	go c.listen()
}

// HoldGET says whether the GET stream is held back (a stateless MCP
// revision has none, and an MCP client has none before it knows its
// server's era); released, it opens after the next POST.
func (c *Client) HoldGET(held bool) {
	c.mu.Lock()
	c.getHeld = held
	c.mu.Unlock()
	if !held {
		c.startGET()
	}
}

// listen reads the standalone GET stream until Close, reopening it when it
// ends; it stops for good when the server declines it.
func (c *Client) listen() {
	defer close(c.getDone)
	r := &sse.Reader{Limit: int(min(c.cfg.Limit, 1<<31-1))}
	delay := time.Second
	for {
		resp, _, err := c.roundTrip(c.ctx, http.MethodGet, nil, r.LastID)
		switch {
		case c.ctx.Err() != nil:
			if err == nil {
				resp.Body.Close()
			}
			return
		case err != nil:
			c.cfg.Logger().Debug("jsonrpc: the GET stream failed; retrying", "error", err, "delay", delay)
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			if resp.StatusCode != http.StatusMethodNotAllowed {
				c.cfg.Logger().Debug("jsonrpc: the server declined the GET stream", "error", c.cfg.Failed(resp))
			}
			resp.Body.Close()
			return
		default:
			if !isEventStream(resp.Header.Get("Content-Type")) {
				resp.Body.Close()
				return
			}
			r = r.Resume(resp.Body)
			err := c.readStream(c.ctx, r, 0, "")
			resp.Body.Close()
			if err != nil && c.ctx.Err() == nil {
				c.cfg.Logger().Warn("jsonrpc: the GET stream failed", "error", err)
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

// Close cancels the requests in flight, ends the session with DELETE
// (bounded by 5 s) and stops the GET stream.
func (c *Client) Close() error {
	c.close.Do(func() {
		c.mu.Lock()
		c.closed = true
		session, getDone := c.session, c.getDone
		c.mu.Unlock()
		c.cancel()
		if session != "" {
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			if resp, _, err := c.roundTrip(ctx, http.MethodDelete, nil, ""); err == nil {
				resp.Body.Close()
			}
			cancel()
		}
		if getDone != nil {
			<-getDone
		}
		if c.cfg.Own != nil {
			c.cfg.Own.CloseIdleConnections()
		}
	})
	return nil
}
