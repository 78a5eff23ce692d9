package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/convention"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Convention selects how a [Server] and the connections it serves cancel
// requests and report progress: LSP's (3.17) or MCP's (2025-11-25) messages,
// never both. See Server.Convention.
type Convention uint8

const (
	// ConventionNone: no cancellation or progress messages. A call's
	// context still bounds it locally.
	ConventionNone Convention = iota
	// ConventionLSP: $/cancelRequest {"id"} cancels a request, which is
	// then answered with CodeLSPRequestCancelled; progress goes out as
	// $/progress {"token","value"} for the request's params.workDoneToken.
	ConventionLSP
	// ConventionMCP: notifications/cancelled {"requestId","reason"}
	// cancels a request, which is then not answered at all; progress goes
	// out as notifications/progress for params._meta.progressToken.
	ConventionMCP
)

// CodeLSPRequestCancelled is LSP's RequestCancelled: the answer to a
// request the peer cancelled with $/cancelRequest (ConventionLSP).
const CodeLSPRequestCancelled = -32800

// Method names of the conventions.
const (
	MethodLSPCancel   = "$/cancelRequest"
	MethodLSPProgress = "$/progress"
	MethodMCPCancel   = "notifications/cancelled"
	MethodMCPProgress = "notifications/progress"
)

// methods returns the methods of cv's cancel and progress notifications
// ("" for ConventionNone).
func (cv Convention) methods() (cancel, progress string) {
	switch cv {
	case ConventionLSP:
		return MethodLSPCancel, MethodLSPProgress
	case ConventionMCP:
		return MethodMCPCancel, MethodMCPProgress
	}
	return "", ""
}

// errPeerCancelled is the cause of a handler's context cancelled by the peer.
var errPeerCancelled = errors.New("jsonrpc: the peer cancelled the request")

var errLSPCancelled = &Error{Code: CodeLSPRequestCancelled, Message: "request cancelled"}

// callCtx is the context of a handler of a request whose Server follows a
// convention, served on a Conn or at once for a Streamable HTTP POST: the
// request can be cancelled by the peer, and progress reported against its
// token.
type callCtx struct {
	context.Context
	cancel context.CancelCauseFunc
	in     inflight // where it is kept in flight
	conv   Convention

	progress convention.Progress // its params, token and the reports made
}

type requestKey struct{}

func (r *callCtx) Value(key any) any {
	if key == (requestKey{}) {
		return r
	}
	return r.Context.Value(key)
}

// inflight keeps the contexts of the peer's requests being served (a Conn,
// a Streamable HTTP POST served at once), so that its cancels find them.
type inflight interface {
	// endRequest forgets id once its handler has returned; it reports
	// whether the peer cancelled it.
	endRequest(id ID) (cancelled bool)
}

// atOnceHost is the optional capability of a message's context whose
// requests are served at once, with no Conn (a Streamable HTTP POST's):
// it keeps them in flight for the peer's cancels (startRequest; nil: not
// kept), takes those cancels, of the same batch too (cancelIncoming, as
// Conn's), opens a connection to the peer for a handler that reaches it
// (open; nil: none), and runs f once the message is answered (afterReply).
type atOnceHost interface {
	startRequest(ctx context.Context, id ID, params []byte) *callCtx
	cancelIncoming(id ID) bool
	open() *Conn
	afterReply(f func()) bool
}

// newRequestCtx returns the context of a request kept in flight by in
// under convention cv.
func newRequestCtx(ctx context.Context, cv Convention, in inflight, params []byte) *callCtx {
	inner, cancel := context.WithCancelCause(ctx)
	return &callCtx{Context: inner, cancel: cancel, in: in, conv: cv,
		progress: convention.Progress{Conv: convention.Convention(cv), Params: params, TokenOf: progressToken}}
}

// startRequest makes the context of request id (nil: none) under s's
// Convention, kept in flight where the peer's cancel finds it: on conn, or
// on the Streamable HTTP POST that ctx's request is served at once for.
func (s *Server) startRequest(ctx context.Context, conn *Conn, id ID, params []byte) *callCtx {
	if id.IsZero() || s.Convention == ConventionNone {
		return nil
	}
	if conn != nil {
		return conn.startRequest(ctx, id, params)
	}
	if h, ok := ctx.Value(connKey{}).(atOnceHost); ok {
		return h.startRequest(ctx, id, params)
	}
	return nil
}

// cancelIncoming cancels the peer's request id if it is being served, or
// read and waiting to be; it reports whether that cancelled it (false for
// unknown ids, for requests already answered and for a second cancel).
func (c *Conn) cancelIncoming(id ID) bool {
	c.mu.Lock()
	r := c.inflight.get(id.key())
	if r == nil && c.queued.Cancel(id.key()) {
		c.mu.Unlock()
		return true // read before the cancel, not yet started: it starts cancelled
	}
	c.mu.Unlock()
	return r.cancelByPeer()
}

// cancelByPeer cancels r (nil: none) for the peer; it reports whether that
// cancelled it (false for a second cancel).
func (r *callCtx) cancelByPeer() bool {
	if r == nil || context.Cause(r) == errPeerCancelled {
		return false
	}
	r.cancel(errPeerCancelled)
	return context.Cause(r) == errPeerCancelled
}

// end is called once the handler has returned, before its response is
// rendered: progress reports stop (LSP's "end" goes out), and end reports
// whether the peer cancelled the request.
func (r *callCtx) end() (cancelled bool) {
	if r == nil {
		return false
	}
	cancelled = context.Cause(r) == errPeerCancelled
	r.progress.End(cancelled, r.send)
	r.cancel(nil)
	return cancelled
}

// send sends the progress notification with params p (under r.progress's
// lock).
func (r *callCtx) send(p []byte) error {
	_, method := r.conv.methods()
	return ConnFromContext(r).Notify(r, method, json.RawMessage(p))
}

// ReportProgress tells the caller of the request whose handler received ctx
// how far the handler has got, in the Server's Convention, against the
// progress token the caller sent. It does nothing and returns nil without a
// token, outside a handler served on a connection, without a convention,
// and once the handler has returned.
//
// progress must exceed the previous report's (MCP asks it to increase), or
// it is refused with ErrProgressNotIncreasing and nothing is sent. total is
// the expected final value, zero or less when unknown; message is optional.
//
// MCP: notifications/progress {"progressToken","progress","total","message"}
// with the params._meta.progressToken of the request, echoed byte for byte.
// LSP: $/progress {"token","value"} with the params.workDoneToken of the
// request: the first report is the work-done "begin" (message is its
// title), later ones are "report"s, and an "end" follows the handler's
// return, before the response; the percentage is 100·progress/total when
// total is known, else progress, clamped to 0..100.
//
// ReportProgress may be called from any goroutine; each call waits until
// its notification is sent.
func ReportProgress(ctx context.Context, progress, total float64, message string) error {
	r, _ := ctx.Value(requestKey{}).(*callCtx)
	if r == nil {
		return nil
	}
	return r.progress.Report(progress, total, message, r.send)
}

// progressToken returns the progress token in params (MCP:
// _meta.progressToken, LSP: workDoneToken), a copy of its bytes, or nil
// when there is none or it is neither a string nor an integer.
func progressToken(params []byte, cv convention.Convention) []byte {
	tok := convention.TokenOf(params, cv)
	if id, ok := RawID(tok); !ok || id.IsNull() || (tok[0] != '"' && !canonicalInt(string(tok))) {
		return nil
	}
	return append([]byte(nil), tok...)
}

// conventionMessage handles a notification of s's convention: a cancel
// (of a request served on conn, or at once by an atOnceHost: see
// cancelledID) or, with Server.OnProgress, a progress report. It reports
// whether the notification was one. A Conn calls it on its read
// goroutine: a cancel needs no handler slot, and progress reports reach
// OnProgress in order.
func (s *Server) conventionMessage(ctx context.Context, conn *Conn, name, params []byte) bool {
	cv := s.Convention
	if id, ok := s.cancelledID(name, params); ok {
		h, _ := ctx.Value(connKey{}).(atOnceHost)
		switch {
		case id.IsZero():
		case conn != nil:
			conn.cancelIncoming(id)
		case h != nil:
			h.cancelIncoming(id)
		}
		return true
	}
	if _, progress := cv.methods(); string(name) != progress || s.OnProgress == nil {
		return false
	}
	if p, ok := convention.ParseProgress(params, convention.Convention(cv)); ok {
		s.OnProgress(ctx, Progress(p))
	}
	return true
}

// cancelledID returns the id a notification name (with params) cancels
// when it is a cancel of s's convention (ok false when it is not one; a
// cancel naming no valid id is logged and its id is zero).
func (s *Server) cancelledID(name, params []byte) (id ID, ok bool) {
	if cancel, _ := s.Convention.methods(); cancel == "" || string(name) != cancel {
		return ID{}, false
	}
	if id, ok = RawID(convention.CancelledID(params, convention.Convention(s.Convention))); !ok || id.IsNull() {
		s.logger().Debug("jsonrpc: ignoring a cancel notification without a valid id", "method", string(name))
		return ID{}, true
	}
	return id, true
}

// Progress is a progress notification received (see Server.OnProgress).
type Progress struct {
	// Token is the progress token as sent, byte for byte: it is the token
	// the caller put in its request (MCP _meta.progressToken, LSP
	// workDoneToken).
	Token json.RawMessage
	// Progress is MCP's progress, or LSP's percentage (0 when absent).
	Progress float64
	// Total is MCP's total, 0 when unknown (LSP: 100 when a percentage is given).
	Total float64
	// Message is the message (LSP: the title of a "begin" when it has no message).
	Message string
	// Kind is LSP's work-done kind: "begin", "report" or "end" ("" for MCP).
	Kind string
	// Params are the notification's params as received.
	Params json.RawMessage
}

// sendCancel tells the peer that our call id is cancelled, in the
// convention of c's Server (nothing without one): ctx, the call's, has ended.
func (c *Conn) sendCancel(ctx context.Context, id []byte) {
	cv := c.srv.Convention
	if cv == ConventionNone {
		return
	}
	p := convention.CancelParams(convention.Convention(cv), id, context.Cause(ctx).Error())
	cancel, _ := cv.methods()
	msg, err := codec.AppendRequest(nil, nil, cancel, json.RawMessage(p), nil)
	if err == nil {
		c.sent(c.ch.Send(msg)) // a failure to write ends the connection
	}
}

// WithConvention makes the connection follow a cancellation and progress
// convention (see Server.Convention): a call whose context ends sends the
// server the convention's cancel (LSP $/cancelRequest, MCP
// notifications/cancelled), so that the server stops its work; the
// peer's cancels then reach the WithHandler handler's contexts.
func WithConvention(cv Convention) DialOption { return func(c *dialConfig) { c.convention = cv } }

// WithProgress has f receive the progress notifications the server sends
// for our calls, in the convention set with WithConvention (put the token
// in the call's params: MCP _meta.progressToken, LSP workDoneToken; f
// tells calls apart by Progress.Token). It works beside WithHandler, as
// Server.OnProgress does beside Server.Handler.
func WithProgress(f func(ctx context.Context, p Progress)) DialOption {
	return func(c *dialConfig) { c.onProgress = f }
}

// unqueue forgets t's ids, queued by start under a Convention (so that the
// peer can cancel them), once t has been served.
func (c *Conn) unqueue(t *task) {
	if c.srv.Convention == ConventionNone {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.eachID(c.queued.Done)
}

func (t *task) eachID(f func(k string)) {
	eachID(t.data, &t.env, t.batch, func(k string) bool { f(k); return true })
}

// eachID calls f with the id key of each request in data that has an id
// (e, or batch's elements when batch is not nil) until f returns false.
func eachID(data []byte, e *wire.Envelope, batch []wire.Envelope, f func(k string) bool) {
	if batch == nil {
		if e != nil && e.ID.Present() {
			f(idOf(e, data).key())
		}
		return
	}
	for i := range batch {
		if batch[i].ID.Present() && !f(idOf(&batch[i], data).key()) {
			return
		}
	}
}
