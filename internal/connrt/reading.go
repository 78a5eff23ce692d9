package connrt

import (
	"sync"
	"sync/atomic"
	"time"
)

// Budgets of the states in which a message of the peer is not read (a
// state is ended after one to two budgets: see ReadOwner).
const (
	// InlineBudget is how long a request served inline may hold up reading
	// before a fresh read loop takes over (a handler that calls its peer
	// hands reading on at once, since it waits for an answer).
	InlineBudget = time.Millisecond
	// ParkBudget is how long reading stays parked before a read loop
	// takes over: a message the peer sends between our calls (a
	// notification, a hang-up) waits no longer to be read. It is
	// InlineBudget: one timer bounds both states.
	ParkBudget = InlineBudget
	// IdleRefresh: a read goroutine that served requests inline has a grown
	// stack; once its connection has been idle this long, its read is
	// interrupted and a fresh goroutine waits in its place.
	IdleRefresh = time.Second
)

// ReadState is who reads.
type ReadState uint8

// The states (see ReadOwner).
const (
	Loop ReadState = iota
	Inline
	Caller
	Parked
	Ended
)

// ReadWord is a ReadState (low 8 bits) and the epoch of the change that
// set it (the other bits). A ReadWord is never zero once Hand has set it.
type ReadWord uint64

// State is w's state.
func (w ReadWord) State() ReadState { return ReadState(w & 0xff) }

// next is the word of the change from w to s.
func (w ReadWord) next(s ReadState) ReadWord { return (w&^0xff + 0x100) | ReadWord(s) }

// Reader is the connection's side of its ReadOwner.
type Reader interface {
	// StartLoop starts a fresh read loop goroutine.
	StartLoop()
	// Interrupt cuts the read in progress (or the next one); it reports
	// false when it cannot.
	Interrupt() bool
}

// ReadOwner says who reads a connection, and holds the timer that bounds the
// states in which nobody reads. It is set up by Init.
//
// At most one goroutine at a time reads a connection's channel, and its
// ReadOwner says which, in one of these states:
//
//	Loop    a read loop goroutine reads
//	Inline  the read loop's goroutine serves a request itself; it reads on when done
//	Caller  a goroutine that made a call reads for its own answer
//	Parked  nobody reads; the next caller, or the timer, takes reading over
//	Ended   the channel has ended
//
// Every change of state goes through ReadOwner.Hand, a compare-and-swap of the
// state and an epoch that each change increments, so that a late hand-off
// (a timer that fired as the handler returned) fails instead of starting a
// second reader. Hand is also the only place a read loop goroutine starts
// (Reader.StartLoop).
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
// lasts past its budget hands reading to a fresh read loop (after one to
// two budgets: a state that begins while the timer runs for an earlier one
// gets its budget when it fires, so a busy connection does not set the
// timer at each change, but has it fire once a budget); and a read
// loop whose goroutine served requests inline is replaced by a fresh one
// (on a small stack) once the connection has been idle for IdleRefresh
// (Reader.Interrupt cuts its read; the loop then hands on).
type ReadOwner struct {
	r     Reader
	word  atomic.Uint64 // a ReadWord
	grown atomic.Bool   // the loop's goroutine served a request inline: its stack may have grown

	tmu   sync.Mutex
	timer *time.Timer
	armed ReadWord    // the word the timer was set for
	bound atomic.Bool // the timer is set for a budget (not an idle refresh): Hand leaves it to fire
}

// Init sets the connection's side.
func (o *ReadOwner) Init(r Reader) { o.r = r }

// Load is the current word.
func (o *ReadOwner) Load() ReadWord { return ReadWord(o.word.Load()) }

// Grown reports whether the read loop's goroutine has served a request
// inline since it started (its stack may have grown).
func (o *ReadOwner) Grown() bool { return o.grown.Load() }

// Hand moves reading from w to the state to and returns the new word; ok
// is false when another change came first (w is stale), and nothing is
// done then. With fresh, a new read loop goroutine reads from now on.
func (o *ReadOwner) Hand(w ReadWord, to ReadState, fresh bool) (nw ReadWord, ok bool) {
	nw = w.next(to)
	if !o.word.CompareAndSwap(uint64(w), uint64(nw)) {
		return w, false
	}
	if to == Inline {
		o.grown.Store(true)
	}
	if (to == Inline || to == Parked) && !o.bound.Load() {
		o.arm(nw, InlineBudget) // else fire gives nw its budget when it comes
	}
	if fresh {
		o.grown.Store(false)
		o.r.StartLoop()
	}
	return nw, true
}

// arm sets the timer to fire after d for the state w, unless w is already gone.
func (o *ReadOwner) arm(w ReadWord, d time.Duration) {
	o.tmu.Lock()
	if o.Load() == w {
		o.armed = w
		o.bound.Store(d == InlineBudget)
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
func (o *ReadOwner) fire() {
	o.tmu.Lock()
	armed := o.armed
	o.bound.Store(false)
	o.tmu.Unlock()
	w := o.Load()
	if w != armed {
		// The state changed since. One nobody reads in gets its budget from
		// now; a loop whose goroutine served requests inline is looked at
		// again once it may have been idle long enough.
		switch s := w.State(); {
		case s == Inline || s == Parked:
			o.arm(w, InlineBudget)
		case s == Loop && o.grown.Load():
			o.arm(w, IdleRefresh)
		}
		return
	}
	switch w.State() {
	case Inline, Parked:
		o.Hand(w, Loop, true)
	case Loop:
		if o.grown.Load() {
			o.r.Interrupt() // the loop hands over to a fresh goroutine
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

// Stop stops the timer once reading has ended.
func (o *ReadOwner) Stop() {
	o.tmu.Lock()
	if o.timer != nil {
		o.timer.Stop()
	}
	o.tmu.Unlock()
}
