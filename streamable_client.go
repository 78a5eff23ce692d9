package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/streamable"
)

// WithStreamableHTTP makes Dial of an http:// or https:// URL return a
// Streamable HTTP client (see [DialStreamableHTTP]) instead of an
// [HTTPClient].
func WithStreamableHTTP() DialOption { return func(c *dialConfig) { c.streamable = true } }

// DialStreamableHTTP returns a client of the Streamable HTTP transport
// (MCP 2025-11-25) at url: a [Conn], so that Call, Notify, Batch, Subscribe
// and the server's calls work as on a stream. Nothing is sent before the
// first call (ctx is not used).
//
// Each message goes in a POST accepting application/json and
// text/event-stream; an event stream's "message" events are the server's
// notifications and requests during the call, served by WithHandler's
// handler (answers POSTed back; without one, requests get -32601), then the
// response. A call's context ending abandons its POST. A reply due and
// missing (202, an empty body, a stream ended early) is an error saying so;
// a status other than 2xx is an *HTTPError.
//
// The first Mcp-Session-Id the server sends is sent with every later
// request, and so is an "initialize" result's protocolVersion as
// Mcp-Protocol-Version (unless WithHeader sets one); a 404 to a request
// carrying the session forgets it. Close ends the session with DELETE
// (bounded by 5 s) and cancels the requests in flight.
//
// After the first successful POST the client opens the standalone GET
// stream once (a server that declines it is not asked again), and reopens
// it when it ends, with Last-Event-ID when the server sent event ids, after
// its retry: delay (default 1 s, doubling up to 30 s while it carries
// nothing). A POST's stream cut before its response is resumed the same way
// when it carried event ids (at most 3 attempts); without ids the call fails.
//
// With WithMCPVersion the client is an MCP client that finds the server's
// era (MCP 2026-07-28, stateless, or 2025-11-25 with the session above)
// and speaks it; see mcpclient.go and docs/mcp.md.
//
// The options that apply are in the package doc's table; WithMaxMessageSize
// bounds a JSON answer and one event (over it: ErrMessageTooLarge).
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
	var c *Conn
	ch := streamable.NewClient(streamable.ClientConfig{
		URL: hc.url, HTTP: hc.hc, Own: hc.own, Header: hc.header, Limit: hc.maxSize,
		ReadReply: func(resp *http.Response, wantReply bool) ([]byte, error) {
			defer httpx.DrainClose(resp.Body)
			return hc.readReply(resp, nil, wantReply)
		},
		LendReply:     func(resp *http.Response, id []byte, end func()) bool { return c.lendReply(resp, id, end) },
		Failed:        func(resp *http.Response) error { return newHTTPError(resp) },
		ContextHeader: headerFromContext,
		Logger:        srv.logger,
		Closed:        ErrClosed,
	}, cfg.mcpVersion != "") // an MCP client: no GET stream before the era is known
	c = NewConn(ch, srv)
	c.strictResults = cfg.strictResults
	c.inv = cfg.chain(direct{c})
	return withStreamMCP(c, cfg)
}

// contextSender is implemented by a Channel whose Send can follow the
// context of the caller whose message it carries (Streamable HTTP: the
// POST of a call is abandoned when the call's context ends).
type contextSender interface {
	SendContext(ctx context.Context, msg []byte) error
}

// sendFor sends a message of ours (a call, a notification, a batch) for a
// caller whose context is ctx.
func (c *Conn) sendFor(ctx context.Context, msg []byte) error {
	if cs, ok := c.ch.(contextSender); ok {
		return cs.SendContext(ctx, msg)
	}
	return c.ch.Send(msg)
}

// lendReply lends the JSON answer to a POST to the CallIter call it
// answers (id), which decodes it as it arrives, as an HTTPClient's
// CallIter does; it reports false when no such call waits.
func (c *Conn) lendReply(resp *http.Response, rawID []byte, end func()) bool {
	id, ok := parseOurID(rawID)
	if !ok || c.iterCalls.Load() == 0 {
		return false
	}
	c.mu.Lock()
	p, ok := c.pending.Get(id)
	if ok = ok && p.iter; ok {
		c.pending.Take(id)
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	body, release, err := streamBody(resp)
	done := func() { release(); resp.Body.Close(); end() }
	if err != nil {
		done()
		p.ch <- callResult{err: err}
		return true
	}
	p.ch <- callResult{lent: &lentMessage{id: id, l: lentBody{body, done}, done: make(chan struct{})}}
	return true
}

// lentBody is an answer's body lent to a CallIter call (lineLender's
// reading side); Discard closes it, unread or not.
type lentBody struct {
	r   io.Reader
	end func()
}

func (b lentBody) Lent() io.Reader              { return b.r }
func (b lentBody) Discard() error               { b.end(); return nil }
func (lentBody) SetLendCheck(framing.LendCheck) {}
func (lentBody) CancelLent()                    {} // the request follows the call's context
func (lentBody) ResumeLent()                    {}
func (lentBody) InterruptsWhileLent() int       { return 0 }
