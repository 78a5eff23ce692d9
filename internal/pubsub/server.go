package pubsub

import (
	"strconv"
	"sync"
)

// Policy says what an Outbox does when its buffer is full. Its values are
// the jsonrpc package's OverflowPolicy values, which document them.
type Policy uint8

const (
	Block      Policy = iota // Push waits for room
	DropOldest               // the oldest event makes room; the next one sent says how many went
	Close                    // the subscription ends with ErrOverflow, after the events queued
)

// Subscriber is what an Outbox needs of the subscription it serves.
type Subscriber interface {
	// Send writes one notification to the client.
	Send(msg []byte) error
	// Ended is called once, with the outbox's lock held, when the
	// subscription ends; err is why (nil: its producer returned, or the
	// client unsubscribed).
	Ended(err error)
	// AppendError appends the JSON-RPC error object of the last
	// notification of a subscription ended by err.
	AppendError(b []byte, err error) []byte
	// Broken is called once Send has failed with err, after the
	// subscription has ended: the connection cannot be written.
	Broken(err error)
}

// Outbox is the bounded queue of one subscription's events on the server.
// A sender goroutine, started while there is something to send and the
// subscribe response has gone (Ready), writes them in order.
type Outbox struct {
	buffer int
	policy Policy
	prefix []byte // {"jsonrpc":"2.0","method":"…","params":{"subscription":"…"
	sub    Subscriber

	mu      sync.Mutex
	room    *sync.Cond // signalled when the queue shrinks or the subscription ends
	queue   [][]byte   // encoded events, oldest first
	dropped int64      // events dropped since the last one sent
	ready   bool       // the subscribe response has been sent
	sending bool       // a sender goroutine runs
	ended   bool       // no more events are taken
	final   []byte     // the error object sent after the queue, when the subscription ended with an error
	drop    bool       // the queue is discarded (unsubscribed, disconnected)
}

// Init readies o to hold up to buffer events under policy for sub. Each
// notification is prefix (the message up to the subscription id's closing
// quote) then the event or the error.
func (o *Outbox) Init(buffer int, policy Policy, prefix []byte, sub Subscriber) {
	o.buffer, o.policy, o.prefix, o.sub = buffer, policy, prefix, sub
	o.room = sync.NewCond(&o.mu)
}

// Push queues one encoded event, applying the overflow policy. It reports
// false, queuing nothing, once the subscription has ended.
func (o *Outbox) Push(raw []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for !o.ended && len(o.queue) >= o.buffer {
		switch o.policy {
		case Block:
			o.room.Wait()
		case DropOldest:
			o.queue[0] = nil
			o.queue = o.queue[1:]
			o.dropped++
		default: // Close
			o.endLocked(ErrOverflow, true)
			return false
		}
	}
	if o.ended {
		return false
	}
	o.queue = append(o.queue, raw)
	o.kick()
	return true
}

// kick starts the sender if there is something to send; o.mu is held.
func (o *Outbox) kick() {
	if o.ready && !o.sending && (len(o.queue) > 0 || o.final != nil) {
		o.sending = true
		go o.send()
	}
}

func (o *Outbox) isEnded() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ended
}

// Ready runs once the subscribe response is sent: events may follow.
func (o *Outbox) Ready() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ready = true
	o.kick()
}

// send writes the queued events in order until the queue is empty.
func (o *Outbox) send() {
	var msg []byte
	for {
		o.mu.Lock()
		if o.drop || (len(o.queue) == 0 && o.final == nil) {
			o.sending = false
			o.mu.Unlock()
			return
		}
		msg = append(msg[:0], o.prefix...)
		if len(o.queue) > 0 {
			if o.dropped > 0 {
				msg = append(msg, `,"dropped":`...)
				msg = strconv.AppendInt(msg, o.dropped, 10)
				o.dropped = 0
			}
			msg = append(msg, `,"result":`...)
			msg = append(msg, o.queue[0]...)
			o.queue[0] = nil
			o.queue = o.queue[1:]
			o.room.Signal()
		} else {
			msg = append(msg, `,"error":`...)
			msg = append(msg, o.final...)
			o.final = nil
		}
		o.mu.Unlock()
		msg = append(msg, "}}"...)
		if err := o.sub.Send(msg); err != nil {
			o.End(err, false)
			o.sub.Broken(err)
			return
		}
	}
}

// End ends the subscription: no more events are taken, and Subscriber.Ended
// is told. With deliver, the queued events are still sent (then the error,
// if any); without, they are discarded.
func (o *Outbox) End(err error, deliver bool) {
	o.mu.Lock()
	o.endLocked(err, deliver)
	o.mu.Unlock()
}

func (o *Outbox) endLocked(err error, deliver bool) {
	if o.ended {
		return
	}
	o.ended = true
	o.room.Broadcast()
	if deliver && err != nil {
		o.final = o.sub.AppendError(nil, err)
	}
	if !deliver {
		o.drop = true
		o.queue = nil
	}
	o.kick()
	o.sub.Ended(err)
}
