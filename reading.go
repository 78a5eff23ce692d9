package jsonrpc

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/workers"
)

// Who reads a connection.
//
// At most one goroutine at a time reads a connection's channel, and the
// connection's readOwner says which, in one of these states:
//
//	loop    a read loop goroutine reads (readLoop)
//	inline  the read loop's goroutine serves a request itself; it reads on when done
//	caller  a goroutine that made a call reads for its own answer (readFor)
//	parked  nobody reads; the next caller, or the timer, takes reading over
//	ended   the channel has ended
//
// Every change of state goes through readOwner.hand, a compare-and-swap
// of the state and an epoch that each change increments, so that a late
// hand-off (a timer that fired as the handler returned) fails instead of
// starting a second reader. hand is also the only place a read loop
// goroutine starts.
//
//	        serve inline                 a client's reading parks
//	loop ───────────────► inline   loop ───────────────────► parked
//	loop ◄─────────────── inline   loop ◄─── fresh ───────── parked  (the timer, Close)
//	     done (same goroutine)                 parked ─────► caller  (a caller takes over)
//	loop ◄──── fresh ──── inline             parked ◄────── caller  (answered)
//	  (the timer, a callback)   loop ◄─ fresh ─ caller  (ctx ended, or it may not park)
//	loop ◄──── fresh ──── loop (idle refresh)    loop, caller ──► ended
//
// One timer per connection (created when first needed) bounds the states
// in which nobody reads: a request served inline, or parked reading, that
// lasts past its budget hands reading to a fresh read loop; and a read
// loop whose goroutine served requests inline is replaced by a fresh one
// (on a small stack) once the connection has been idle for idleRefresh.

// Budgets of the states in which a message of the peer is not read.
const (
	// inlineBudget is how long a request served inline may hold up reading
	// before a fresh read loop takes over (a handler that calls its peer
	// hands reading on at once, since it waits for an answer).
	inlineBudget = time.Millisecond
	// parkBudget is how long reading stays parked before a read loop
	// takes over: a message the peer sends between our calls (a
	// notification, a hang-up) waits at most this long to be read.
	parkBudget = time.Millisecond
	// idleRefresh: a read goroutine that served requests inline has a grown
	// stack; once its connection has been idle this long, its read is
	// interrupted and a fresh goroutine waits in its place.
	idleRefresh = time.Second
	// overlapWindow: a connection whose calls overlapped this recently
	// keeps its read loop. With several callers at once, one of them
	// reading would mostly read for the others, and handing reading back
	// and forth costs more than the goroutine switch it saves.
	overlapWindow = 100 * time.Millisecond
	// quickRequest: while the handlers of requests take less than this,
	// the read loop also serves requests that have more input waiting
	// behind them itself, in turn, rather than on goroutines of their own:
	// a goroutine switch would cost more than the request, and their
	// replies leave together.
	quickRequest = 50 * time.Microsecond
)

type readState uint8

const (
	readLoop readState = iota
	readInline
	readCaller
	readParked
	readEnded
)

// readWord is a readState (low 8 bits) and the epoch of the change that
// set it (the other bits).
type readWord uint64

func (w readWord) state() readState { return readState(w & 0xff) }

// next is the word of the change from w to s.
func (w readWord) next(s readState) readWord { return (w&^0xff + 0x100) | readWord(s) }

// readOwner is a connection's read side: who reads, and the channel's
// optional read capabilities.
type readOwner struct {
	c     *Conn
	word  atomic.Uint64 // a readWord
	grown atomic.Bool   // the loop's goroutine served a request inline: its stack may have grown

	interrupting atomic.Bool  // an InterruptRecv is under way (one at a time)
	served       atomic.Bool  // the peer sent a request or notification: reading never parks
	quick        atomic.Bool  // the last request served took less than quickRequest
	inRecv       atomic.Int32 // goroutines in Recv, counted when checkOneReader is set

	lendID uint64 // the call whose response lendCheck chose to lend (the reading goroutine's)

	// Guarded by c.mu.
	overlapAt int64         // when a call was last made while others waited (Unix ns)
	window    time.Duration // overlapWindow (a field for tests)

	tmu   sync.Mutex
	timer *time.Timer
	armed readWord // the word the timer was set for
}

// checkOneReader makes every Recv check that no other goroutine reads the
// same connection (set by the package's tests).
var checkOneReader bool

func (o *readOwner) init(c *Conn) {
	o.c = c
	o.window = overlapWindow
}

// The channel's optional capabilities, looked up when needed (a
// connection keeps no copy of them: an idle one should be small).

func (o *readOwner) interruptible() bool {
	_, ok := o.c.ch.(RecvInterrupter)
	return ok
}

func (o *readOwner) buffered() bool {
	b, ok := o.c.ch.(BufferedChannel)
	return ok && b.Buffered() > 0
}

func (o *readOwner) load() readWord { return readWord(o.word.Load()) }

// hand moves reading from w to the state to and returns the new word; ok
// is false when another change came first (w is stale), and nothing is
// done then. With fresh, a new read loop goroutine reads from now on.
func (o *readOwner) hand(w readWord, to readState, fresh bool) (nw readWord, ok bool) {
	nw = w.next(to)
	if !o.word.CompareAndSwap(uint64(w), uint64(nw)) {
		return w, false
	}
	switch to {
	case readInline:
		o.grown.Store(true)
		o.arm(nw, inlineBudget)
	case readParked:
		o.arm(nw, parkBudget)
	}
	if fresh {
		o.grown.Store(false)
		go o.c.readLoop()
	}
	return nw, true
}

// arm sets the timer to fire after d for the state w, unless w is already gone.
func (o *readOwner) arm(w readWord, d time.Duration) {
	o.tmu.Lock()
	if o.load() == w {
		o.armed = w
		if o.timer == nil {
			o.timer = time.AfterFunc(d, o.fire)
		} else {
			o.timer.Reset(d)
		}
	}
	o.tmu.Unlock()
}

// fire is the timer: a state that outlasted its budget hands reading to a
// fresh read loop, and an idle loop on a grown stack is refreshed.
func (o *readOwner) fire() {
	o.tmu.Lock()
	armed := o.armed
	o.tmu.Unlock()
	w := o.load()
	if w != armed {
		// The state changed since. A loop whose goroutine served requests
		// inline is looked at again once it may have been idle long enough.
		if w.state() == readLoop && o.grown.Load() {
			o.arm(w, idleRefresh)
		}
		return
	}
	switch w.state() {
	case readInline, readParked:
		o.hand(w, readLoop, true)
	case readLoop:
		if o.grown.Load() {
			o.interrupt() // the loop hands over to a fresh goroutine (readLoop)
		}
		// Idle: nothing needs the timer until the next request served
		// inline, which makes a new one; an idle connection keeps none.
		o.tmu.Lock()
		if o.armed == w {
			o.timer = nil
		}
		o.tmu.Unlock()
	}
}

// stop stops the timer once reading has ended.
func (o *readOwner) stop() {
	o.tmu.Lock()
	if o.timer != nil {
		o.timer.Stop()
	}
	o.tmu.Unlock()
}

// recv reads the next message; only the goroutine that owns reading calls it.
func (o *readOwner) recv() ([]byte, error) {
	if checkOneReader {
		if o.inRecv.Add(1) != 1 {
			panic("jsonrpc: two goroutines read one connection")
		}
		defer o.inRecv.Add(-1)
	}
	return o.c.ch.Recv()
}

// interrupt cuts the read in progress (or the next one), once at a time.
// It reports false when the channel cannot interrupt a read.
func (o *readOwner) interrupt() bool {
	intr, ok := o.c.ch.(RecvInterrupter)
	if !ok || !o.interrupting.CompareAndSwap(false, true) {
		return false
	}
	if !intr.InterruptRecv() {
		o.interrupting.Store(false)
		return false
	}
	return true
}

// readLoop reads messages until the channel ends or reading is handed on.
// A request that arrives with nothing else waiting to be read is served
// right here, and reading goes on after it: a fast reply leaves with no
// goroutine switch. When more is waiting, the request goes to a worker and
// reading goes on at once.
func (c *Conn) readLoop() {
	o := &c.rd
	for {
		if o.grown.Load() && !o.interruptible() && !o.buffered() {
			// Requests were served here: a fresh goroutine (on a small
			// stack) waits in the read, which could not be moved later.
			o.hand(o.load(), readLoop, true)
			return
		}
		data, err := o.recv()
		if err == framing.ErrLent {
			c.lendMessage()
			continue
		}
		if err != nil {
			if errors.Is(err, ErrRecvInterrupted) {
				// An idle refresh, or a cut meant for a caller that has
				// stopped reading: a fresh goroutine reads on.
				o.interrupting.Store(false)
				o.hand(o.load(), readLoop, true)
				return
			}
			if c.recvFailed(err) {
				continue
			}
			o.hand(o.load(), readEnded, false)
			c.finish(err)
			return
		}
		t, draining := c.take(data)
		if t == nil {
			if o.buffered() {
				// Responses (or notifications) with more behind them: the
				// calls their callers make next are held to leave together.
				o.holdCalls()
				continue
			}
			if o.park() {
				return
			}
			continue
		}
		if o.buffered() {
			// More is waiting: its replies are held until the input runs
			// dry. The request is served here too while requests have been
			// quick (as a server that handles a read's worth of requests
			// in turn), otherwise on a goroutine of its own.
			o.holdReplies()
			if o.quick.Load() {
				if !o.serveInline(t, draining, true) {
					return
				}
				continue
			}
			workers.Go(func() { c.run(t, draining) })
			continue
		}
		if !o.interruptible() {
			// This goroutine serves the request and a fresh one reads on:
			// a read that cannot be interrupted could not be moved off a
			// stack a handler grew, so the reading goroutine stays small.
			o.hand(o.load(), readLoop, true)
			o.releaseReplies()
			c.run(t, draining)
			return
		}
		if !o.serveInline(t, draining, false) {
			return
		}
	}
}

// serveInline serves t on the read loop's goroutine, with its reply held
// back if hold (otherwise what was held goes out first). It reports whether
// this goroutine reads on (false: reading was handed to a fresh loop).
func (o *readOwner) serveInline(t *task, draining, hold bool) bool {
	w, ok := o.hand(o.load(), readInline, false)
	if !ok {
		return false
	}
	t.inlineAt = w
	if !hold {
		o.releaseReplies() // (under the inline budget: the write may wait for the peer)
	}
	o.c.run(t, draining)
	_, ok = o.hand(w, readLoop, false)
	return ok
}

// replyHolder is a channel that can hold its writes back (the stream): a
// read loop that dispatches requests already read holds their replies
// until its input runs dry (the channel releases them itself when it must
// wait for input), then they leave together, so that a pipelining peer gets
// many replies per write. The loop releases them before anything else that
// may make it wait: a request served inline, a concurrency token, unwritten
// replies to drain.
type replyHolder interface {
	Hold()
	HoldCalls() // hold the calls of the callers of responses read together
	Release()
	Flush() // release, and wait until everything queued is written
}

// holdReplies holds the channel's writes, if it can.
func (o *readOwner) holdReplies() {
	if h, ok := o.c.ch.(replyHolder); ok {
		h.Hold()
	}
}

// holdCalls holds the calls that the callers of responses delivered
// together make next, if the channel can.
func (o *readOwner) holdCalls() {
	if h, ok := o.c.ch.(replyHolder); ok {
		h.HoldCalls()
	}
}

// releaseReplies lets what holdReplies held go out.
func (o *readOwner) releaseReplies() {
	if h, ok := o.c.ch.(replyHolder); ok {
		h.Release()
	}
}

// flushReplies writes what is held or queued before the connection closes
// after answering everything (Shutdown, the peer's end of input); it gives
// up when ctx ends.
func (o *readOwner) flushReplies(ctx context.Context) {
	h, ok := o.c.ch.(replyHolder)
	if !ok {
		return
	}
	if ctx.Done() == nil {
		h.Flush()
		return
	}
	done := make(chan struct{})
	go func() { defer close(done); h.Flush() }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// handOn moves reading off the goroutine serving t inline, unless t was
// not served inline or is done already.
func (o *readOwner) handOn(t *task) {
	if t.inlineAt != 0 {
		o.hand(t.inlineAt, readLoop, true)
	}
}

// park stops reading on a connection that has only made calls, when no
// call waits, nothing is buffered and no two calls overlapped within the
// window. It reports whether reading parked; the caller then stops
// reading. Calls register under c.mu, so a caller either is seen here or
// sees the park (takeOver).
func (o *readOwner) park() bool {
	if o.served.Load() || o.buffered() {
		return false
	}
	c := o.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending.Len() > 0 || c.closed || o.overlapAt != 0 && time.Now().UnixNano()-o.overlapAt < int64(o.window) {
		return false
	}
	_, ok := o.hand(o.load(), readParked, false)
	if ok {
		o.releaseReplies() // nobody reads now: nothing may wait for the next read
	}
	return ok
}

// noteOverlap records, under c.mu, a call made while others wait.
func (o *readOwner) noteOverlap() {
	if o.c.pending.Len() > 0 {
		o.overlapAt = time.Now().UnixNano()
	}
}

// takeOver is called by a caller whose calls are registered and sent: if
// reading is parked, the caller reads for its answers (or, if it cannot,
// starts a read loop) before it waits for them.
func (o *readOwner) takeOver(ctx context.Context, calls ...*pendingCall) {
	w := o.load()
	if w.state() != readParked {
		return // the common case with several callers
	}
	if _, ok := o.hand(w, readCaller, false); ok {
		o.readFor(ctx, calls)
	}
}

// readFor reads on the calling goroutine until the calls have their
// results, then parks reading or hands it to a read loop. Requests read
// meanwhile go to workers. If ctx ends first, reading goes to a read loop;
// a channel that cannot interrupt its read is read this way only for
// contexts that cannot end.
func (o *readOwner) readFor(ctx context.Context, calls []*pendingCall) {
	c := o.c
	var stop func() bool
	if ctx.Done() != nil {
		if !o.interruptible() {
			o.hand(o.load(), readLoop, true)
			return
		}
		stop = context.AfterFunc(ctx, func() { o.interrupt() })
	}
	for !answered(calls) {
		data, err := o.recv()
		if err == framing.ErrLent {
			c.lendMessage() // another caller's CallIter response
			if ctx.Err() != nil {
				break // its interrupt may have gone to the borrower
			}
			continue
		}
		if err != nil {
			if errors.Is(err, ErrRecvInterrupted) {
				o.interrupting.Store(false)
				if ctx.Err() == nil {
					continue // not for us (a late idle refresh): read on
				}
				break
			}
			if c.recvFailed(err) {
				continue
			}
			if stop != nil {
				stop()
			}
			o.hand(o.load(), readEnded, false)
			go c.finish(err) // it waits for handlers: not on a caller's goroutine
			return
		}
		if t, draining := c.take(data); t != nil {
			workers.Go(func() { c.run(t, draining) })
		}
	}
	if stop != nil {
		stop()
	}
	if !answered(calls) || !o.park() {
		o.hand(o.load(), readLoop, true)
	}
}

// wake makes sure someone reads: parked reading goes to a read loop (a
// CallIter call waits for its response there rather than read for it,
// since its response may be lent to it).
func (o *readOwner) wake() {
	if w := o.load(); w.state() == readParked {
		o.hand(w, readLoop, true)
	}
}

// lendMessage lends the connection's reader to the CallIter call whose
// response Recv has begun to read (lendCheck chose it), and waits until
// that call has read it to its end or discarded it. A call given up on
// meanwhile has its response discarded here. Whoever reads the connection
// calls it; nothing else is read meanwhile (docs/streaming.md).
func (c *Conn) lendMessage() {
	l := c.ch.(lineLender)
	c.mu.Lock()
	p, ok := c.pending.Take(c.rd.lendID)
	c.mu.Unlock()
	if !ok {
		l.Discard()
	} else {
		m := &lentMessage{id: c.rd.lendID, l: l, done: make(chan struct{})}
		p.ch <- callResult{lent: m}
		<-m.done
	}
	if l.InterruptsWhileLent() > 0 {
		c.rd.interrupting.Store(false) // the interrupt was spent on the borrower's read
	}
}

// closed is called once the connection is closed: parked reading is
// handed to a read loop, which sees the channel closed and finishes.
func (o *readOwner) closed() {
	if w := o.load(); w.state() == readParked {
		o.hand(w, readLoop, true)
	}
}

// answered reports whether every call has its result.
func answered(calls []*pendingCall) bool {
	for _, p := range calls {
		if len(p.ch) == 0 {
			return false
		}
	}
	return true
}
