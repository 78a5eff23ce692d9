package chaos

import (
	"sync"
	"sync/atomic"
	"time"
)

// endpoint is one side of a proxied connection, message by message.
type endpoint interface {
	recv() ([]byte, error)
	// done gives back a message recv returned, once forwarded.
	done(msg []byte)
	// write writes msg with this side's framing; a write from a budget
	// that runs out writes what the budget allows and returns errCut.
	// Writes to one side are serialised by the caller.
	write(msg []byte, o *writeOpts) error
	slowDown() // read slowly from now on (SlowRead)
	close()
}

// writeOpts are a direction's write faults in force.
type writeOpts struct {
	budget int64 // CutAfterBytes: bytes left (-1: no budget)
	rate   int64 // Bandwidth: bytes a second for this write (0: none)
}

// conn is a connection through the proxy: the client's side and the
// target's, a pump each way.
type conn struct {
	p              *Proxy
	id             int64
	client, target endpoint
	methods        methods
	halfOpen       atomic.Bool
	closeOnce      sync.Once
	done           chan struct{}
	cmu            sync.Mutex // serialises writes to the client (its pump's, and Error's answers)
	tmu            sync.Mutex // and to the target
}

func newConn(p *Proxy, client, target endpoint) *conn {
	return &conn{p: p, id: p.conns.Add(1), client: client, target: target, done: make(chan struct{})}
}

// run pumps both ways until either side ends or the proxy closes.
func (c *conn) run() {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.pump(In, c.client, c.target, &c.tmu) }()
	go func() { defer wg.Done(); c.pump(Out, c.target, c.client, &c.cmu) }()
	select {
	case <-c.done:
	case <-c.p.closed:
		c.shut()
	}
	wg.Wait()
}

func (c *conn) shut() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.client.close()
		c.target.close()
	})
}

// route is one direction of a connection: where messages come from and go.
type route struct {
	dir      Dir
	src, dst endpoint
	dmu      *sync.Mutex // serialises writes to dst
	o        writeOpts
}

// pump forwards messages from src to dst in direction dir.
func (c *conn) pump(dir Dir, src, dst endpoint, dmu *sync.Mutex) {
	defer c.shut()
	r := &route{dir: dir, src: src, dst: dst, dmu: dmu, o: writeOpts{budget: -1}}
	for n := int64(1); ; n++ {
		msg, err := src.recv()
		if err != nil {
			return
		}
		if c.halfOpen.Load() {
			<-c.done
			return
		}
		f, in := c.p.decide(dir, msg, &c.methods)
		if f == nil {
			err := c.send(dst, dmu, msg, &r.o)
			src.done(msg)
			if err != nil {
				return
			}
			continue
		}
		c.p.event(f, dir, in, n, c.id)
		if !c.act(f, msg, in, r) {
			return
		}
	}
}

func (c *conn) send(dst endpoint, mu *sync.Mutex, b []byte, o *writeOpts) error {
	mu.Lock()
	defer mu.Unlock()
	return dst.write(b, o)
}

// act applies f to msg; it reports whether the pump goes on.
func (c *conn) act(f *Fault, msg []byte, in info, r *route) bool {
	out := msg
	switch f.Action {
	case Delay:
		if !c.p.sleep(f.delay(c.p.dice)) {
			return false
		}
	case Drop:
		return true
	case Cut:
		return false
	case HalfOpen:
		c.halfOpen.Store(true)
		<-c.done
		return false
	case Error:
		return c.answerError(f, in, r)
	case Dup:
		if c.send(r.dst, r.dmu, msg, &r.o) != nil {
			return false
		}
	case Reorder:
		out = reversed(msg)
	case Corrupt:
		out = corrupted(msg, c.p.dice.intn(max(len(msg), 1)))
	case CutAfterBytes:
		if r.o.budget < 0 {
			r.o.budget = f.N
		}
	case Bandwidth:
		o := r.o
		o.rate = f.N
		err := c.send(r.dst, r.dmu, out, &o)
		r.o.budget = o.budget
		return err == nil
	case SlowRead:
		r.src.slowDown()
	}
	return c.send(r.dst, r.dmu, out, &r.o) == nil
}

// answerError answers the requests in a message with errors: a request
// going in is answered to the client and not forwarded; a response going
// out is replaced.
func (c *conn) answerError(f *Fault, in info, r *route) bool {
	reply := errorReply(in.ids, f.Code, in.batch)
	if reply == nil {
		return true // a notification, or nothing to answer: dropped
	}
	to, mu := r.dst, r.dmu
	if r.dir == In {
		to, mu = r.src, &c.cmu
	}
	none := writeOpts{budget: -1}
	return c.send(to, mu, reply, &none) == nil
}

// paced writes b with write in chunks at rate bytes a second.
func paced(p *Proxy, b []byte, rate int64, write func([]byte) error) error {
	chunk := max(int(rate/20), 1)
	for len(b) > 0 {
		n := min(chunk, len(b))
		if err := write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 && !p.sleep(time.Duration(n)*time.Second/time.Duration(rate)) {
			return errCut
		}
	}
	return nil
}
