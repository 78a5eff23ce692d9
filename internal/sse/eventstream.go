package sse

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// ErrBacklog is the error of a message sent while the outbox is full; the
// root package sets it to its own (jsonrpc.ErrStreamBacklog) in init.
var ErrBacklog = errors.New("jsonrpc: the session's outbox is full: the client does not read its GET stream (StreamableHTTPOptions.OutboxSize)")

// Stream is one event stream of a Streamable HTTP answer: a POST's,
// or a session's standalone GET stream. Each event is numbered and stored
// when the session keeps events (resumability), then written to the HTTP
// response attached at the time, if any. A client that lost its connection
// attaches a new response with GET and Last-Event-ID: the stored events it
// missed are written first, then the stream goes on there. Nothing is ever
// written to two responses.
//
// A POST's stream is written by its connection's sends (a handler's
// notifications wait for their own write); the standalone stream's
// messages wait in a bounded outbox, written by the goroutine that holds
// the GET response, so that a slow reader never blocks the sender.
type Stream struct {
	Num       uint64        // the stream's number in its session (0: standalone)
	Store     *Store        // the session's store (nil: none)
	Shared    *Shared       // the store of the server's instances (nil: none); with neither, events have no ids and cannot be resumed
	Retry     time.Duration // the retry: field at the start of a response (<= 0: none)
	Timeout   time.Duration // bounds one write (<= 0: none)
	KeepAlive time.Duration // comment interval on an idle response (<= 0: none)

	mu    sync.Mutex
	out   *Out // the attached response, nil while none
	ended bool // the stream is over: a response attached now gets what is stored, then ends

	// The standalone stream's outbox.
	queue    [][]byte
	queued   int // bytes
	maxQueue int
	maxBytes int
	wake     chan struct{}
}

// Out is one HTTP response carrying an event stream.
type Out struct {
	w       http.ResponseWriter
	rc      http.ResponseController // by value: no allocation of its own
	done    chan struct{}           // closed when detached: its holder returns
	started bool                    // the event-stream header is written
	last    time.Time               // of the last write
	buf     []byte
}

func NewOut(w http.ResponseWriter) *Out {
	return &Out{w: w, rc: *http.NewResponseController(w), done: make(chan struct{})}
}

// write writes b to o and flushes it, within the write timeout.
func (es *Stream) write(o *Out, b []byte) error {
	o.last = time.Now()
	if es.Timeout > 0 {
		o.rc.SetWriteDeadline(o.last.Add(es.Timeout))
	}
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.rc.Flush()
}

// start writes the event-stream header, then the retry field, and, when
// the stream keeps ids and prime is set, a priming event: an id naming the
// stream's current point and no message, so that a client cut before the
// first message can resume (MCP 2025-11-25). withData adds the empty data
// field MCP's revision asks for; older clients get the id alone, which a
// conforming reader takes without dispatching an event.
func (es *Stream) start(o *Out, header func(http.Header), prime, withData bool) error {
	h := o.w.Header()
	if header != nil {
		header(h)
	}
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	o.w.WriteHeader(http.StatusOK)
	o.started = true
	b, prime := o.buf[:0], prime && es.Keeps()
	if prime {
		b = append(append(append(b, "id: "...), EventID(es.Num, es.current())...), '\n')
	}
	if es.Retry > 0 {
		b = append(strconv.AppendInt(append(b, "retry: "...), es.Retry.Milliseconds(), 10), '\n')
	}
	if prime && withData {
		b = append(b, "data:\n"...)
	}
	if o.buf = b; len(b) == 0 {
		return o.rc.Flush()
	}
	return es.write(o, append(b, '\n'))
}

// writeEvent writes one message as an event with its id ("" for none).
func (es *Stream) writeEvent(o *Out, id string, msg []byte) error {
	b := o.buf[:0]
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...) // a JSON-RPC message has no newline: one data line
	b = append(b, "\n\n"...)
	err := es.write(o, b)
	if cap(b) <= 64<<10 {
		o.buf = b[:0]
	} else {
		o.buf = nil
	}
	return err
}

// Send stores msg as the stream's next event and writes it to the attached
// response. It fails only when the event is lost: written nowhere and not
// stored. A failed write detaches the response. An event that a shared
// store failed to keep is written without an id.
func (es *Stream) Send(msg []byte) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	id, kept, err := es.keep(msg)
	if es.out == nil {
		if !kept {
			return cmp.Or(err, ErrEnded)
		}
		return nil // stored: a resumed stream gets it
	}
	if werr := es.writeEvent(es.out, id, msg); werr != nil {
		es.detachLocked()
		if !kept {
			return cmp.Or(err, werr)
		}
	}
	return nil
}

// Enqueue puts msg in the standalone stream's outbox; it never waits.
// With Shared, the outbox is the shared store: msg is appended there (see
// enqueueShared).
func (es *Stream) Enqueue(msg []byte) error {
	if es.Shared != nil {
		return es.enqueueShared(msg)
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.ended {
		return ErrEnded
	}
	if len(es.queue) >= es.maxQueue || es.queued+len(msg) > es.maxBytes {
		return ErrBacklog
	}
	es.queue = append(es.queue, bytes.Clone(msg))
	es.queued += len(msg)
	select {
	case es.wake <- struct{}{}:
	default:
	}
	return nil
}

// flushLocked writes the outbox to o while o is attached (es.mu held).
func (es *Stream) flushLocked(o *Out) {
	for len(es.queue) > 0 && es.out == o {
		msg := es.queue[0]
		es.queue[0] = nil
		es.queue = es.queue[1:]
		es.queued -= len(msg)
		id, kept, _ := es.keep(msg)
		if err := es.writeEvent(o, id, msg); err != nil {
			es.detachLocked()
			if !kept { // not stored: it waits for the next GET
				es.queue = append([][]byte{msg}, es.queue...)
				es.queued += len(msg)
			}
		}
	}
	if len(es.queue) == 0 {
		es.queue = nil // let a burst's backing array go
	}
}

// ErrEnded is the error of a message sent on a stream that has ended; the
// root package sets it to its own (jsonrpc.ErrClosed) in init.
var ErrEnded = errors.New("jsonrpc: the event stream has ended")

// ErrStreamDone: the resumed stream has ended and the client has had all
// of it (204, which tells an SSE client to stop reconnecting).
var ErrStreamDone = errors.New("jsonrpc: the stream has ended and has no events after Last-Event-ID")

// ErrStreamGone refuses to resume a stream whose missed events were evicted.
var ErrStreamGone = errors.New("jsonrpc: the events after Last-Event-ID are no longer stored (StreamableHTTPOptions.EventStoreSize, or the EventStore's Limits)")

// Attach makes o the stream's response. With from set (a resumption), the
// stored events after from are written first; a POST's stream (Num not 0)
// refuses (with ErrStreamGone, before anything is written) when some of
// them were evicted. It reports whether the stream had ended (o then ends
// after the replay); else the response attached before is detached.
func (es *Stream) Attach(o *Out, from *uint64, withData bool) (ended bool, err error) {
	es.mu.Lock()
	defer es.mu.Unlock()
	var events []state.Event
	if from != nil && es.Shared != nil && es.Num == 0 {
		es.Shared.point = *from // the client has the events up to from: Hold writes the rest
	} else if from != nil {
		complete := true
		if es.Shared != nil {
			events, _, complete, _, err = es.Shared.read(context.Background(), *from)
		} else {
			events, complete = es.Store.after(es.Num, *from)
		}
		switch {
		case err != nil:
			return true, err
		case !complete && es.Num != 0:
			return false, ErrStreamGone
		case complete && len(events) == 0 && es.ended:
			return true, ErrStreamDone
		}
	}
	if es.start(o, nil, from == nil, withData) != nil || es.writeAll(o, events) != nil || es.ended {
		return true, nil
	}
	es.detachLocked()
	es.out = o
	es.flushLocked(o)
	return false, nil
}

// detachLocked lets the attached response go (es.mu held).
func (es *Stream) detachLocked() {
	if es.out != nil {
		close(es.out.done)
		es.out = nil
	}
}

// Detach lets the attached response go (its Hold returns) while the stream
// goes on: what is sent meanwhile is stored for a resumption.
func (es *Stream) Detach() {
	es.mu.Lock()
	es.detachLocked()
	es.mu.Unlock()
}

// End ends the stream: no more events; the attached response ends.
func (es *Stream) End() {
	es.mu.Lock()
	es.endShared()
	es.ended = true
	es.detachLocked()
	es.queue, es.queued = nil, 0
	es.mu.Unlock()
}

// Hold serves the attached response o until it is detached (the stream
// ended, or a newer response took over), stop closes, or the client goes
// away (ctx): it writes the outbox as messages come and, every keepAlive,
// a keep-alive comment unless something was written in the last half of
// it. It reports whether the client went away.
func (es *Stream) Hold(ctx context.Context, o *Out, stop <-chan struct{}) (gone bool) {
	defer func() {
		es.mu.Lock()
		if es.out == o { // not taken over
			es.detachLocked()
		}
		es.mu.Unlock()
		o.rc.SetWriteDeadline(time.Time{}) // the connection may serve other requests
	}()
	if es.Shared != nil {
		return es.holdShared(ctx, o, stop)
	}
	var t *time.Timer
	var tick <-chan time.Time
	if es.KeepAlive > 0 {
		t = keepAlives.Get().(*time.Timer)
		t.Reset(es.KeepAlive)
		defer func() { t.Stop(); keepAlives.Put(t) }()
		tick = t.C
	}
	for {
		select {
		case <-o.done:
			return false
		case <-stop:
			return false
		case <-ctx.Done():
			return true
		case <-es.wake:
			es.mu.Lock()
			es.flushLocked(o)
			es.mu.Unlock()
		case <-tick:
			es.keepAlive(o)
			t.Reset(es.KeepAlive)
		}
	}
}

// keepAlives recycles Hold's keep-alive timers: most responses held end
// before their first tick (a stale tick, where the program asks for Go
// 1.22's timers, only checks for idleness early).
var keepAlives = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

var keepAliveComment = []byte(": keep-alive\n\n")

// Open makes o the response of a POST's stream, before anything is written.
func (es *Stream) Open(o *Out) { es.out = o }

// Begin turns the attached response of a POST's stream into an event
// stream (see start; the stream is primed); a failed write detaches it.
func (es *Stream) Begin(header func(http.Header), withData bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.beginShared()
	if es.out == nil {
		return // the client went away before
	}
	if es.start(es.out, header, true, withData) != nil {
		es.detachLocked()
	}
}

// WithOutbox gives the standalone stream its outbox of maxQueue messages
// and maxBytes bytes.
func (es *Stream) WithOutbox(maxQueue, maxBytes int) *Stream {
	es.maxQueue, es.maxBytes, es.wake = maxQueue, maxBytes, make(chan struct{}, 1)
	return es
}

// Attached reports whether a response is attached.
func (es *Stream) Attached() bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.out != nil
}
