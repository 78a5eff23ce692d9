package jsonrpc

import (
	"sync"
	"sync/atomic"
	"time"
)

// A request that arrives with nothing else waiting to be read is served on
// the goroutine that read it, which then reads on: a fast handler's reply
// leaves with no goroutine switch at all. While it runs, nobody reads the
// connection, so a watchdog moves reading to a fresh goroutine when the
// handler runs longer than inlineBudget; a handler that calls its peer hands
// reading on at once (see yieldToken), since it waits for an answer.

// inlineBudget is how long a handler may hold up reading before reading
// moves to another goroutine.
const inlineBudget = time.Millisecond

// A read goroutine that served handlers has a grown stack. Once its
// connection has been idle for idleRefresh, the watchdog interrupts its
// read and a fresh goroutine, on a small stack, waits in its place, so an
// idle connection costs little memory.
const idleRefresh = time.Second

// Reading states of a task served inline.
const (
	inlineNone     = iota // not served inline
	inlineReading         // its goroutine reads again when it is done
	inlineHandedOn        // another goroutine reads now
	inlineDone            // it finished first and reads on
)

// handOn moves reading to a fresh goroutine, unless the task finished first.
func (t *task) handOn() {
	if t.inline.CompareAndSwap(inlineReading, inlineHandedOn) {
		go t.conn.readLoop()
	}
}

// serveInline serves t on the read goroutine. It reports whether this
// goroutine should read on (false: reading has moved elsewhere).
func (c *Conn) serveInline(t *task, draining bool) bool {
	t.started = time.Now().UnixNano()
	c.lastInline.Store(t.started)
	t.inline.Store(inlineReading)
	c.inlineTask.Store(t)
	if inlineCount.Add(1) == 1 {
		kickWatchdog()
	}
	c.run(t, draining)
	inlineCount.Add(-1)
	c.inlineTask.Store(nil)
	return t.inline.CompareAndSwap(inlineReading, inlineDone)
}

// inlineCount counts the tasks being served inline, on every connection.
var inlineCount atomic.Int64

// watch is the watchdog's registry of connections.
var watch = struct {
	mu      sync.Mutex
	conns   map[*Conn]struct{}
	running bool
	kick    chan struct{} // wakes the watchdog: inline work began, or a connection left
}{kick: make(chan struct{}, 1)}

// watchConn adds a connection to the watchdog's registry, or removes it.
func watchConn(c *Conn, add bool) {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	if !add {
		delete(watch.conns, c)
		kickWatchdog()
		return
	}
	if watch.conns == nil {
		watch.conns = make(map[*Conn]struct{})
	}
	watch.conns[c] = struct{}{}
	if !watch.running {
		watch.running = true
		go watchdog()
	}
}

// kickWatchdog wakes the watchdog if it sleeps.
func kickWatchdog() {
	select {
	case watch.kick <- struct{}{}:
	default:
	}
}

// watchdog hands reading on for handlers that run past inlineBudget and
// restarts reading parked for longer (reading.go). It ticks only while
// either is under way and exits when no connection is left.
func watchdog() {
	t := time.NewTicker(inlineBudget)
	defer t.Stop()
	idle := time.NewTimer(idleRefresh)
	defer idle.Stop()
	var lastSweep int64
	for {
		watch.mu.Lock()
		if len(watch.conns) == 0 {
			watch.running = false
			watch.mu.Unlock()
			return
		}
		now := time.Now().UnixNano()
		if inlineCount.Load() > 0 {
			deadline := now - int64(inlineBudget)
			for c := range watch.conns {
				if tk := c.inlineTask.Load(); tk != nil && tk.started < deadline {
					tk.handOn()
				}
			}
		}
		if parkedReads.Load() > 0 {
			deadline := now - int64(inlineBudget)
			for c := range watch.conns {
				c.unparkStale(deadline)
			}
		}
		if now-lastSweep >= int64(idleRefresh) {
			lastSweep = now
			for c := range watch.conns {
				if last := c.lastInline.Load(); last != 0 && now-last >= int64(idleRefresh) && c.inlineTask.Load() == nil {
					c.refreshReader()
				}
			}
		}
		watch.mu.Unlock()
		if inlineCount.Load() == 0 && parkedReads.Load() == 0 {
			// No handler runs inline and no reading is parked: wake for
			// the next, or for the next sweep of idle connections.
			idle.Reset(idleRefresh)
			select {
			case <-watch.kick:
			case <-idle.C:
			}
			continue
		}
		<-t.C
	}
}

// refreshReader interrupts the read of an idle connection whose read
// goroutine served handlers, so that a fresh goroutine reads in its place.
func (c *Conn) refreshReader() {
	if c.interruptRead() {
		c.lastInline.Store(0)
	}
}
