package framing

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/connrt"
)

// writer is a Stream's write side: it frames the messages sent, coalesces
// concurrent senders into few writes, and holds replies back while its
// reader dispatches what it read together (Hold, HoldCalls, Release,
// Flush). Its methods may be called by any number of goroutines at once.
type writer struct {
	rwc    io.ReadWriteCloser
	wto    time.Duration // write timeout (0: none)
	sock   *socketReader // TCP and unix sockets, read with no buffer held while waiting, written with no deadline when they take it all at once (idleread_unix.go)
	header bool          // Content-Length framing (guarded by wmu: decided by the reader)

	// the first writer writes, later ones queue behind it
	wmu      sync.Mutex
	queue    []byte // framed messages waiting for the writer
	spare    []byte
	writing  bool
	held     atomic.Int32 // what hold holds back (holdNone: nothing)
	waitMax  uint64       // the latest round a sender waits for (see writeQueue)
	flushing int          // flush calls waiting for the queue to empty
	taken    uint64       // rounds taken from the queue by a writer
	written  uint64       // rounds written
	werr     error
	wcond    *sync.Cond // made by the first wait: a stream whose senders never wait has none
}

// wait waits for a change of the write side's state (wmu held).
func (w *writer) wait() {
	if w.wcond == nil {
		w.wcond = sync.NewCond(&w.wmu)
	}
	w.wcond.Wait()
}

// broadcast wakes those that wait (wmu held).
func (w *writer) broadcast() {
	if w.wcond != nil {
		w.wcond.Broadcast()
	}
}

// Send frames msg and writes it. Concurrent senders are coalesced: while
// one goroutine writes, the others append to a queue that it writes in its
// next round, so many small responses leave in few system calls. Each
// sender returns once the round holding its bytes has been written.
func (w *writer) Send(msg []byte) error { return w.SendQueued(msg, nil) }

// SendQueued is Send that calls queued (when not nil) once msg is in the
// queue, before waiting for it to be written (see QueuedSender).
func (w *writer) SendQueued(msg []byte, queued func()) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	direct := len(msg) >= directWrite && !w.writing && len(w.queue) == 0
	if w.werr == nil && !direct {
		w.queue = w.frame(w.queue, msg)
	}
	if queued != nil {
		queued()
	}
	switch {
	case w.werr != nil:
		return w.werr
	case direct:
		return w.writeDirect(msg)
	case w.held.Load() != holdNone && len(w.queue) < maxHeld:
		return nil // written at release, with what follows it
	}
	mine := w.taken + 1 // the round that will carry these bytes
	w.waitMax = max(w.waitMax, mine)
	for w.writing && w.written < mine && w.werr == nil {
		w.wait()
	}
	if w.written < mine && w.werr == nil {
		w.writeQueue(mine) // nobody writes it: write it, and what follows
	}
	return w.werr
}

// dropBuffers lets the write queue's buffers go while nothing is queued
// (an idle connection keeps none; the next reply makes one).
func (w *writer) dropBuffers() {
	w.wmu.Lock()
	if len(w.queue) == 0 && !w.writing {
		w.queue, w.spare = nil, nil
	}
	w.wmu.Unlock()
}

// writeDirect writes a large message from msg itself rather than copy it
// into the queue (wmu held, released while writing; nobody is writing).
func (w *writer) writeDirect(msg []byte) error {
	w.writing = true
	w.taken++
	header := w.header
	w.wmu.Unlock()
	err := w.writeFramed(msg, header)
	w.wmu.Lock()
	w.written = w.taken
	if err != nil {
		w.werr = err
	}
	w.writing = false
	w.broadcast()
	return w.werr
}

// maxHeld bounds the bytes that hold keeps back: past it, sends write.
const maxHeld = 64 << 10

// What hold holds back (stream.held).
const (
	holdNone    int32 = iota
	holdReplies       // the replies to requests read together (hold)
	holdCalls         // the calls that callers of responses read together make next (holdCalls)
)

// Hold makes later sends queue their messages without writing them (and
// return), until Release or until Recv must wait for input: the replies to
// requests read together leave together in few writes.
func (w *writer) Hold() {
	if w.held.Load() == holdNone {
		w.held.Store(holdReplies)
	}
}

// HoldCalls is Hold for the calls the callers of responses just delivered
// will make: at Release, the goroutines ready to run (those callers) first
// queue their calls (runtime.Gosched), so that they leave in few writes.
func (w *writer) HoldCalls() { w.held.Store(holdCalls) }

// Release ends Hold. What was held is written on a goroutine of its own
// (unless a writer is at work: it writes the rest), so that the caller, the
// reader, never waits for the peer to read.
func (w *writer) Release() {
	switch w.held.Load() {
	case holdNone:
		return
	case holdCalls:
		if w.held.CompareAndSwap(holdCalls, holdReplies) {
			connrt.Go(func() {
				runtime.Gosched()
				w.held.Store(holdNone)
				w.writeHeld()
			})
		}
		return
	}
	if w.held.Swap(holdNone) == holdNone {
		return
	}
	w.wmu.Lock()
	flush := len(w.queue) > 0 && !w.writing && w.werr == nil
	w.wmu.Unlock()
	if flush {
		connrt.Go(w.writeHeld)
	}
}

// writeHeld writes the queue unless a writer is at work.
func (w *writer) writeHeld() {
	w.wmu.Lock()
	if len(w.queue) > 0 && !w.writing && w.werr == nil {
		w.writeQueue(0)
	}
	w.wmu.Unlock()
}

// Flush ends hold and returns once everything queued has been written (or
// the stream has failed).
func (w *writer) Flush() {
	w.held.Store(holdNone)
	w.wmu.Lock()
	defer w.wmu.Unlock()
	for (len(w.queue) > 0 || w.writing) && w.werr == nil {
		if !w.writing {
			w.writeQueue(0)
			continue
		}
		w.flushing++
		w.wait()
		w.flushing--
	}
}

// writeQueue writes the queue in rounds (w.wmu held, and released while
// writing) until it is empty, or until round mine is written and a sender
// waits to take over the rest.
func (w *writer) writeQueue(mine uint64) {
	w.writing = true
	for len(w.queue) > 0 && w.werr == nil {
		out := w.queue
		w.queue = w.spare[:0]
		w.taken++
		w.wmu.Unlock()
		err := w.write(out)
		w.wmu.Lock()
		w.written = w.taken
		if err != nil {
			w.werr = err
		}
		if cap(out) <= 64<<10 {
			w.spare = out[:0]
		} else {
			w.spare = nil
		}
		w.broadcast()
		if w.written >= mine && len(w.queue) > 0 && (w.waitMax > w.written || w.flushing > 0) {
			break // the rest is for a sender waiting for a later round, or Flush
		}
	}
	w.writing = false
	w.broadcast()
}

// directWrite is the size from which a message is written in place
// rather than copied into the write queue.
const directWrite = 64 << 10

// writeFramed writes msg with its frame around it, without copying it.
func (w *writer) writeFramed(msg []byte, header bool) error {
	if header {
		var h [40]byte
		if err := w.write(appendHeader(h[:0], len(msg))); err != nil {
			return err
		}
		return w.write(msg)
	}
	if err := w.write(msg); err != nil {
		return err
	}
	return w.write([]byte{'\n'})
}

// write writes p, failing when the peer accepts no bytes at all for the
// write timeout: what a socket takes at once with no deadline (tryWrite),
// the rest with a deadline where the connection has one, otherwise
// with a timer that closes the stream (p then goes in 64 KiB chunks, for
// the timer to see progress). Either is renewed whenever bytes go out, so
// the timeout bounds a stall, not a slow transfer.
func (w *writer) write(p []byte) error {
	if w.wto <= 0 {
		_, err := w.rwc.Write(p)
		return err
	}
	if p = p[w.tryWrite(p):]; len(p) == 0 {
		return nil
	}
	return w.writeTimed(p)
}

// writeTimed is write's deadline (or timer) path.
func (w *writer) writeTimed(p []byte) error {
	dl, ok := w.rwc.(interface{ SetWriteDeadline(time.Time) error })
	if ok && dl.SetWriteDeadline(time.Now().Add(w.wto)) != nil {
		ok = false // e.g. a file that does not support deadlines
	}
	var timer *time.Timer
	var stalled atomic.Bool
	chunk := len(p)
	if !ok {
		chunk = 64 << 10
		timer = time.AfterFunc(w.wto, func() { stalled.Store(true); w.rwc.Close() })
		defer timer.Stop()
	}
	for len(p) > 0 {
		n, err := w.rwc.Write(p[:min(len(p), chunk)])
		p = p[n:]
		timedOut := errors.Is(err, os.ErrDeadlineExceeded)
		if err != nil && !(timedOut && n > 0) {
			if timedOut || stalled.Load() {
				return fmt.Errorf("jsonrpc: write timed out after %s without progress: the peer is not reading: %w", w.wto, os.ErrDeadlineExceeded)
			}
			return err
		}
		if len(p) > 0 { // progress: renew
			if ok {
				dl.SetWriteDeadline(time.Now().Add(w.wto))
			} else {
				timer.Reset(w.wto)
			}
		}
	}
	if ok && w.sock != nil {
		dl.SetWriteDeadline(time.Time{}) // tryWrite writes with none: a stale one would fail it
	}
	return nil
}

func (w *writer) frame(dst, msg []byte) []byte {
	if w.header {
		return append(appendHeader(dst, len(msg)), msg...)
	}
	return append(append(dst, msg...), '\n')
}

func appendHeader(b []byte, n int) []byte {
	b = strconv.AppendInt(append(b, "Content-Length: "...), int64(n), 10)
	return append(b, "\r\n\r\n"...)
}
