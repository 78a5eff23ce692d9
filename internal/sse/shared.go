package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// Shared is the place of a stream's events in a state.EventStore that the
// server's instances share, in place of its session's Store: each event is
// appended there before it is written, so that a GET with Last-Event-ID
// through any instance replays it, and follows a POST's stream still
// written on another instance (Follow) until its end.
//
// Besides the messages, a POST's stream stores records that are never
// written to a client: at its start a head (Head, the root's note of the
// calls it answers: the Follow of an instance that dies needs it), every
// Beat while nothing else was stored a heartbeat, and at its end an end
// record. A record's data starts with a zero byte, which no JSON-RPC
// message does.
type Shared struct {
	Store state.EventStore
	Name  string        // the stream's name in Store
	Head  []byte        // the data of the head record
	Beat  time.Duration // the heartbeat interval of a POST's stream (> 0)
	// Silent returns the messages that end a followed stream whose
	// instance fell silent, given its head and its messages so far.
	Silent func(head []byte, sent [][]byte) [][]byte

	// Under the stream's mu: the seq a priming event names, when the
	// stream last stored an event, whether a POST's stream stored its
	// head, and its heartbeat.
	point  uint64
	stored time.Time
	begun  bool
	beat   *time.Timer
}

// StoreTimeout bounds one operation on a shared store (as the session
// store's are): a store that does not answer fails the event, or the
// resumption, within it.
const StoreTimeout = 2 * time.Second

// The records of a POST's stream (see Shared).
const (
	recHead = "\x00head"
	recBeat = "\x00beat"
	recEnd  = "\x00end"
)

// isRecord reports whether data is a record, not a message.
func isRecord(data []byte) bool { return len(data) > 0 && data[0] == 0 }

// ErrNoStream refuses to follow a stream of which the store holds nothing.
var ErrNoStream = errors.New("jsonrpc: Last-Event-ID names no stream of this session")

// ErrStore is the error of a shared store that failed.
var ErrStore = errors.New("jsonrpc: the event store failed")

func storeError(err error) error { return fmt.Errorf("%w: %w", ErrStore, err) }

// append stores data as the stream's next event and returns its seq.
func (sh *Shared) append(data []byte) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
	defer cancel()
	seq, err := sh.Store.Append(ctx, sh.Name, data)
	if err != nil {
		return 0, storeError(err)
	}
	return seq, nil
}

// read returns the stream's events after seq: its messages, the seq of the
// last record of any kind (seq when none), whether they are all of them
// (see state.EventStore.After) and whether the end record is among them.
func (sh *Shared) read(ctx context.Context, seq uint64) (msgs []state.Event, last uint64, complete, end bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	evs, complete, err := sh.Store.After(ctx, sh.Name, seq)
	if err != nil {
		return nil, seq, false, false, storeError(err)
	}
	last = seq
	for _, e := range evs {
		last = e.Seq
		switch {
		case !isRecord(e.Data):
			msgs = append(msgs, e)
		case string(e.Data) == recEnd:
			end = true
		}
	}
	return msgs, last, complete, end, nil
}

// wait returns once the stream may hold an event after seq: with the
// store's Wait, or after PollInterval for a store without it.
func (sh *Shared) wait(ctx context.Context, seq uint64) error {
	if f, ok := sh.Store.(state.Follower); ok {
		return f.Wait(ctx, sh.Name, seq)
	}
	t := time.NewTimer(PollInterval)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PollInterval is how often Follow reads a store that is not a
// state.Follower.
const PollInterval = 100 * time.Millisecond

// keep stores msg as the stream's next event, if it keeps events, and
// returns its id (kept false when it was not stored: err says why, nil
// when the stream keeps no events).
func (es *Stream) keep(msg []byte) (id string, kept bool, err error) {
	switch {
	case es.Store != nil:
		return EventID(es.Num, es.Store.add(es.Num, msg)), true, nil
	case es.Shared != nil:
		seq, err := es.Shared.append(msg)
		if err != nil {
			return "", false, err
		}
		es.Shared.point, es.Shared.stored = seq, time.Now()
		return EventID(es.Num, seq), true, nil
	}
	return "", false, nil
}

// Keeps reports whether the stream's events are stored for resumption.
func (es *Stream) Keeps() bool { return es.Store != nil || es.Shared != nil }

// current is the seq a priming event names: the stream's point now.
func (es *Stream) current() uint64 {
	if es.Store != nil {
		return es.Store.last()
	}
	return es.Shared.point
}

// beginShared stores a POST's stream's head (its seq is the stream's
// starting point, which the priming event names) and starts its
// heartbeat (es.mu held). A head that cannot be stored leaves the point at
// 0, before every event of the stream.
func (es *Stream) beginShared() {
	sh := es.Shared
	if sh == nil || es.Num == 0 || sh.begun {
		return
	}
	sh.begun = true
	es.keep(append([]byte(recHead), sh.Head...))
	sh.beat = time.AfterFunc(sh.Beat, es.heartbeat)
}

// heartbeat stores a heartbeat record unless the stream stored something
// in the last half interval, so that a Follow elsewhere tells a stream
// that is quiet from one whose instance died.
func (es *Stream) heartbeat() {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.ended {
		return
	}
	if time.Since(es.Shared.stored) >= es.Shared.Beat/2 {
		es.keep([]byte(recBeat))
	}
	es.Shared.beat.Reset(es.Shared.Beat)
}

// endShared stores a POST's stream's end record, once, if it began (es.mu
// held).
func (es *Stream) endShared() {
	sh := es.Shared
	if sh == nil || !sh.begun || es.ended {
		return
	}
	sh.beat.Stop()
	es.keep([]byte(recEnd))
}

// Follow serves o with a POST's stream that this instance does not write
// (another instance does, or did): the stored events after From, then
// each event as it is stored, until the end record. When the stream
// stores nothing, not even a heartbeat, for three Beats, the instance
// writing it is taken for dead: the messages of Silent are stored and
// written, and the stream ends. Before anything is written it fails with
// ErrStreamGone (events after from evicted), ErrStreamDone (the stream
// ended and has nothing after from), ErrNoStream, or an ErrStore; a store
// that fails later ends the response with a comment saying so. withData:
// see start.
func (es *Stream) Follow(ctx context.Context, o *Out, from uint64, withData bool) error {
	sh := es.Shared
	defer o.rc.SetWriteDeadline(time.Time{}) // the connection may serve other requests
	msgs, last, complete, end, err := sh.read(ctx, from)
	switch {
	case err != nil:
		return err
	case !complete:
		return ErrStreamGone
	case end && len(msgs) == 0:
		return ErrStreamDone
	case last == from:
		_, stored, _, _, err := sh.read(ctx, 0)
		if err != nil {
			return err
		}
		if stored == 0 {
			return ErrNoStream
		}
	}
	if es.start(o, nil, false, withData) != nil || es.writeAll(o, msgs) != nil || end {
		return nil
	}
	es.follow(ctx, o, last)
	return nil
}

// follow writes the stream's events after last to o as they are stored
// (see Follow).
func (es *Stream) follow(ctx context.Context, o *Out, last uint64) {
	silence, heard := 3*es.Shared.Beat, time.Now()
	for {
		woke, err := es.waitFor(ctx, last, heard.Add(silence))
		var msgs []state.Event
		seen, end := last, false
		if err == nil && woke {
			msgs, seen, _, end, err = es.Shared.read(ctx, last)
		}
		switch {
		case ctx.Err() != nil:
			return // the client went away, or Shutdown
		case err != nil:
			es.write(o, storeComment(err))
			return
		case es.writeAll(o, msgs) != nil || end:
			return
		case seen > last:
			last, heard = seen, time.Now()
		}
		if time.Since(heard) >= silence {
			es.silent(ctx, o)
			return
		}
		if es.KeepAlive > 0 && time.Since(o.last) >= es.KeepAlive/2 && es.write(o, keepAliveComment) != nil {
			return
		}
	}
}

// waitFor waits until the stream may hold an event after last, at most
// until deadline or a KeepAlive: woke false when it timed out, err when
// the store failed.
func (es *Stream) waitFor(ctx context.Context, last uint64, deadline time.Time) (woke bool, err error) {
	d := time.Until(deadline)
	if es.KeepAlive > 0 {
		d = min(d, es.KeepAlive)
	}
	wctx, cancel := context.WithTimeout(ctx, max(d, time.Millisecond))
	defer cancel()
	err = es.Shared.wait(wctx, last)
	if err != nil && (wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) { // a store may see the deadline before the context's timer does
		return false, nil
	}
	return err == nil, err
}

// storeComment is the comment that ends a followed stream whose store
// failed: the client's next GET gets the error (503).
func storeComment(err error) []byte {
	return []byte(": " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n\n")
}

// writeAll writes stored events to o.
func (es *Stream) writeAll(o *Out, evs []state.Event) error {
	for _, e := range evs {
		if err := es.writeEvent(o, EventID(es.Num, e.Seq), e.Data); err != nil {
			return err
		}
	}
	return nil
}

// silent ends a stream whose instance fell silent: the messages of
// Silent (for the calls the stream has not answered) are stored, then the
// end record, and written.
func (es *Stream) silent(ctx context.Context, o *Out) {
	rctx, cancel := context.WithTimeout(ctx, StoreTimeout)
	defer cancel()
	all, _, err := es.Shared.Store.After(rctx, es.Shared.Name, 0)
	if err != nil {
		es.write(o, storeComment(storeError(err)))
		return
	}
	var head []byte
	var sent [][]byte
	for _, e := range all {
		if h, ok := bytes.CutPrefix(e.Data, []byte(recHead)); ok {
			head = h
		} else if !isRecord(e.Data) {
			sent = append(sent, e.Data)
		}
	}
	for _, msg := range es.Shared.Silent(head, sent) {
		id, _, _ := es.keep(msg)
		if es.writeEvent(o, id, msg) != nil {
			return
		}
	}
	es.keep([]byte(recEnd))
}

// With Shared, the standalone stream's outbox is the shared store: each
// message sent on any instance is appended to the stream there
// (enqueueShared), and the instance holding the session's GET writes the
// stream from the store in its order (holdShared), its own messages
// included, from its point: the seq of the last event written to a GET
// here (or the Last-Event-ID of a resumption). A GET opened without
// Last-Event-ID on an instance that never held one starts at the stream's
// first stored event.

// enqueueShared appends msg to the standalone stream in the shared store;
// it fails (ErrStore) when the store does within StoreTimeout.
func (es *Stream) enqueueShared(msg []byte) error {
	es.mu.Lock()
	ended := es.ended
	es.mu.Unlock()
	if ended {
		return ErrEnded
	}
	_, err := es.Shared.append(msg)
	return err
}

// holdShared is Hold with Shared: it writes the stream's events after its
// point to o as they are stored, until o is detached, stop closes or ctx
// ends (gone true); a store that fails ends o with a comment saying so.
func (es *Stream) holdShared(ctx context.Context, o *Out, stop <-chan struct{}) (gone bool) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-o.done:
		case <-stop:
		case <-fctx.Done():
		}
		cancel()
	}()
	for {
		es.mu.Lock()
		last := es.Shared.point
		es.mu.Unlock()
		woke, err := es.waitFor(fctx, last, time.Now().Add(time.Minute))
		if err == nil && woke {
			err = es.relayHeld(fctx, o, last)
		}
		switch {
		case fctx.Err() != nil:
			return ctx.Err() != nil
		case err != nil:
			es.mu.Lock()
			if es.out == o {
				es.write(o, storeComment(err))
				es.detachLocked()
			}
			es.mu.Unlock()
			return false
		}
		es.keepAlive(o)
	}
}

// relayHeld writes to o, while it is attached, the stream's events after
// last, and moves the point past them.
func (es *Stream) relayHeld(ctx context.Context, o *Out, last uint64) error {
	msgs, seen, _, _, err := es.Shared.read(ctx, last)
	if err != nil {
		return err
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.out != o || es.Shared.point != last {
		return nil // taken over (a newer GET here, or a resumption): it writes them
	}
	for _, e := range msgs {
		if es.writeEvent(o, EventID(es.Num, e.Seq), e.Data) != nil {
			es.detachLocked()
			return nil
		}
		es.Shared.point = e.Seq
	}
	es.Shared.point = max(es.Shared.point, seen)
	return nil
}

// keepAlive writes a keep-alive comment to o, while it is attached, unless
// something was written in the last half KeepAlive.
func (es *Stream) keepAlive(o *Out) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.KeepAlive > 0 && es.out == o && o.started && time.Since(o.last) >= es.KeepAlive/2 {
		if es.write(o, keepAliveComment) != nil {
			es.detachLocked()
		}
	}
}
