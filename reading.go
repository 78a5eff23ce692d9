package jsonrpc

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
	"github.com/seedhq/jsonrpc/internal/framing"
)

// Who reads a connection: its state machine and timer are connrt.ReadOwner;
// the reading (readLoop, readFor) and parking are here.
const (
	// overlapWindow: a connection whose calls overlapped this recently
	// keeps its read loop (a caller reading would mostly read for others).
	overlapWindow = 100 * time.Millisecond
	// quickRequest: while handlers take less, the read loop serves requests
	// with more input behind them itself, in turn (a goroutine switch would
	// cost more), and their replies leave together.
	quickRequest = 50 * time.Microsecond
)

// readOwner is a connection's read side: who reads, and the channel's
// optional read capabilities.
type readOwner struct {
	connrt.ReadOwner
	c *Conn

	interrupting atomic.Bool  // an InterruptRecv is under way (one at a time)
	served       atomic.Bool  // the peer sent a request or notification: reading never parks
	quick        atomic.Bool  // the last request timed (all but those served alone) took less than quickRequest
	inRecv       atomic.Int32 // goroutines in Recv, counted when checkOneReader is set

	lendID uint64 // the call whose response lendCheck chose to lend (the reading goroutine's)

	// Guarded by c.mu.
	overlapAt int64         // when a call was last made while others waited (Unix ns)
	window    time.Duration // overlapWindow (a field for tests)
}

// checkOneReader makes every Recv check that no other goroutine reads the
// same connection (set by the package's tests).
var checkOneReader bool

// interruptible and buffered look the channel's optional capabilities up
// when needed (an idle connection keeps no copy of them).
func (o *readOwner) interruptible() bool {
	_, ok := o.c.ch.(RecvInterrupter)
	return ok
}

func (o *readOwner) buffered() bool {
	b, ok := o.c.ch.(BufferedChannel)
	return ok && b.Buffered() > 0
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

// StartLoop starts a fresh read loop goroutine (connrt.Reader).
func (o *readOwner) StartLoop() { go o.c.readLoop() }

// Interrupt cuts the read in progress (or the next one), once at a time.
// It reports false when the channel cannot interrupt a read.
func (o *readOwner) Interrupt() bool {
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

// readLoop reads messages until the channel ends or reading is handed on;
// a request is served here or on a worker (see place).
func (c *Conn) readLoop() {
	o := &c.rd
	if o.waitInput() {
		return
	}
	for {
		if o.Grown() && !o.interruptible() && !o.buffered() {
			// A read that could not be moved later waits on a fresh (small) stack.
			o.Hand(o.Load(), connrt.Loop, true)
			return
		}
		data, err := o.recv()
		switch {
		case err == framing.ErrLent:
			c.lendMessage()
			continue
		case err != nil:
			if c.loopRecvFailed(err) {
				continue
			}
			return
		}
		t, draining := c.take(data)
		if t == nil {
			if o.loopTookOther() {
				continue
			}
			return
		}
		here, readOn := o.place(t, draining)
		w := t.inlineAt // served inline: the reading state meanwhile (0: not)
		if here {
			c.run(t, draining)
		}
		if !readOn {
			return
		}
		if w != 0 {
			if _, ok := o.Hand(w, connrt.Loop, false); !ok {
				return // reading was handed to a fresh loop while t was served
			}
		}
	}
}

// waitInput waits for input on an idle socket, on this goroutine's small
// starting stack, or hands the wait to the process's waiter, which starts a
// fresh loop when input comes: then it reports true, and the loop ends.
func (o *readOwner) waitInput() bool {
	w, ok := o.c.ch.(interface{ WaitInput(framing.Resumer) bool })
	return ok && w.WaitInput(o)
}

// loopRecvFailed handles an error of the read loop's read, and reports
// whether the loop reads on.
func (c *Conn) loopRecvFailed(err error) (readOn bool) {
	o := &c.rd
	if errors.Is(err, ErrRecvInterrupted) { // an idle refresh, or a caller's late cut
		o.interrupting.Store(false)
		o.Hand(o.Load(), connrt.Loop, true)
		return false
	}
	if c.recvFailed(err) {
		return true
	}
	o.Hand(o.Load(), connrt.Ended, false)
	c.finish(err)
	return false
}

// loopTookOther is the read loop's step after a message that needs no
// serving; it reports whether the loop reads on (false: reading parked).
func (o *readOwner) loopTookOther() (readOn bool) {
	if o.buffered() { // the calls the callers of responses make next leave together
		o.holder().HoldCalls()
		return true
	}
	return !o.park()
}

// place decides where the read loop's request t is served: here (inline,
// unless reading went to a fresh loop) when nothing else waits or requests
// are quick, else on a worker; readOn is false when this goroutine stops
// reading once it has served t (or at once, if it could not serve t inline).
func (o *readOwner) place(t *task, draining bool) (here, readOn bool) {
	hold := o.buffered()
	if hold {
		// More is waiting: replies are held until the input runs dry, and
		// the request is served here while requests have been quick.
		o.holder().Hold()
		if !o.quick.Load() {
			connrt.Go(func() { o.c.run(t, draining) })
			return false, true
		}
	} else if !o.interruptible() {
		// A fresh goroutine reads on: a read that cannot be interrupted
		// could not be moved off a stack a handler grew.
		o.Hand(o.Load(), connrt.Loop, true)
		o.holder().Release()
		return true, false
	}
	w, ok := o.Hand(o.Load(), connrt.Inline, false)
	if !ok {
		return false, false
	}
	t.inlineAt, t.alone = w, !hold
	if !hold {
		o.holder().Release() // (under the inline budget: the write may wait for the peer)
	}
	return true, true
}

// replyHolder is a channel that can hold its writes back (the stream): a
// read loop holds the replies to requests already read until its input runs
// dry (many replies per write), and releases them before anything that may
// make it wait; so does the channel before a read.
type replyHolder interface {
	Hold()
	HoldCalls() // hold the calls of the callers of responses read together
	Release()
	Flush() // release, and wait until everything queued is written
}

// holder is the channel's replyHolder, or noHold.
func (o *readOwner) holder() replyHolder {
	if h, ok := o.c.ch.(replyHolder); ok {
		return h
	}
	return noHold{}
}

// noHold is the replyHolder of a channel that cannot hold its writes.
type noHold struct{}

func (noHold) Hold()      {}
func (noHold) HoldCalls() {}
func (noHold) Release()   {}
func (noHold) Flush()     {}

// flushReplies writes what is held or queued before the connection closes
// (Shutdown, the peer's end of input); it gives up when ctx ends.
func (o *readOwner) flushReplies(ctx context.Context) {
	h := o.holder()
	if ctx.Done() == nil { // nothing can end the wait: flush inline
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

// park stops reading on a connection that has only made calls, when no
// call waits, nothing is buffered and no two calls overlapped within the
// window. It reports whether reading parked; the caller then stops
// reading. Calls register under c.mu, so a caller either is seen here or
// sees the park (takeOver).
func (o *readOwner) park() bool {
	if o.served.Load() || o.buffered() || o.c.subs.Load() != nil { // a subscriber's events must not wait
		return false
	}
	c := o.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending.Len() > 0 || c.closed || o.overlapAt != 0 && time.Now().UnixNano()-o.overlapAt < int64(o.window) {
		return false
	}
	_, ok := o.Hand(o.Load(), connrt.Parked, false)
	if ok {
		o.holder().Release() // nobody reads now: nothing may wait for the next read
	}
	return ok
}

// noteOverlap records, under c.mu, a call made while others wait.
func (o *readOwner) noteOverlap() {
	if o.c.pending.Len() > 0 {
		o.overlapAt = time.Now().UnixNano()
	}
}

// takeOver has a caller whose calls are sent read for their answers if
// reading is parked (or start a read loop, if it cannot).
func (o *readOwner) takeOver(ctx context.Context, calls ...*pendingCall) {
	if w := o.Load(); w.State() == connrt.Parked { // (with several callers, seldom)
		if _, ok := o.Hand(w, connrt.Caller, false); ok {
			o.readFor(ctx, calls)
		}
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
			o.Hand(o.Load(), connrt.Loop, true)
			return
		}
		stop = context.AfterFunc(ctx, func() { o.Interrupt() })
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
			o.Hand(o.Load(), connrt.Ended, false)
			go c.finish(err) // it waits for handlers: not on a caller's goroutine
			return
		}
		if t, draining := c.take(data); t != nil {
			connrt.Go(func() { c.run(t, draining) })
		}
	}
	if stop != nil {
		stop()
	}
	if !answered(calls) || !o.park() {
		o.Hand(o.Load(), connrt.Loop, true)
	}
}

// wake hands parked reading to a read loop (where a CallIter call's
// response is lent; a closed connection's loop finishes).
func (o *readOwner) wake() {
	if w := o.Load(); w.State() == connrt.Parked {
		o.Hand(w, connrt.Loop, true)
	}
}

// lendMessage lends the reader to the CallIter call whose response Recv has
// begun to read (lendCheck chose it) and waits until the call has read or
// discarded it (a call given up on has it discarded here; docs/streaming.md).
func (c *Conn) lendMessage() {
	l := c.ch.(lineLender)
	c.mu.Lock()
	p, ok := c.pending.Take(c.rd.lendID)
	c.mu.Unlock()
	if !ok {
		l.Discard()
	} else {
		m := &lentMessage{id: c.rd.lendID, l: l, done: make(chan struct{}), reader: true}
		p.ch <- callResult{lent: m}
		<-m.done
		l.Discard() // what a call that gave up left (nothing otherwise)
	}
	if l.InterruptsWhileLent() > 0 {
		c.rd.interrupting.Store(false) // the interrupt was spent on the borrower's read
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
