package streamable

import (
	"cmp"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// Replier is what an Answer needs of the server's reply.
type Replier interface {
	// ReplyHeader adds the headers the handlers set to h.
	ReplyHeader(h http.Header)
	// WriteJSON writes msg as the JSON body of the answer (compressed as
	// the server's replies are), with its Content-Type.
	WriteJSON(w http.ResponseWriter, msg []byte) error
}

// Answer is the answer to one POST carrying requests: one JSON body, or an
// event stream once the server sends the client anything before the reply
// (or always). Its exported fields say what it is made of, and its methods
// may be called concurrently.
type Answer struct {
	W        http.ResponseWriter // the POST's response
	Events   *sse.Stream         // the answer's event stream, once it is one
	Reply    Replier             // the reply's headers and JSON body
	WithData bool                // the client takes MCP 2025-11-25's priming event
	Always   bool                // an event stream from the start (SSEAlways)
	Session  *Session            // the POST's session (nil: none), whose Commit the reply passes

	mu       sync.Mutex
	sse      bool // the response is an event stream
	finished bool // the reply has been written, or the answer let go (LetGo)
}

// Write writes msg: the reply to the POST's message (reply true), which
// ends the answer, or a call or notification to the client, which goes as
// an event (the answer becomes an event stream). Once the answer has
// ended it fails with sse.ErrEnded.
func (a *Answer) Write(msg []byte, reply bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished {
		return sse.ErrEnded
	}
	if reply && !a.sse {
		msg = a.Session.Commit(msg, a.W.Header())
	} else if reply {
		msg = a.Session.Commit(msg, nil) // the session's header is out
	}
	if !a.sse && (!reply || a.Always) {
		a.startEvents()
	}
	var err error
	if a.sse {
		err = a.Events.Send(msg)
	} else {
		h := a.W.Header()
		a.Reply.ReplyHeader(h)
		h.Set("Content-Length", strconv.Itoa(len(msg))) // compressed: WriteJSON sets the new length
		if err = a.Reply.WriteJSON(a.W, msg); err == nil {
			http.NewResponseController(a.W).Flush() // complete: a handler past its timeout may still hold the POST (a writer that cannot flush: at its end)
		}
	}
	if reply {
		a.finish()
	}
	return err
}

// Unanswered ends the answer without a response (MCP: every request of
// the POST was cancelled): an event stream with no event when nothing was
// sent yet.
func (a *Answer) Unanswered() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished {
		return
	}
	if !a.sse {
		a.startEvents()
	}
	a.finish()
}

// EndResponse ends the HTTP response before the reply, which the event
// store keeps with the answer's other events for the client to resume
// with GET and Last-Event-ID (MCP's SSE polling); the answer becomes an
// event stream (primed) first if it is not one yet. It reports false,
// doing nothing, when the events are not kept or the answer has ended.
func (a *Answer) EndResponse() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished || !a.Events.Keeps() {
		return false
	}
	if !a.sse {
		a.startEvents()
	}
	a.Events.Detach()
	return true
}

// finish marks the reply written and ends the answer (a.mu held).
func (a *Answer) finish() {
	a.finished = true
	a.Events.End()
}

// LetGo lets the answer's HTTP response go, once its stream's Hold has
// returned, while the POST's requests may still be served. The call goes
// on into the event store when the answer can be resumed (an event stream
// that keeps its events); else the answer ends unwritten and LetGo reports
// true: its reply can reach the client no more. Nothing writes to the
// response after LetGo.
func (a *Answer) LetGo() (cut bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.finished || a.sse && a.Events.Keeps() {
		return false
	}
	a.finish()
	return true
}

// startEvents makes the answer an event stream (a.mu held).
func (a *Answer) startEvents() {
	a.sse = true
	a.Events.Begin(a.Reply.ReplyHeader, a.WithData)
}

// Inbox is the receiving side of the Channel of a server's connection (a
// POST's, a session's): the messages POSTed to it, until it is shut. Init
// names its session; its channels are made on first use (a POST served at
// once is routed for cancels, and its inbox mostly never used). With
// SessionID it is half of a Target. Its methods may be called concurrently.
type Inbox struct {
	mu      sync.Mutex
	in      chan []byte   // nil until used
	closed  chan struct{} // nil until used or shut
	shut    bool
	session string
}

// shutUnused is the closed channel of an inbox shut before any use.
var shutUnused = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Init makes ready the inbox of a connection of session ("": none).
func (b *Inbox) Init(session string) { b.session = session }

// SessionID is the session of the inbox's connection.
func (b *Inbox) SessionID() string { return b.session }

// chans returns the inbox's channels, made on first use (in stays nil
// once shut: nothing is received any more).
func (b *Inbox) chans() (chan []byte, chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.in == nil && !b.shut {
		b.in = make(chan []byte, 4)
	}
	if b.closed == nil {
		b.closed = make(chan struct{})
	}
	return b.in, b.closed
}

// Recv returns the next message delivered; io.EOF once the inbox is shut.
func (b *Inbox) Recv() ([]byte, error) {
	in, closed := b.chans()
	select {
	case msg := <-in:
		return msg, nil
	case <-closed:
		return nil, io.EOF
	}
}

// Deliver passes a POSTed message (with answers to the connection's calls)
// to Recv; it is dropped once the inbox is shut.
func (b *Inbox) Deliver(data []byte) {
	in, closed := b.chans()
	select {
	case in <- data:
	case <-closed:
	}
}

// Shut closes the inbox; it reports whether this call did.
func (b *Inbox) Shut() (first bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return false
	}
	b.shut = true
	if b.closed == nil {
		b.closed = shutUnused // nothing to make
	} else {
		close(b.closed)
	}
	return true
}

// Close shuts the inbox.
func (b *Inbox) Close() error { b.Shut(); return nil }

// Closed is closed once the inbox is shut.
func (b *Inbox) Closed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed == nil {
		b.closed = make(chan struct{})
	}
	return b.closed
}

// maxRoutes bounds the keys of live routes: the high bits of our call ids.
const maxRoutes = 1 << 31

// Routes names the server's connections that call the client (a POST's, a
// session's) with keys that go in the high 32 bits of their call ids, so
// that the client's answers, POSTed apart, find their way back (Route). Its
// methods may be called concurrently.
type Routes struct {
	Limit int // the most routes live at once, a test's bound under 2^31-1 (0: 2^31-1, as many as there are keys); set before use

	mu   sync.Mutex
	m    map[uint64]Target
	next uint64
}

// Add gives v a free key; false when none is left.
func (r *Routes) Add(v Target) (uint64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) >= cmp.Or(r.Limit, maxRoutes-1) {
		return 0, false
	}
	if r.m == nil {
		r.m = map[uint64]Target{}
	}
	for {
		r.next = (r.next + 1) % maxRoutes
		if _, used := r.m[r.next]; r.next != 0 && !used {
			r.m[r.next] = v
			return r.next, true
		}
	}
}

// Remove frees key.
func (r *Routes) Remove(key uint64) {
	r.mu.Lock()
	delete(r.m, key)
	r.mu.Unlock()
}

// All returns the connections routed now.
func (r *Routes) All() []Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Values(r.m))
}

// SingleResponse returns a response of a POSTed batch as a message of its
// own (nil for a malformed one).
func SingleResponse(data []byte, e *wire.Envelope) []byte {
	if e.Kind != wire.KindResponse {
		return nil
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), e.ID.Of(data)...)
	if e.Result.Present() {
		b = append(append(b, `,"result":`...), e.Result.Of(data)...)
	} else {
		b = append(append(b, `,"error":`...), e.ErrObj.Of(data)...)
	}
	return append(b, '}')
}

// Target is a connection of the server that calls the client (a POST's, a
// session's): the client's answers to its calls, POSTed apart, are
// delivered to it.
type Target interface {
	Deliver(data []byte) // a POSTed message answering its calls
	SessionID() string   // its session ("": none)
}

// Route hands the responses in a POST (data, of session; elems are its
// elements, scanned) to the connections whose calls they answer, by
// the route key in the high 32 bits of the call id: only a connection of
// the same session gets them. A message that also holds requests or
// notifications (mixed) has those served by its own POST: each of its
// responses is routed as a message of its own.
func Route(r *Routes, data []byte, elems []wire.Envelope, session string, mixed bool) {
	seen := map[Target]bool{}
	for i := range elems {
		if k := elems[i].Kind; k != wire.KindResponse && k != wire.KindBadResponse {
			continue
		}
		n, ok := connrt.ParseID(elems[i].ID.Of(data))
		if !ok {
			continue
		}
		r.mu.Lock()
		target, ok := r.m[n>>32]
		r.mu.Unlock()
		if !ok || target.SessionID() != session {
			continue
		}
		if !mixed {
			if !seen[target] {
				seen[target] = true
				target.Deliver(data)
			}
			continue
		}
		if msg := SingleResponse(data, &elems[i]); msg != nil {
			target.Deliver(msg)
		}
	}
}
